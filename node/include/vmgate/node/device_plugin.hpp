#pragma once
// The kubelet device plugins of vmgate-node, as data: which host devices a node offers to VMs,
// under which resource names, how many, how healthy, what a container gets when the kubelet
// allocates one, and when a plugin must (re-)register. Follows KubeVirt's virt-handler device
// manager (pkg/virt-handler/device-manager/generic_device.go, device_controller.go and
// cmd/virt-handler's --max-devices). Pure: no files, sockets, threads or clocks; thread-safe.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"

namespace vmgate::node {

/// The resource-name prefix of every KubeVirt device: "devices.kubevirt.io/kvm".
inline constexpr std::string_view device_namespace = "devices.kubevirt.io";
/// The device-plugin API version a plugin registers with.
inline constexpr std::string_view api_version = "v1beta1";
/// The kubelet's registration socket, in the device-plugin directory.
inline constexpr std::string_view kubelet_socket_name = "kubelet.sock";
inline constexpr std::string_view default_device_plugin_dir = "/var/lib/kubelet/device-plugins";
/// virt-handler's --max-devices default: how many pods of a node may hold the device at once.
inline constexpr int default_max_devices = 1000;

/// One host device node offered as an extended resource.
struct DeviceKind {
  std::string_view name;       // "kvm": the resource is devices.kubevirt.io/<name>
  std::string_view host_path;  // "/dev/kvm"; the container sees it at the same path
  /// Opened and closed once before serving, so that the kernel loads the module behind it
  /// (tun, vhost-net, vhost-vsock auto-load on first access; KubeVirt's preOpen, false for the
  /// hypervisor device).
  bool pre_open = false;
};

/// kvm, tun, vhost-net, vhost-vsock: the permanent plugins of virt-handler plus vhost-vsock
/// (KubeVirt offers it behind the VSOCK feature gate; here the operator picks with --devices).
std::span<const DeviceKind> known_devices();

/// "kvm,tun" → those kinds in the given order. Errors: an empty list or entry, an unknown name
/// (the message lists the known ones), a name given twice.
Result<std::vector<DeviceKind>> parse_device_list(std::string_view list);

/// "devices.kubevirt.io/kvm".
std::string resource_name(const DeviceKind& kind);
/// "kubevirt-kvm.sock", KubeVirt's socket name, relative to the device-plugin directory.
std::string socket_name(const DeviceKind& kind);

enum class CgroupMode { v1, v2 };
/// "rw" under cgroup v1, "rwm" under cgroup v2, as virt-handler sets them (runc's eBPF device
/// filter of older runc releases needs "m" for access(2) on the node, pkg/virt-handler/vm.go).
std::string_view device_permissions(CgroupMode mode);

enum class Health { healthy, unhealthy };
/// "Healthy" / "Unhealthy", the kubelet's words.
std::string_view health_name(Health health);

/// The device nodes found on the node: host paths ("/dev/kvm") that exist under the device root.
struct DeviceScan {
  std::set<std::string, std::less<>> present;
};
/// Healthy exactly when the device node exists (KubeVirt watches the path, nothing more).
Health health_of(const DeviceKind& kind, const DeviceScan& scan);

/// One schedulable unit of a resource as ListAndWatch reports it.
struct AdvertisedDevice {
  std::string id;  // "kvm0" … "kvm999": the device name and an index, as KubeVirt's
  Health health = Health::healthy;
};
/// `count` units, all with the one device node's health (every unit shares it).
std::vector<AdvertisedDevice> advertised_devices(const DeviceKind& kind, int count, Health health);

/// A device node to create in the container (DeviceSpec).
struct DeviceSpec {
  std::string container_path;
  std::string host_path;
  std::string permissions;
  bool operator==(const DeviceSpec&) const = default;
};
/// What one container gets: the one device node, whatever number of units it asked for.
struct ContainerAllocation {
  std::vector<DeviceSpec> devices;
};
/// The Allocate answer for `containers` container requests: one allocation each, in order.
/// The device IDs asked for do not matter: every unit is the same device node, and a kubelet may
/// ask again for IDs from its checkpoint that an agent with a smaller --max-devices no longer
/// advertises (KubeVirt does not look at them either).
std::vector<ContainerAllocation> allocate(const DeviceKind& kind, std::string_view permissions, std::size_t containers);

/// A file's identity: a socket recreated at the same path is another file. The inode alone does
/// not tell: a file created right after one was unlinked often gets its inode number back, so
/// the change time (nanoseconds) is part of it.
struct FileId {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t change_seconds = 0;
  std::int64_t change_nanoseconds = 0;
  bool operator==(const FileId&) const = default;
};

/// What the agent knows of one plugin: the socket it serves on and the kubelet socket it last
/// registered with (nullopt: not serving / not registered).
struct PluginState {
  std::optional<FileId> serving;
  std::optional<FileId> registered_with;
};
/// What is in the device-plugin directory now.
struct SocketScan {
  std::optional<FileId> kubelet;  // kubelet.sock
  std::optional<FileId> plugin;   // this plugin's socket
};

enum class PluginAction {
  none,                // serving and registered with the running kubelet
  wait_for_kubelet,    // no kubelet.sock: nothing to register with (yet); a registration made
                       // with a kubelet that went away is void (forget registered_with)
  serve_and_register,  // not serving, or the socket is gone or replaced (the kubelet restarted and
                       // emptied its directory): serve on a new socket, then register
  register_again,      // still serving, but kubelet.sock is another file (or registration failed)
};
/// The next step for one plugin. KubeVirt restarts a plugin when its socket is removed; a new
/// kubelet.sock alone also means a new kubelet that has never heard of the plugin.
PluginAction plan_plugin(const PluginState& state, const SocketScan& scan);

}  // namespace vmgate::node
