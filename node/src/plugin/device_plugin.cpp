#include "vmgate/node/device_plugin.hpp"

#include <algorithm>
#include <array>
#include <charconv>

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

// The unit index of "kvm17" for kind kvm, when it is one of the `count` units.
bool is_unit_of(const DeviceKind& kind, int count, std::string_view id) {
  if (!id.starts_with(kind.name)) {
    return false;
  }
  const std::string_view digits = id.substr(kind.name.size());
  if (digits.empty() || (digits.size() > 1 && digits.front() == '0')) {
    return false;
  }
  int index = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  return error == std::errc{} && end == digits.data() + digits.size() && index >= 0 && index < count;
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

Result<std::vector<ContainerAllocation>> allocate(const DeviceKind& kind, std::string_view permissions, int count,
                                                  std::span<const std::vector<std::string>> container_requests) {
  std::vector<ContainerAllocation> allocations;
  allocations.reserve(container_requests.size());
  for (const std::vector<std::string>& ids : container_requests) {
    if (ids.empty()) {
      return Error{"a container request for " + resource_name(kind) + " names no device"};
    }
    for (const std::string& id : ids) {
      if (!is_unit_of(kind, count, id)) {
        return Error{"unknown device \"" + id + "\" for " + resource_name(kind)};
      }
    }
    // Every unit is the same device node: the container gets it once, at the host's path.
    allocations.push_back({.devices = {{.container_path = std::string(kind.host_path),
                                        .host_path = std::string(kind.host_path),
                                        .permissions = std::string(permissions)}}});
  }
  return allocations;
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
