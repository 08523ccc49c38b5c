#pragma once
// The pod network of a launcher pod, as data (docs/node.md, "Pod network"): what KubeVirt's
// virt-handler builds in the pod's network namespace before the domain starts, for a VMI
// interface on the pod network (`networks[].pod`) with the bridge or masquerade binding: the
// in-pod bridge k6t-eth0, the tap tap0 QEMU attaches to (libvirt's `managed='no'`), and for
// masquerade the gateway addresses and the NAT rules (nftables). Follows KubeVirt
// pkg/network/setup/netpod (netpod.go: bridgeBindingSpec, masqueradeBindingSpec,
// calcQueuesCapByIface), pkg/network/setup/netpod/masquerade (the rules), pkg/network/link
// (names, StaticMasqueradeBridgeMAC) and pkg/network/driver/nmstate (the order of the steps).
// The VMI is the tenant's: every value used is checked here, where it is used.
// Pure: no files, sockets, threads or clocks; thread-safe.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::node {

enum class PodBinding { bridge, masquerade };

/// An IPv4 or IPv6 prefix: the address bytes (4 or 16 used) and the prefix length.
struct IpPrefix {
  bool ipv6 = false;
  std::array<std::uint8_t, 16> address{};
  int length = 0;
  bool operator==(const IpPrefix&) const = default;
};

/// "10.0.2.0/24", "fd10:0:2::/120" → the prefix, host bits cleared. Errors: not an address and a
/// length, a length outside 0..32 / 0..128.
Result<IpPrefix> parse_prefix(std::string_view text);
/// The address `offset` after the prefix's network address (1: the gateway, 2: the guest), with
/// the prefix's length.
IpPrefix nth_address(const IpPrefix& prefix, std::uint8_t offset);
/// "10.0.2.1" (no length).
std::string address_text(const IpPrefix& address);

struct ForwardedPort {
  std::string protocol;  // "tcp", "udp" or "sctp"
  int port = 0;          // 1..65535
  bool operator==(const ForwardedPort&) const = default;
};

/// The largest number of queues a tap takes (the kernel's MAX_TAP_QUEUES).
inline constexpr int max_tap_queues = 256;
/// The most `ports` of one interface the agent turns into rules (KubeVirt sets no limit; every
/// port is two nft rules and a tenant writes the list).
inline constexpr std::size_t max_forwarded_ports = 1024;

struct PodNetworkPlan {
  PodBinding binding = PodBinding::masquerade;
  std::string network;                 // the VMI's network (and interface) name
  std::size_t interface_index = 0;     // its position in spec.domain.devices.interfaces
  std::string pod_interface = "eth0";  // the pod's primary interface (namescheme)
  std::string bridge = "k6t-eth0";     // link.GenerateBridgeName
  std::string tap = "tap0";            // link.GenerateTapDeviceName for the pod network
  /// Queues of the tap: >1 makes it multi-queue (networkInterfaceMultiqueue with a virtio model
  /// and more than one vCPU: one queue per vCPU, as the launcher's <driver queues/>); 0 otherwise.
  int queues = 0;
  std::vector<ForwardedPort> ports;  // masquerade: empty forwards everything
  IpPrefix vm_ipv4;                  // pod.vmNetworkCIDR, default 10.0.2.0/24
  IpPrefix vm_ipv6;                  // pod.vmIPv6NetworkCIDR, default fd10:0:2::/120
};

/// The plan for `vmi` (a VirtualMachineInstance object), or nullopt when no interface on the pod
/// network has the bridge or masquerade binding (nothing to build: slirp, passt, SR-IOV, a
/// binding plugin, an interface marked absent, or no pod network). Errors (with field paths):
/// a pod network without an interface of its name, a port outside 1..65535 or a protocol other
/// than TCP, UDP or SCTP, more than max_forwarded_ports ports, a vmNetworkCIDR that is not a
/// prefix with room for a gateway and a guest, more than max_tap_queues vCPUs for a multi-queue
/// tap.
Result<std::optional<PodNetworkPlan>> plan_pod_network(const json::Value& vmi);

/// KubeVirt's masquerade rules for the address families the pod has, as one `nft -f` script:
/// table `nat` with chains prerouting, input, output, postrouting (nat hooks at KubeVirt's
/// priorities), KUBEVIRT_PREINBOUND and KUBEVIRT_POSTINBOUND; the guest's traffic masqueraded,
/// inbound traffic on the pod interface sent to the guest (only `ports` when there are any),
/// and the pod's loopback forwarded to it too. Those six chains are flushed before the rules
/// are added, so running the script again leaves the same rules (iptables-nft's chains are
/// upper-case PREROUTING..., another table's are untouched). nft applies the script atomically.
std::string masquerade_nft_script(const PodNetworkPlan& plan, bool ipv4, bool ipv6);

/// KubeVirt's fixed MAC of a masquerade bridge (link.StaticMasqueradeBridgeMAC).
inline constexpr std::array<std::uint8_t, 6> masquerade_bridge_mac{0x02, 0, 0, 0, 0, 0};
/// The bridge binding's address on the bridge, 169.254.75.1 followed by the interface index
/// (bridgeFakeIPBase), /32.
IpPrefix bridge_fake_address(std::size_t interface_index);

}  // namespace vmgate::node
