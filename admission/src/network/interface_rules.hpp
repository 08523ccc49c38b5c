#pragma once
// Per-interface checks of pkg/network/admitter/netiface.go validateInterfacesFields that
// validate_interface_fields (interface_fields.cpp) runs in KubeVirt's order.
#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::validation {

/// validatePortRangesConfiguration: portRanges need the PortRangesSpec gate; on the pod network
/// they exclude ports, need masquerade, at most 10, TCP/UDP, 0 < start ≤ end < 65536, no overlap.
void validate_interface_port_ranges(const json::Value& interface, const FieldPath& interface_path, bool on_pod_network,
                                    const ClusterConfig& config, ErrorList& causes);
/// validateDHCPOptions: private options unique and in 224..254 (named by the spec's path, as
/// KubeVirt does), NTP servers IPv4.
void validate_interface_dhcp_options(const json::Value& interface, const FieldPath& interface_path,
                                     const FieldPath& spec_path, ErrorList& causes);

}  // namespace vmgate::admission::validation
