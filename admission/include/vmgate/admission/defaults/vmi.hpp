#pragma once
// Defaults of the VMI mutating webhook on CREATE (KubeVirt vmi-mutator.go ApplyNewVMIMutations,
// pkg/defaults/*.go, staging/src/kubevirt.io/api/core/v1/defaults.go). Each function is one
// KubeVirt defaulting step; apply_vmi_create_defaults runs them in KubeVirt's order.
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::defaults {

/// SetDefaultVirtualMachineInstanceSpec: architecture, machine type, CPU requests, guest memory,
/// CPU topology, containerDisk pull policies, eviction strategy, the default pod network and a
/// disk for every volume without one. Also run on the VM webhook's copy before requirements.
/// Error (→ 400): "slirp interface is deprecated as of v1.3".
std::optional<std::string> set_spec_defaults(json::Value& vmi_spec, const ClusterConfig& config,
                                             json::Allocator& allocator);

/// The default pod network alone (pkg/network/vmispec/defaults.go), used by the VM controller too.
std::optional<std::string> set_default_network_interface(json::Value& vmi_spec, const ClusterConfig& config,
                                                         json::Allocator& allocator);
/// A `{name}` disk for each volume without a disk or filesystem (pkg/util SetDefaultVolumeDisk).
void set_default_volume_disks(json::Value& vmi_spec, json::Allocator& allocator);

/// API object defaults (SetObjectDefaults_VirtualMachineInstance): firmware with a uuid
/// (derived from `uuid_seed`, see defaults/vm.hpp), features.acpi enabled, disk targets, CD-ROM
/// readonly/tray, input usb/tablet, probes, timer and feature-state `enabled: true`.
void set_object_defaults(json::Value& vmi_spec, std::string_view uuid_seed, json::Allocator& allocator);

/// Per-architecture defaults: amd64 sata buses and i6300esb watchdog action; arm64 EFI
/// (secureBoot false), host-passthrough and virtio buses; s390x virtio buses. At v1.8 secureBoot
/// false only on the EFI bootloader it creates, not on one the VMI gives.
void set_arch_defaults(json::Value& vmi_spec, json::Allocator& allocator, Release release = newest_release);

/// LiveUpdate rollout: cpu.maxSockets and, when memory hotplug is possible, memory.maxGuest.
void set_hotplug_defaults(json::Value& vmi_spec, const ClusterConfig& config, json::Allocator& allocator);

/// The whole VMI CREATE mutation, including metadata (finalizer, PCI topology annotation) and
/// status (phase Pending, runtimeUser, memory, currentCPUTopology, and the Pending transition at
/// `now` when the caller gives one: admission has no clock).
std::optional<std::string> apply_vmi_create_defaults(json::Value& vmi, std::string_view namespace_name,
                                                     const ClusterConfig& config, std::string_view now,
                                                     json::Allocator& allocator);

}  // namespace vmgate::admission::defaults
