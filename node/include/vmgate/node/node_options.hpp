#pragma once
// The command line of `vmgate-node`. Pure; thread-safe.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/node/device_plugin.hpp"

namespace vmgate::node {

/// --subresource-listen: an IP address (IPv6 without its brackets) and a port (0: any, tests).
struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
  bool operator==(const ListenAddress&) const = default;
};

/// "0.0.0.0:8186", "[::1]:0". Errors: no port, a port outside 0..65535, an IPv6 address
/// without brackets. The address itself is checked where it is bound.
Result<ListenAddress> parse_listen_address(std::string_view text);

struct NodeOptions {
  std::string device_plugin_dir{default_device_plugin_dir};  // where kubelet.sock and our sockets live
  std::vector<DeviceKind> devices;                           // default: all known_devices()
  /// Where the node's /dev is seen from: health checks and pre-opens look at dev_root + host path.
  /// "" is the agent's own root; a DaemonSet pod mounts the host's /dev (KubeVirt reads
  /// /proc/1/root instead); tests point it at a directory of fake device files.
  std::string dev_root;
  int max_devices = default_max_devices;
  /// The node this agent runs on (--node-name, else $NODE_NAME, filled in by main): with it, the
  /// agent labels the Node (node_labeller.hpp), reports its launcher pods' VMI status and builds
  /// their pod networks (launcher_pods.hpp). Empty: device plugins only.
  std::string node_name;
  /// The API: a kubeconfig file; empty: the pod's service account.
  std::string kubeconfig;
  std::string kubevirt_namespace = "kubevirt";  // whose KubeVirt CR counts
  bool use_emulation = false;                   // query libvirt for TCG (virttype qemu)
  std::string libvirt_root = "/var/run/vmgate-node/libvirt";
  int label_interval_seconds = 180;              // virt-handler's 3 minutes
  std::string kubelet_root{"/var/lib/kubelet"};  // pods/<uid>/volumes/... below it
  std::string cgroup_root{"/sys/fs/cgroup"};     // where a pod's processes are found
  std::string proc_root{"/proc"};                // the node's /proc (hostPID)
  bool pod_network = true;                       // --no-pod-network: status only
  /// The subresource endpoint (docs/node.md, "The subresource endpoint"): off without
  /// --subresource-listen; with it, the three files are required.
  std::optional<ListenAddress> subresource_listen;
  std::string subresource_tls_cert;
  std::string subresource_tls_key;
  std::string subresource_client_ca;
  std::string subresource_client_name{"vmgate-subresources"};
  bool help = false;
};

/// Parses the arguments after the program name. Errors: unknown options, missing values, an
/// unknown device, --max-devices outside 1..1000000, --label-interval outside 1..86400, a bad
/// --subresource-listen, --subresource-listen without its three files or files without it.
Result<NodeOptions> parse_node_options(std::span<const std::string_view> args);

/// The --help text.
std::string node_usage();

}  // namespace vmgate::node
