// Reads/writes the VMI spec fields that pkg/defaults/defaults.go SetDefaultVirtualMachineInstanceSpec
// defaults: architecture, domain.machine.type, domain.resources.requests.cpu, domain.memory.guest,
// domain.cpu.{sockets,cores,threads}, volumes[*].containerDisk.imagePullPolicy, evictionStrategy,
// networks / domain.devices.interfaces, domain.devices.disks.
#include <algorithm>
#include <unordered_set>

#include "vmgate/admission/defaults/vmi.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::defaults {

namespace {

using json::Allocator;
using json::Value;

void set_architecture(Value& spec, const ClusterConfig& config, Allocator& allocator) {
  if (spec::empty_string(spec, "architecture")) {
    json::set_string(spec, "architecture", config.default_architecture, allocator);
  }
}

void set_machine_type(Value& spec, const ClusterConfig& config, Allocator& allocator) {
  const std::string type = config.machine_type_for(json::find_string(spec, "architecture"));
  Value& machine = json::ensure_object(spec::domain(spec, allocator), "machine", allocator);
  if (spec::empty_string(machine, "type")) {
    json::set_string(machine, "type", type, allocator);
  }
}

void set_resource_requests(Value& spec, const ClusterConfig& config, Allocator& allocator) {
  Value& domain = spec::domain(spec, allocator);
  const std::optional<Quantity> limit = resource_quantity(domain, "limits", "cpu");
  const std::optional<Quantity> request = resource_quantity(domain, "requests", "cpu");
  if (limit && !limit->is_zero() && (!request || request->is_zero())) {
    Value& requests = json::ensure_object(json::ensure_object(domain, "resources", allocator), "requests", allocator);
    const Value* limit_value = json::find_path(domain, {"resources", "limits", "cpu"});
    json::set(requests, "cpu", json::copy(*limit_value, allocator), allocator);
  }
  // A cluster cpuRequest other than the 100m default is added unless CPUs are dedicated.
  if (!config.cpu_request.empty()) {
    Result<Quantity> cluster_request = Quantity::parse(config.cpu_request);
    Result<Quantity> default_request = Quantity::parse("100m");
    if (cluster_request && default_request && !(*cluster_request == *default_request)) {
      const Value* requests = json::find_path(domain, {"resources", "requests"});
      const bool exists = requests != nullptr && json::find(*requests, "cpu") != nullptr;
      const Value* cpu = json::find_object(domain, "cpu");
      if (!exists && !(cpu != nullptr && spec::is_true(*cpu, "dedicatedCpuPlacement"))) {
        Value& target = json::ensure_object(json::ensure_object(domain, "resources", allocator), "requests", allocator);
        json::set_string(target, "cpu", cluster_request->to_string(), allocator);
      }
    }
  }
}

void set_guest_memory(Value& spec, Allocator& allocator) {
  Value& domain = spec::domain(spec, allocator);
  if (const Value* memory = json::find_object(domain, "memory"); memory != nullptr && json::has(*memory, "guest")) {
    return;
  }
  json::ensure_object(domain, "memory", allocator);
  std::optional<std::string> guest;
  if (std::optional<Quantity> request = resource_quantity(domain, "requests", "memory");
      request && !request->is_zero()) {
    guest = request->to_string();
  } else if (std::optional<Quantity> limit = resource_quantity(domain, "limits", "memory");
             limit && !limit->is_zero()) {
    guest = limit->to_string();
  } else if (const Value* hugepages = json::find_path(domain, {"memory", "hugepages"});
             hugepages != nullptr && hugepages->IsObject()) {
    if (Result<Quantity> page = Quantity::parse(json::find_string(*hugepages, "pageSize")); page) {
      guest = page->to_string();
    }
  }
  if (guest) {
    json::set_string(*json::find(domain, "memory"), "guest", *guest, allocator);
  }
}

void set_cpu_topology(Value& spec, Allocator& allocator) {
  Value& domain = spec::domain(spec, allocator);
  const Value* cpu = json::find_object(domain, "cpu");
  if (cpu != nullptr && (spec::uint_or_zero(*cpu, "cores") != 0 || spec::uint_or_zero(*cpu, "sockets") != 0 ||
                         spec::uint_or_zero(*cpu, "threads") != 0)) {
    return;
  }
  // All vCPUs go to sockets, which performs best (KubeVirt cites bugzilla 1653453).
  std::int64_t sockets = 1;
  const Value* limits = json::find_path(domain, {"resources", "limits"});
  const Value* requests = json::find_path(domain, {"resources", "requests"});
  std::optional<Quantity> count;
  if (limits != nullptr && json::find(*limits, "cpu") != nullptr) {
    count = quantity_at(*limits, "cpu");
  } else if (requests != nullptr && json::find(*requests, "cpu") != nullptr) {
    count = quantity_at(*requests, "cpu");
  }
  if (count) {
    // Go: uint32(Quantity.Value()), which wraps; vmgate clamps to uint32 instead.
    if (Result<std::int64_t> value = count->value(); value) {
      sockets = std::clamp<std::int64_t>(*value, 0, 4294967295LL);
    }
  }
  Value& target = json::ensure_object(domain, "cpu", allocator);
  if (sockets != 0) {  // a CPU count of 0 leaves sockets 0, which KubeVirt's omitempty drops
    json::set(target, "sockets", Value(static_cast<std::uint64_t>(sockets)), allocator);
  }
  json::set(target, "cores", Value(1U), allocator);
  json::set(target, "threads", Value(1U), allocator);
}

void set_pull_policies(Value& spec, Allocator& allocator) {
  Value* volumes = json::find(spec, "volumes");
  if (volumes == nullptr || !volumes->IsArray()) {
    return;
  }
  for (Value& volume : volumes->GetArray()) {
    Value* disk = json::find(volume, "containerDisk");
    if (disk == nullptr || !disk->IsObject() || !spec::empty_string(*disk, "imagePullPolicy")) {
      continue;
    }
    const std::string_view image = json::find_string(*disk, "image");
    const bool latest = image.size() >= 7 && image.substr(image.size() - 7) == ":latest";
    const bool untagged = image.find_first_of(":@") == std::string_view::npos;
    json::set_string(*disk, "imagePullPolicy", latest || untagged ? "Always" : "IfNotPresent", allocator);
  }
}

void set_eviction_strategy(Value& spec, const ClusterConfig& config, Allocator& allocator) {
  if (spec::unset(spec, "evictionStrategy") && !config.eviction_strategy.empty()) {
    json::set_string(spec, "evictionStrategy", config.eviction_strategy, allocator);
  }
}

}  // namespace

std::optional<std::string> set_default_network_interface(json::Value& vmi_spec, const ClusterConfig& config,
                                                         json::Allocator& allocator) {
  Value& devices = spec::devices(vmi_spec, allocator);
  if (const Value* attach = json::find(devices, "autoattachPodInterface");
      attach != nullptr && attach->IsBool() && !attach->GetBool()) {
    return std::nullopt;
  }
  if (!spec::empty_list(vmi_spec, "networks") || !spec::empty_list(devices, "interfaces")) {
    return std::nullopt;
  }
  const std::string& binding = config.default_network_interface;
  if (binding == "slirp") {
    return "slirp interface is deprecated as of v1.3";
  }
  if (binding == "bridge" && !config.permit_bridge_interface_on_pod_network) {
    return "bridge interface is not enabled in kubevirt-config";
  }
  if (binding == "bridge" || binding == "masquerade") {
    Value iface(rapidjson::kObjectType);
    iface.AddMember("name", "default", allocator);
    iface.AddMember(json::make_string(binding, allocator), Value(rapidjson::kObjectType), allocator);
    Value& interfaces = json::ensure_array(devices, "interfaces", allocator);
    interfaces.PushBack(std::move(iface), allocator);
  }
  Value network(rapidjson::kObjectType);
  network.AddMember("name", "default", allocator);
  network.AddMember("pod", Value(rapidjson::kObjectType), allocator);
  Value& networks = json::ensure_array(vmi_spec, "networks", allocator);
  networks.PushBack(std::move(network), allocator);
  return std::nullopt;
}

void set_default_volume_disks(json::Value& vmi_spec, json::Allocator& allocator) {
  const Value* volumes = json::find_array(vmi_spec, "volumes");
  if (volumes == nullptr || volumes->Empty()) {
    return;
  }
  Value& devices = spec::devices(vmi_spec, allocator);
  std::unordered_set<std::string> names;
  for (std::string_view list : {"disks", "filesystems"}) {
    if (const Value* entries = json::find_array(devices, list)) {
      for (const Value& entry : entries->GetArray()) {
        names.emplace(json::find_string(entry, "name"));
      }
    }
  }
  // The set holds only the names present before: like pkg/util SetDefaultVolumeDisk, two volumes
  // of the same name get two disks (validation then reports both duplicates).
  // Found again: spec::devices may have added `domain` to vmi_spec, moving its members.
  volumes = json::find_array(vmi_spec, "volumes");
  if (volumes == nullptr) {
    return;
  }
  for (const Value& volume : volumes->GetArray()) {
    const std::string name(json::find_string(volume, "name"));
    if (names.contains(name)) {
      continue;
    }
    Value disk(rapidjson::kObjectType);
    disk.AddMember("name", json::make_string(name, allocator), allocator);
    json::ensure_array(devices, "disks", allocator).PushBack(std::move(disk), allocator);
  }
}

std::optional<std::string> set_spec_defaults(json::Value& vmi_spec, const ClusterConfig& config,
                                             json::Allocator& allocator) {
  if (!vmi_spec.IsObject()) {
    return std::nullopt;
  }
  set_architecture(vmi_spec, config, allocator);
  set_machine_type(vmi_spec, config, allocator);
  set_resource_requests(vmi_spec, config, allocator);
  set_guest_memory(vmi_spec, allocator);
  set_cpu_topology(vmi_spec, allocator);
  set_pull_policies(vmi_spec, allocator);
  set_eviction_strategy(vmi_spec, config, allocator);
  if (auto error = set_default_network_interface(vmi_spec, config, allocator)) {
    return error;
  }
  set_default_volume_disks(vmi_spec, allocator);
  return std::nullopt;
}

}  // namespace vmgate::admission::defaults
