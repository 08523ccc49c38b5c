#include "vmgate/node/device_plugin.hpp"

#include <algorithm>
#include <array>

namespace vmgate::node {

namespace {

// KubeVirt: PermanentHostDevicePlugins (the hypervisor device is not pre-opened) and the
// feature-gated generic devices (vhost-vsock, pre-opened).
constexpr std::array<DeviceKind, 4> kinds{{
    {.name = "kvm", .host_path = "/dev/kvm", .pre_open = false},
    {.name = "tun", .host_path = "/dev/net/tun", .pre_open = true},
    {.name = "vhost-net", .host_path = "/dev/vhost-net", .pre_open = true},
    {.name = "vhost-vsock", .host_path = "/dev/vhost-vsock", .pre_open = true},
}};

std::string known_names() {
  std::string names;
  for (const DeviceKind& kind : kinds) {
    names += names.empty() ? "" : ", ";
    names += kind.name;
  }
  return names;
}

}  // namespace

std::span<const DeviceKind> known_devices() {
  return kinds;
}

Result<std::vector<DeviceKind>> parse_device_list(std::string_view list) {
  std::vector<DeviceKind> chosen;
  if (list.empty()) {
    return Error{"no devices given (known: " + known_names() + ")"};
  }
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) {
      return Error{"empty device name in \"" + std::string(list) + "\""};
    }
    const auto* kind =
        std::find_if(kinds.begin(), kinds.end(), [name](const DeviceKind& known) { return known.name == name; });
    if (kind == kinds.end()) {
      return Error{"unknown device \"" + std::string(name) + "\" (known: " + known_names() + ")"};
    }
    if (std::any_of(chosen.begin(), chosen.end(), [name](const DeviceKind& seen) { return seen.name == name; })) {
      return Error{"device \"" + std::string(name) + "\" given twice"};
    }
    chosen.push_back(*kind);
  }
  return chosen;
}

std::string resource_name(const DeviceKind& kind) {
  return std::string(device_namespace) + "/" + std::string(kind.name);
}

std::string socket_name(const DeviceKind& kind) {
  return "kubevirt-" + std::string(kind.name) + ".sock";
}

std::string_view device_permissions(CgroupMode mode) {
  return mode == CgroupMode::v2 ? "rwm" : "rw";
}

std::string_view health_name(Health health) {
  return health == Health::healthy ? "Healthy" : "Unhealthy";
}

Health health_of(const DeviceKind& kind, const DeviceScan& scan) {
  return scan.present.contains(kind.host_path) ? Health::healthy : Health::unhealthy;
}

std::vector<AdvertisedDevice> advertised_devices(const DeviceKind& kind, int count, Health health) {
  std::vector<AdvertisedDevice> devices;
  devices.reserve(static_cast<std::size_t>(std::max(count, 0)));
  for (int index = 0; index < count; ++index) {
    devices.push_back({.id = std::string(kind.name) + std::to_string(index), .health = health});
  }
  return devices;
}

std::vector<ContainerAllocation> allocate(const DeviceKind& kind, std::string_view permissions,
                                          std::size_t containers) {
  // The container sees the node at the host's path (KubeVirt's generic device plugin).
  const DeviceSpec spec{.container_path = std::string(kind.host_path),
                        .host_path = std::string(kind.host_path),
                        .permissions = std::string(permissions)};
  return std::vector<ContainerAllocation>(containers, ContainerAllocation{.devices = {spec}});
}

PluginAction plan_plugin(const PluginState& state, const SocketScan& scan) {
  if (!scan.kubelet) {
    return PluginAction::wait_for_kubelet;
  }
  if (!state.serving || scan.plugin != state.serving) {
    return PluginAction::serve_and_register;
  }
  if (state.registered_with != scan.kubelet) {
    return PluginAction::register_again;
  }
  return PluginAction::none;
}

}  // namespace vmgate::node
