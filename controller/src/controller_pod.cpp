// The launcher pod of a VMI: KubeVirt's renderLaunchManifest field by field, for the fields a
// vmgate-launcher pod uses (docs/controller.md lists what is left out and why).
#include "vmgate/controller/controller_pod.hpp"

#include <openssl/sha.h>  // pure: SHA1 of the VMI name, as KubeVirt's CalculateVirtualMachineInstanceID

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/kube/pod_paths.hpp"

namespace vmgate::controller {
namespace {

using admission::Quantity;

constexpr std::int64_t mebi = std::int64_t{1} << 20U;
constexpr const char* ephemeral_storage_overhead = "50M";  // template.go ephemeralStorageOverheadSize
constexpr std::int64_t grace_padding_seconds = 15;         // template.go gracePeriodPaddingSeconds
// vmgate-launcher reads the volumes where these mount them (kube/pod_paths.hpp, its PodLayout's
// defaults, which follow KubeVirt).
namespace pod_paths = kube::pod_paths;
constexpr const char* hugepages_dir = "/dev/hugepages";

Quantity mi(std::int64_t count) {
  return Quantity::from_int(count * mebi, Quantity::Format::binary_si);
}

Quantity add(const Quantity& a, const Quantity& b) {
  Result<Quantity> sum = a.add(b);
  return sum ? *sum : a;  // both far below the range: memory sizes of a VMI that parsed
}

const json::Value* domain_of(const json::Value& vmi) {
  return json::find_path(vmi, {"spec", "domain"});
}

std::string_view spec_string(const json::Value& vmi, std::string_view key) {
  const json::Value* spec = json::find_object(vmi, "spec");
  return spec == nullptr ? std::string_view() : json::find_string(*spec, key);
}

// A quantity member of `object`, or nullopt when absent. Errors name `field`.
Result<std::optional<Quantity>> quantity_member(const json::Value* object, std::string_view key,
                                                const std::string& field) {
  if (object == nullptr) {
    return std::optional<Quantity>{};
  }
  const json::Value* value = json::find(*object, key);
  if (value == nullptr || value->IsNull()) {
    return std::optional<Quantity>{};
  }
  Result<Quantity> parsed = admission::parse_quantity(*value);
  if (!parsed) {
    return Error{field + " '" + admission::quantity_text(value) + "': " + parsed.error().message};
  }
  return std::optional<Quantity>{*parsed};
}

std::int64_t int_member(const json::Value* object, std::string_view key, std::int64_t fallback) {
  const json::Value* value = object == nullptr ? nullptr : json::find(*object, key);
  return value != nullptr && value->IsInt64() ? value->GetInt64() : fallback;
}

bool bool_member(const json::Value* object, std::string_view key, bool fallback) {
  const json::Value* value = object == nullptr ? nullptr : json::find(*object, key);
  return value != nullptr && value->IsBool() ? value->GetBool() : fallback;
}

// The most vCPUs a launcher pod is rendered for (QEMU's q35 limit). A VMI that bypassed the
// webhook may say anything: its numbers must neither overflow the arithmetic below nor make a pod
// the API server refuses (whose create would fail again at every pass).
constexpr std::int64_t max_vcpus = 4096;

// storageutils.ServiceAccountNameFromVolumes: the account of the first serviceAccount volume
// (admission allows one), or "".
std::string_view service_account_volume(const json::Value& spec) {
  const json::Value* volumes = json::find_array(spec, "volumes");
  if (volumes == nullptr) {
    return {};
  }
  for (const json::Value& volume : volumes->GetArray()) {
    if (const json::Value* source = volume.IsObject() ? json::find_object(volume, "serviceAccount") : nullptr) {
      return json::find_string(*source, "serviceAccountName");
    }
  }
  return {};
}

// hardware.GetNumberOfVCPUs: sockets x cores x threads, each at least 1. Errors: more than
// max_vcpus.
Result<std::int64_t> vcpus_of_topology(const json::Value* cpu) {
  const auto part = [cpu](std::string_view key) {
    return std::clamp<std::int64_t>(int_member(cpu, key, 1), 1, max_vcpus + 1);
  };
  const std::int64_t vcpus = part("sockets") * part("cores") * part("threads");  // at most 4097^3
  if (vcpus > max_vcpus) {
    return Error{"spec.domain.cpu: sockets x cores x threads is more than the " + std::to_string(max_vcpus) +
                 " vCPUs a launcher pod is rendered for"};
  }
  return vcpus;
}

// a * b / c for the byte counts of a quantity; nullopt when a * b overflows.
std::optional<std::int64_t> scaled(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return std::nullopt;
  }
  return product / c;
}

bool is_dedicated(const json::Value* domain) {
  return bool_member(domain == nullptr ? nullptr : json::find_object(*domain, "cpu"), "dedicatedCpuPlacement", false);
}

// A ResourceList of the VMI (requests or limits) as name -> Quantity. Errors name the field.
using ResourceList = std::map<std::string, Quantity>;
Result<ResourceList> resource_list(const json::Value* domain, std::string_view which) {
  ResourceList list;
  const json::Value* object = domain == nullptr ? nullptr : json::find_path(*domain, {"resources", which});
  if (object == nullptr || !object->IsObject()) {
    return list;
  }
  for (const auto& member : object->GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    Result<Quantity> parsed = admission::parse_quantity(member.value);
    if (!parsed) {
      return Error{"spec.domain.resources." + std::string(which) + "." + name + " '" +
                   admission::quantity_text(&member.value) + "': " + parsed.error().message};
    }
    // The API server refuses a negative resource in a pod: the create would fail, again and again.
    if (parsed->sign() < 0) {
      return Error{"spec.domain.resources." + std::string(which) + "." + name + " '" +
                   admission::quantity_text(&member.value) + "': must not be negative"};
    }
    list.emplace(name, *parsed);
  }
  return list;
}

Quantity get_or_zero(const ResourceList& list, const std::string& name) {
  const auto found = list.find(name);
  return found == list.end() ? Quantity() : found->second;
}

// vmi.WantsToHaveQOSGuaranteed: requests and limits both set, equal, for CPU and memory.
bool wants_guaranteed(const ResourceList& requests, const ResourceList& limits) {
  for (const std::string name : {"cpu", "memory"}) {
    const auto request = requests.find(name);
    const auto limit = limits.find(name);
    if (request == requests.end() || limit == limits.end() || request->second.is_zero() ||
        !(request->second == limit->second)) {
      return false;
    }
  }
  return true;
}

bool has_exec_probe(const json::Value& vmi, std::string_view probe) {
  const json::Value* found = json::find_path(vmi, {"spec", probe});
  return found != nullptr && found->IsObject() && json::has(*found, "exec");
}

std::vector<const json::Value*> array_items(const json::Value* array) {
  std::vector<const json::Value*> items;
  if (array != nullptr && array->IsArray()) {
    for (const auto& item : array->GetArray()) {
      items.push_back(&item);
    }
  }
  return items;
}

std::vector<const json::Value*> volumes_of(const json::Value& vmi) {
  return array_items(json::find_path(vmi, {"spec", "volumes"}));
}
std::vector<const json::Value*> interfaces_of(const json::Value& vmi) {
  return array_items(json::find_path(vmi, {"spec", "domain", "devices", "interfaces"}));
}

std::string quantity_string(const Quantity& quantity) {
  return quantity.canonical();
}

// The SHA-1 of `text` in lowercase hex.
std::string sha1_hex(std::string_view text) {
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest{};
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  std::string hex;
  for (unsigned char byte : digest) {
    std::array<char, 3> two{};
    std::snprintf(two.data(), two.size(), "%02x", static_cast<unsigned>(byte));
    hex += two.data();
  }
  return hex;
}

constexpr std::size_t label_max = 63;  // a DNS label: label values, container names
constexpr std::size_t hash_length = 8;

// CalculateVirtualMachineInstanceID: the name, or for names above 63 characters the first 54
// and 8 hex digits of its SHA-1.
std::string vmi_id(std::string_view name) {
  if (name.size() <= label_max) {
    return std::string(name);
  }
  return std::string(name.substr(0, label_max - hash_length - 1)) + "-" + sha1_hex(name).substr(0, hash_length);
}

struct Resources {
  ResourceList requests;
  ResourceList limits;
};

// renderresources.go with the rules of VMIResourcePredicates in their order.
Result<Resources> render_resources(const json::Value& vmi, const PodSettings& settings, const Quantity& overhead) {
  const json::Value* domain = domain_of(vmi);
  Result<ResourceList> vm_requests = resource_list(domain, "requests");
  if (!vm_requests) {
    return vm_requests.error();
  }
  Result<ResourceList> vm_limits = resource_list(domain, "limits");
  if (!vm_limits) {
    return vm_limits.error();
  }
  ResourceList requests = *vm_requests;
  ResourceList limits = *vm_limits;
  ResourceList calculated_requests;
  ResourceList calculated_limits;
  const json::Value* memory = domain == nullptr ? nullptr : json::find_object(*domain, "memory");
  Result<std::optional<Quantity>> guest = quantity_member(memory, "guest", "spec.domain.memory.guest");
  if (!guest) {
    return guest.error();
  }
  const json::Value* hugepages = memory == nullptr ? nullptr : json::find_object(*memory, "hugepages");

  // WithEphemeralStorageRequest.
  const Quantity storage = *Quantity::parse(ephemeral_storage_overhead);
  requests["ephemeral-storage"] = add(get_or_zero(requests, "ephemeral-storage"), storage);
  if (limits.count("ephemeral-storage") != 0) {
    limits["ephemeral-storage"] = add(limits["ephemeral-storage"], storage);
  }

  // WithVirtualizationResources (getRequiredResources), into the limits only: the API server
  // defaults requests of extended resources to their limits.
  bool tun = false;
  bool vhost_net = false;
  for (const json::Value* interface : interfaces_of(vmi)) {
    // netvmispec.RequiresTunDevice: bridge or masquerade on the pod network, or any binding.
    tun = tun || json::has(*interface, "bridge") || json::has(*interface, "masquerade") ||
          json::has(*interface, "binding");
    const std::string_view model = json::find_string(*interface, "model");
    vhost_net = vhost_net || ((model.empty() || model == "virtio") && !json::has(*interface, "sriov"));
  }
  if (tun) {
    limits["devices.kubevirt.io/tun"] = Quantity::from_int(1, Quantity::Format::decimal_si);
  }
  if (vhost_net && !settings.allow_emulation) {
    limits["devices.kubevirt.io/vhost-net"] = Quantity::from_int(1, Quantity::Format::decimal_si);
  }
  if (!settings.allow_emulation) {
    limits["devices.kubevirt.io/kvm"] = Quantity::from_int(1, Quantity::Format::decimal_si);
  }
  if (bool_member(json::find_path(vmi, {"spec", "domain", "devices"}), "autoattachVSOCK", false)) {
    limits["devices.kubevirt.io/vhost-vsock"] = Quantity::from_int(1, Quantity::Format::decimal_si);
  }

  // WithMemoryRequests (when the VMI requests no memory).
  if (get_or_zero(requests, "memory").is_zero()) {
    if (!get_or_zero(limits, "memory").is_zero()) {
      requests["memory"] = limits["memory"];
    } else {
      std::optional<Quantity> base = *guest;
      if (!base && hugepages != nullptr) {
        if (Result<Quantity> page = Quantity::parse(json::find_string(*hugepages, "pageSize")); page) {
          base = *page;
        }
      }
      if (base && base->sign() > 0) {
        if (settings.memory_overcommit == 100 || settings.memory_overcommit <= 0) {
          requests["memory"] = *base;
        } else {
          const std::int64_t bytes = base->value().ok() ? *base->value() : 0;
          const std::optional<std::int64_t> request = scaled(bytes, 100, settings.memory_overcommit);
          if (!request) {
            return Error{"spec.domain.memory.guest: too large to request"};
          }
          requests["memory"] = Quantity::from_int(*request, base->format());
        }
      }
    }
  }

  // CPU: WithCPUPinning (dedicated) or WithoutDedicatedCPU.
  const json::Value* cpu = domain == nullptr ? nullptr : json::find_object(*domain, "cpu");
  Result<std::int64_t> topology = cpu != nullptr ? vcpus_of_topology(cpu) : Result<std::int64_t>(1);
  if (!topology) {
    return topology.error();
  }
  const std::int64_t vcpus = *topology;
  // At most one I/O thread per vCPU is of use; a larger count is read as that many.
  const std::int64_t io_threads = std::clamp<std::int64_t>(
      domain == nullptr ? 0 : int_member(json::find_object(*domain, "ioThreads"), "supplementalPoolThreadCount", 0), 0,
      max_vcpus);
  if (is_dedicated(domain)) {
    // WithCPUPinning: whole CPUs, requests = limits (guaranteed QoS), one more for an isolated
    // emulator thread.
    std::int64_t cpus = vcpus;
    if (bool_member(cpu, "isolateEmulatorThread", false)) {
      cpus += 1;
    }
    if (limits.count("cpu") == 0) {
      limits["cpu"] = Quantity::from_int(cpus, Quantity::Format::decimal_si);
    }
    requests["cpu"] = limits["cpu"];
    if (limits.count("memory") == 0 && requests.count("memory") != 0) {
      limits["memory"] = requests["memory"];
    }
    if (requests.count("memory") == 0 && limits.count("memory") != 0) {
      requests["memory"] = limits["memory"];
    }
  } else {
    const std::int64_t total = vcpus + io_threads;
    if (total != 0 && settings.cpu_allocation_ratio > 0) {
      // total / ratio in millicores, rounded up as the API server rounds KubeVirt's "%g" value.
      // total is at most 2 x max_vcpus, so total * 1000 fits; rounding up by division, not by
      // adding ratio - 1, keeps any ratio from overflowing.
      const std::int64_t total_milli = total * 1000;
      const std::int64_t milli =
          total_milli / settings.cpu_allocation_ratio + (total_milli % settings.cpu_allocation_ratio != 0 ? 1 : 0);
      Result<Quantity> value = Quantity::parse(std::to_string(milli) + "m");
      if (value) {
        calculated_requests["cpu"] = *Quantity::parse(value->to_string());
      }
    }
  }

  if (hugepages != nullptr) {
    // WithHugePages: the hugepages resource is the memory request capped at the guest size; the
    // memory request and limit become what is left above the guest, plus the overhead.
    const std::string page_size(json::find_string(*hugepages, "pageSize"));
    const std::string hugepage_resource = "hugepages-" + page_size;
    Quantity pages = get_or_zero(requests, "memory");
    if (*guest && pages > **guest) {
      pages = **guest;
    }
    calculated_requests[hugepage_resource] = pages;
    calculated_limits[hugepage_resource] = pages;
    Quantity request_diff;
    Quantity limit_diff;
    if (*guest) {
      const Quantity request = get_or_zero(requests, "memory");
      const Quantity limit = get_or_zero(limits, "memory");
      if (request > **guest) {
        request_diff = *request.sub(**guest);
      }
      if (limit > **guest) {
        limit_diff = *limit.sub(**guest);
      }
    }
    requests["memory"] = add(request_diff, overhead);
    if (limits.count("memory") != 0) {
      limits["memory"] = add(limit_diff, overhead);
    }
  } else {
    // WithMemoryOverhead.
    if (!bool_member(domain == nullptr ? nullptr : json::find_object(*domain, "resources"), "overcommitGuestOverhead",
                     false)) {
      requests["memory"] = add(get_or_zero(requests, "memory"), overhead);
    }
    if (limits.count("memory") != 0) {
      limits["memory"] = add(limits["memory"], overhead);
    }
  }

  // Requests() / Limits(): the calculated values, overridden by the VMI's own.
  Resources out;
  out.requests = calculated_requests;
  out.limits = calculated_limits;
  for (const auto& [name, value] : requests) {
    out.requests[name] = value;
  }
  for (const auto& [name, value] : limits) {
    out.limits[name] = value;
  }
  return out;
}

// NodeSelectorRenderer.Render.
std::map<std::string, std::string> node_selectors(const json::Value& vmi, const PodSettings& settings) {
  std::map<std::string, std::string> selectors{{"kubevirt.io/schedulable", "true"}};
  const std::string_view architecture = spec_string(vmi, "architecture");
  if (!architecture.empty()) {
    std::string lower(architecture);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    selectors["kubernetes.io/arch"] = lower;
  }
  for (const auto& [key, value] : settings.node_selectors) {
    selectors[key] = value;
  }
  if (const json::Value* own = json::find_path(vmi, {"spec", "nodeSelector"}); own != nullptr && own->IsObject()) {
    for (const auto& member : own->GetObject()) {
      if (member.value.IsString()) {
        selectors[std::string(member.name.GetString(), member.name.GetStringLength())] =
            std::string(json::as_view(member.value));
      }
    }
  }
  const json::Value* domain = domain_of(vmi);
  if (is_dedicated(domain)) {
    selectors["kubevirt.io/cpumanager"] = "true";
  }
  const json::Value* cpu = domain == nullptr ? nullptr : json::find_object(*domain, "cpu");
  const std::string_view model = cpu == nullptr ? std::string_view() : json::find_string(*cpu, "model");
  if (!model.empty()) {
    if (model != "host-model" && model != "host-passthrough") {
      selectors["cpu-model.node.kubevirt.io/" + std::string(model)] = "true";
    }
    // Feature labels come with a model (CPUModelLabelFromCPUModel fails without one).
    for (const json::Value* feature : array_items(json::find_array(*cpu, "features"))) {
      const std::string_view policy = json::find_string(*feature, "policy");
      if (policy.empty() || policy == "require") {
        selectors["cpu-feature.node.kubevirt.io/" + std::string(json::find_string(*feature, "name"))] = "true";
      }
    }
  }
  // The spec's machine type, which admission checked against the cluster's emulated machines.
  // KubeVirt prefers status.machine, which virt-handler writes once a domain ran (for a migration's
  // target); vmgate has no migration, and a status a user wrote at CREATE is nothing admission
  // checked: it would put any label key into the pod's node selector.
  std::string_view machine;
  if (const json::Value* spec_type = json::find_path(vmi, {"spec", "domain", "machine", "type"});
      spec_type != nullptr && spec_type->IsString()) {
    machine = json::as_view(*spec_type);
  }
  if (!machine.empty()) {
    selectors["machine-type.node.kubevirt.io/" + std::string(machine)] = "true";
  }
  if (cpu != nullptr && json::has(*cpu, "realtime")) {
    selectors["kubevirt.io/realtime"] = "true";
  }
  if (const json::Value* sev = json::find_path(vmi, {"spec", "domain", "launchSecurity", "sev"}); sev != nullptr) {
    selectors["kubevirt.io/sev"] = "true";
  }
  if (const json::Value* snp = json::find_path(vmi, {"spec", "domain", "launchSecurity", "snp"}); snp != nullptr) {
    selectors["kubevirt.io/sev-snp"] = "true";
  }
  return selectors;
}

// podAffinity from the VMI; with a forbidden CPU feature, every required term also asks that the
// node not carry its label (setNodeAffinityForbiddenFeaturePolicy); host-model on a node whose
// host model is obsolete is refused the same way (setNodeAffinityForHostModelCpuModel).
void render_affinity(const json::Value& vmi, json::Value& pod_spec, json::Allocator& allocator) {
  std::vector<std::string> rejected;
  const json::Value* cpu = json::find_path(vmi, {"spec", "domain", "cpu"});
  if (cpu != nullptr && json::find_string(*cpu, "model") == "host-model") {
    rejected.emplace_back("node-labeller.kubevirt.io/obsolete-host-model");
  }
  if (cpu != nullptr) {
    for (const json::Value* feature : array_items(json::find_array(*cpu, "features"))) {
      if (json::find_string(*feature, "policy") == "forbid") {
        rejected.push_back("cpu-feature.node.kubevirt.io/" + std::string(json::find_string(*feature, "name")));
      }
    }
  }
  const json::Value* own = json::find_path(vmi, {"spec", "affinity"});
  if (own == nullptr && rejected.empty()) {
    return;
  }
  json::Value affinity =
      own != nullptr && own->IsObject() ? json::copy(*own, allocator) : json::Value(rapidjson::kObjectType);
  for (const std::string& label : rejected) {
    json::Value requirement(rapidjson::kObjectType);
    json::set_string(requirement, "key", label, allocator);
    json::set_string(requirement, "operator", "DoesNotExist", allocator);
    json::Value& node = json::ensure_object(affinity, "nodeAffinity", allocator);
    json::Value& required = json::ensure_object(node, "requiredDuringSchedulingIgnoredDuringExecution", allocator);
    json::Value& terms = json::ensure_array(required, "nodeSelectorTerms", allocator);
    if (terms.Empty()) {
      json::Value term(rapidjson::kObjectType);
      json::ensure_array(term, "matchExpressions", allocator);
      terms.PushBack(term, allocator);
    }
    for (auto& term : terms.GetArray()) {
      if (term.IsObject()) {
        json::ensure_array(term, "matchExpressions", allocator).PushBack(json::copy(requirement, allocator), allocator);
      }
    }
  }
  json::set(pod_spec, "affinity", std::move(affinity), allocator);
}

json::Value resource_object(const ResourceList& list, json::Allocator& allocator) {
  json::Value object(rapidjson::kObjectType);
  for (const auto& [name, value] : list) {
    json::set_string(object, name, quantity_string(value), allocator);
  }
  return object;
}

json::Value string_array(std::initializer_list<std::string> words, json::Allocator& allocator) {
  json::Value array(rapidjson::kArrayType);
  for (const std::string& word : words) {
    array.PushBack(json::make_string(word, allocator), allocator);
  }
  return array;
}

// The small fixed resources of a helper container (KubeVirt's support containers: requests
// below limits, both equal when the VMI wants guaranteed QoS or dedicated CPUs, so that the pod
// keeps the QoS class its compute container gives it).
struct HelperResources {
  const char* cpu_request;
  const char* memory_request;
  const char* cpu_limit;
  const char* memory_limit;
  const char* ephemeral_storage_request;  // nullptr: none
};
// container-disk.go getMinimalInitContainerDiskResources.
constexpr HelperResources container_disk_binary_resources{"1m", "1M", "10m", "40M", ephemeral_storage_overhead};
// The same, but the copy is I/O bound and moves the whole disk: at 10m of CPU a 5 GiB image
// takes minutes. 100m stays below the compute container's request for any vCPU count (vCPUs /
// cpuAllocationRatio 10), so the pod's size is still the compute container's.
constexpr HelperResources container_disk_copy_resources{"1m", "1M", "100m", "40M", ephemeral_storage_overhead};
// serialconsolelog.go resourcesForSerialConsoleLogContainer.
constexpr HelperResources guest_console_log_resources{"5m", "35M", "15m", "60M", nullptr};

json::Value helper_resources(const HelperResources& figures, bool guaranteed, json::Allocator& allocator) {
  json::Value requests(rapidjson::kObjectType);
  json::Value limits(rapidjson::kObjectType);
  json::set_string(requests, "cpu", guaranteed ? figures.cpu_limit : figures.cpu_request, allocator);
  json::set_string(requests, "memory", guaranteed ? figures.memory_limit : figures.memory_request, allocator);
  if (figures.ephemeral_storage_request != nullptr) {
    json::set_string(requests, "ephemeral-storage", figures.ephemeral_storage_request, allocator);
  }
  json::set_string(limits, "cpu", figures.cpu_limit, allocator);
  json::set_string(limits, "memory", figures.memory_limit, allocator);
  json::Value resources(rapidjson::kObjectType);
  json::set(resources, "requests", std::move(requests), allocator);
  json::set(resources, "limits", std::move(limits), allocator);
  return resources;
}

// Helper containers need no privilege: none may be gained, every capability dropped, except
// those listed (the copy reads a disk of any owner and mode in its image as root).
json::Value unprivileged(json::Allocator& allocator, std::initializer_list<std::string> added = {}) {
  json::Value capabilities(rapidjson::kObjectType);
  json::set(capabilities, "drop", string_array({"ALL"}, allocator), allocator);
  if (added.size() != 0) {
    json::set(capabilities, "add", string_array(added, allocator), allocator);
  }
  json::Value context(rapidjson::kObjectType);
  json::set(context, "allowPrivilegeEscalation", json::Value(false), allocator);
  json::set(context, "capabilities", std::move(capabilities), allocator);
  return context;
}

// container-disk.go toContainerName ("volume" + the volume's name), cut to a valid container
// name when longer than a DNS label: its first 54 characters and 8 hex digits of the volume
// name's SHA-1, as KubeVirt shortens its VMI id label (KubeVirt's own pod is refused then).
std::string container_disk_copy_container_name(std::string_view volume_name) {
  std::string full = kube::pod_paths::container_disk_copy_container(volume_name);
  if (full.size() <= label_max) {
    return full;
  }
  return full.substr(0, label_max - hash_length - 1) + "-" + sha1_hex(volume_name).substr(0, hash_length);
}

// isSerialConsoleLogEnabled: a serial console the launcher logs, unless the VMI turns the
// console or its log off (the cluster-wide switch is not modelled: on).
bool logs_serial_console(const json::Value& vmi) {
  const json::Value* devices = json::find_path(vmi, {"spec", "domain", "devices"});
  return bool_member(devices, "autoattachSerialConsole", true) && bool_member(devices, "logSerialConsole", true);
}

// The VMI as the launcher pod's annotation carries it: what the controller sees, without what
// only the API server needs (managedFields, resourceVersion), without its status (the launcher
// starts from the spec), and without kubectl's last-applied copy (a second VMI in the same
// size budget). Errors: larger than the annotation may be.
Result<std::string> vmi_annotation_value(const json::Value& vmi, const std::string& key) {
  json::Document copy(rapidjson::kObjectType);
  auto& a = copy.GetAllocator();
  copy.CopyFrom(vmi, a);
  json::erase(copy, "status");
  if (json::Value* metadata = json::find(copy, "metadata"); metadata != nullptr && metadata->IsObject()) {
    json::erase(*metadata, "managedFields");
    json::erase(*metadata, "resourceVersion");
    if (json::Value* annotations = json::find(*metadata, "annotations");
        annotations != nullptr && annotations->IsObject()) {
      json::erase(*annotations, "kubectl.kubernetes.io/last-applied-configuration");
    }
  }
  std::string text = json::to_string(copy);
  if (text.size() > kube::pod_paths::vmi_annotation_max_bytes) {
    return Error{"the VirtualMachineInstance " + key + " is " + std::to_string(text.size()) +
                 " bytes as JSON, more than the " + std::to_string(kube::pod_paths::vmi_annotation_max_bytes) +
                 " the launcher pod's annotation " + std::string(kube::pod_paths::vmi_annotation) + " may hold"};
  }
  return text;
}

}  // namespace

Result<Quantity> memory_overhead(const json::Value& vmi, const PodSettings& settings) {
  const json::Value* domain = domain_of(vmi);
  Result<ResourceList> requests = resource_list(domain, "requests");
  if (!requests) {
    return requests.error();
  }
  Result<ResourceList> limits = resource_list(domain, "limits");
  if (!limits) {
    return limits.error();
  }
  // Page tables: one byte for every 512 bytes of requested memory (counted in whole kB first).
  const Quantity requested = get_or_zero(*requests, "memory");
  const std::int64_t bytes = requested.value().ok() ? *requested.value() : 0;
  // (bytes + 999) / 1000 * 1000 / 512 as kB x 125 / 64: bytes (never negative) may be near the
  // int64 limit, where the sum and the product by 1000 overflow (UBSan found the latter).
  const std::int64_t requested_kilo = bytes / 1000 + (bytes % 1000 != 0 ? 1 : 0);
  Quantity overhead = Quantity::from_int(requested_kilo * 125 / 64, Quantity::Format::decimal_si);
  // virt-launcher-monitor 25Mi, virt-launcher 100Mi, virtlogd 25Mi, virtqemud 40Mi, qemu 50Mi.
  overhead = add(overhead, mi(25 + 100 + 25 + 40 + 50));
  const json::Value* cpu = domain == nullptr ? nullptr : json::find_object(*domain, "cpu");
  std::int64_t vcpus = 0;
  if (cpu != nullptr) {
    Result<std::int64_t> topology = vcpus_of_topology(cpu);
    if (!topology) {
      return topology.error();
    }
    vcpus = *topology;
  } else if (limits->count("cpu") != 0) {
    vcpus = limits->at("cpu").value().ok() ? *limits->at("cpu").value() : 0;
  } else if (requests->count("cpu") != 0) {
    vcpus = requests->at("cpu").value().ok() ? *requests->at("cpu").value() : 0;
  }
  vcpus = std::clamp<std::int64_t>(vcpus, 1, max_vcpus);
  overhead = add(overhead, mi(8 * vcpus));
  overhead = add(overhead, mi(8));  // the IO thread
  const json::Value* devices = domain == nullptr ? nullptr : json::find_object(*domain, "devices");
  if (bool_member(devices, "autoattachGraphicsDevice", true)) {
    overhead = add(overhead, mi(32));
  }
  std::string_view architecture = spec_string(vmi, "architecture");
  if (architecture.empty()) {
    architecture = settings.cluster_architecture;
  }
  if (architecture == "arm64") {
    overhead = add(overhead, mi(128));
  }
  const auto has_entries = [devices](std::string_view list) {
    const json::Value* entries = json::find_array(*devices, list);
    return entries != nullptr && !entries->Empty();
  };
  const bool vfio = devices != nullptr && (has_entries("gpus") || has_entries("hostDevices"));
  if (vfio) {
    overhead = add(overhead, mi(1024));
  }
  for (const json::Value* volume : volumes_of(vmi)) {
    if (json::has(*volume, "downwardMetrics")) {
      overhead = add(overhead, mi(1));
      break;
    }
  }
  const bool liveness = has_exec_probe(vmi, "livenessProbe");
  const bool readiness = has_exec_probe(vmi, "readinessProbe");
  overhead = add(overhead, mi((liveness ? 10 : 0) + (readiness ? 10 : 0) + (liveness || readiness ? 100 : 0)));
  if (const json::Value* security = domain == nullptr ? nullptr : json::find_object(*domain, "launchSecurity");
      security != nullptr && (json::has(*security, "sev") || json::has(*security, "snp"))) {
    overhead = add(overhead, mi(256));
  }
  if (const json::Value* tpm = devices == nullptr ? nullptr : json::find_object(*devices, "tpm");
      tpm != nullptr && bool_member(tpm, "enabled", true)) {
    overhead = add(overhead, mi(53));
  }
  if (is_dedicated(domain) || wants_guaranteed(*requests, *limits)) {
    overhead = add(overhead, mi(100));
  }
  const json::Value* reserved = json::find_path(vmi, {"spec", "domain", "memory", "reservedOverhead"});
  Result<std::optional<Quantity>> added =
      quantity_member(reserved, "addedOverhead", "spec.domain.memory.reservedOverhead.addedOverhead");
  if (!added) {
    return added.error();
  }
  if (*added) {
    overhead = add(overhead, **added);
  }
  if (settings.additional_overhead_ratio) {
    // MultiplyMemory: the kB count times (ratio - 1), truncated, added in kB.
    const std::int64_t total = overhead.value().ok() ? *overhead.value() : 0;
    const std::int64_t kilo = (total + 999) / 1000;  // the overhead: far below the int64 limit
    const double extra = static_cast<double>(kilo) * (*settings.additional_overhead_ratio - 1.0) * 1000.0;
    if (!(extra > -9.0e18 && extra < 9.0e18)) {
      return Error{"the additional overhead ratio makes the memory overhead too large"};
    }
    overhead = add(overhead,
                   Quantity::from_int(static_cast<std::int64_t>(extra / 1000.0) * 1000, Quantity::Format::decimal_si));
  }
  return overhead;
}

std::set<std::string> block_claims(const std::vector<const json::Value*>& vmis, const admission::ClusterView& cluster) {
  std::set<std::string> out;
  for (const json::Value* vmi : vmis) {
    const json::Value* namespace_value = json::find_path(*vmi, {"metadata", "namespace"});
    const std::string_view ns = namespace_value != nullptr && namespace_value->IsString()
                                    ? json::as_view(*namespace_value)
                                    : std::string_view();
    for (const json::Value* volume : volumes_of(*vmi)) {
      std::string_view claim;
      if (const json::Value* pvc = json::find_object(*volume, "persistentVolumeClaim"); pvc != nullptr) {
        claim = json::find_string(*pvc, "claimName");
      } else if (const json::Value* data_volume = json::find_object(*volume, "dataVolume"); data_volume != nullptr) {
        claim = json::find_string(*data_volume, "name");
      }
      const json::Value* found =
          claim.empty() ? nullptr : cluster.find(admission::ObjectKind::persistent_volume_claim, ns, claim);
      const json::Value* mode = found == nullptr ? nullptr : json::find_path(*found, {"spec", "volumeMode"});
      if (mode != nullptr && mode->IsString() && json::as_view(*mode) == "Block") {
        out.insert(std::string(ns) + "/" + std::string(claim));
      }
    }
  }
  return out;
}

constexpr std::size_t max_generated_base = 58;  // apiserver's maxGeneratedNameLength: 63 - 5

ClusterPodSettings with_cluster_configuration(PodSettings base, const admission::ClusterConfig& config) {
  ClusterPodSettings out{std::move(base), {}};
  PodSettings& pod = out.pod;
  pod.cluster_architecture = config.default_architecture;
  pod.host_disk_enabled = config.feature_gate_enabled("HostDisk");
  pod.node_selectors = config.node_selectors;
  const auto bounded = [&out](std::string_view setting, std::int64_t value, std::int64_t most, std::int64_t fallback) {
    if (value > 0 && value <= most) {
      return value;
    }
    out.refused.push_back("the KubeVirt CR's developerConfiguration." + std::string(setting) + " " +
                          std::to_string(value) + " is not in 1.." + std::to_string(most) + ": the default, " +
                          std::to_string(fallback) + ", is used");
    return fallback;
  };
  const PodSettings defaults;
  pod.cpu_allocation_ratio = bounded("cpuAllocationRatio", config.cpu_allocation_ratio, max_cpu_allocation_ratio,
                                     defaults.cpu_allocation_ratio);
  pod.memory_overcommit =
      bounded("memoryOvercommit", config.memory_overcommit, max_memory_overcommit, defaults.memory_overcommit);
  return out;
}

std::string launcher_pod_name(const json::Value& vmi) {
  const json::Value* metadata = json::find_object(vmi, "metadata");
  const std::string_view name = metadata == nullptr ? std::string_view() : json::find_string(*metadata, "name");
  const std::string_view uid = metadata == nullptr ? std::string_view() : json::find_string(*metadata, "uid");
  std::string suffix;
  for (char c : uid) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 && suffix.size() < 5) {
      suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  // KubeVirt's generateName "virt-launcher-<name>-", which the apiserver cuts to 58 characters
  // before its 5 random ones: a long VMI name (up to 253) still makes a valid pod name, at most
  // 63 characters. A cut that ends in '.' or '-' is fine: the suffix follows.
  std::string base = "virt-launcher-" + std::string(name) + "-";
  if (base.size() > max_generated_base) {
    base.resize(max_generated_base);
  }
  return base + suffix;
}

Result<json::Document> launcher_pod(const json::Value& vmi, const PodSettings& settings) {
  const json::Value* metadata = json::find_object(vmi, "metadata");
  const json::Value* spec = json::find_object(vmi, "spec");
  if (metadata == nullptr || spec == nullptr) {
    return Error{"the VirtualMachineInstance has no metadata or spec"};
  }
  const std::string name(json::find_string(*metadata, "name"));
  const std::string namespace_name(json::find_string(*metadata, "namespace"));
  const std::string uid(json::find_string(*metadata, "uid"));
  for (const auto& [field, value] :
       {std::pair{"metadata.name", &name}, std::pair{"metadata.namespace", &namespace_name},
        std::pair{"metadata.uid", &uid}}) {
    if (value->empty()) {
      return Error{std::string(field) + ": required to render the launcher pod"};
    }
  }
  Result<Quantity> overhead = memory_overhead(vmi, settings);
  if (!overhead) {
    return overhead.error();
  }
  Result<Resources> resources = render_resources(vmi, settings, *overhead);
  if (!resources) {
    return resources.error();
  }

  json::Document pod(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  json::set_string(pod, "apiVersion", "v1", a);
  json::set_string(pod, "kind", "Pod", a);
  json::Value& meta = json::ensure_object(pod, "metadata", a);
  json::set_string(meta, "name", launcher_pod_name(vmi), a);
  json::set_string(meta, "namespace", namespace_name, a);

  // podLabels: the VMI's labels, then KubeVirt's.
  std::string hostname(json::find_string(*spec, "hostname"));
  if (hostname.empty()) {
    hostname = name;
  }
  if (hostname.size() > 63) {
    hostname.resize(63);
  }
  json::Value labels(rapidjson::kObjectType);
  if (const json::Value* own = json::find_object(*metadata, "labels"); own != nullptr) {
    labels = json::copy(*own, a);
  }
  json::set_string(labels, app_label, "virt-launcher", a);
  json::set_string(labels, created_by_label, uid, a);
  json::set_string(labels, vm_name_label, hostname, a);
  json::set_string(labels, vmi_id_label, vmi_id(name), a);
  json::set(meta, "labels", std::move(labels), a);
  // filterVMIAnnotationsForPod keeps none of KubeVirt's own; the domain name tells a person whose pod it is.
  json::Value annotations(rapidjson::kObjectType);
  json::set_string(annotations, "kubevirt.io/domain", name, a);
  // The launcher's VMI: the copy judged here, read by the launcher as a downward-API file.
  Result<std::string> embedded = vmi_annotation_value(vmi, namespace_name + "/" + name);
  if (!embedded) {
    return embedded.error();
  }
  json::set_string(annotations, kube::pod_paths::vmi_annotation, *embedded, a);
  json::set(meta, "annotations", std::move(annotations), a);

  json::Value owner(rapidjson::kObjectType);
  json::set_string(owner, "apiVersion", "kubevirt.io/v1", a);
  json::set_string(owner, "kind", "VirtualMachineInstance", a);
  json::set_string(owner, "name", name, a);
  json::set_string(owner, "uid", uid, a);
  json::set(owner, "controller", json::Value(true), a);
  json::set(owner, "blockOwnerDeletion", json::Value(true), a);
  json::Value owners(rapidjson::kArrayType);
  owners.PushBack(owner, a);
  json::set(meta, "ownerReferences", std::move(owners), a);

  json::Value& pod_spec = json::ensure_object(pod, "spec", a);
  json::set_string(pod_spec, "hostname", hostname, a);
  if (const std::string_view subdomain = json::find_string(*spec, "subdomain"); !subdomain.empty()) {
    json::set_string(pod_spec, "subdomain", subdomain, a);
  }
  // Any grace period a VMI asks for, up to a year, plus KubeVirt's padding: no overflow.
  const std::int64_t grace =
      std::clamp<std::int64_t>(int_member(spec, "terminationGracePeriodSeconds", 30), 0, std::int64_t{366} * 24 * 3600);
  json::set(pod_spec, "terminationGracePeriodSeconds",
            json::Value(static_cast<std::int64_t>(grace + 2 * grace_padding_seconds)), a);
  json::set_string(pod_spec, "restartPolicy", "Never", a);
  json::set(pod_spec, "enableServiceLinks", json::Value(false), a);
  // The launcher reads its VMI from a file and reports through a file the node agent reads: no
  // token at all, so a guest that escaped into the pod finds no identity to use.
  json::set(pod_spec, "automountServiceAccountToken", json::Value(false), a);

  json::Value selectors(rapidjson::kObjectType);
  for (const auto& [key, value] : node_selectors(vmi, settings)) {
    json::set_string(selectors, key, value, a);
  }
  json::set(pod_spec, "nodeSelector", std::move(selectors), a);
  for (const char* field : {"tolerations", "topologySpreadConstraints", "dnsConfig"}) {
    if (const json::Value* value = json::find(*spec, field); value != nullptr && !value->IsNull()) {
      json::set(pod_spec, field, json::copy(*value, a), a);
    }
  }
  for (const char* field : {"dnsPolicy", "schedulerName", "priorityClassName"}) {
    if (const std::string_view value = json::find_string(*spec, field); !value.empty()) {
      json::set_string(pod_spec, field, value, a);
    }
  }
  // No account named and no token, unless the VMI has a serviceAccount volume: then, as
  // template.go, the pod runs as the VMI's serviceAccountName, else as the volume's account, with
  // the token mounted, so that the launcher builds the guest's disk from the tenant's own
  // account. No other account is ever set, so the token can never be one of vmgate's identities.
  const std::string_view own_account = json::find_string(*spec, "serviceAccountName");
  if (const std::string_view volume_account = service_account_volume(*spec); !volume_account.empty()) {
    json::set_string(pod_spec, "serviceAccountName", own_account.empty() ? volume_account : own_account, a);
    json::set(pod_spec, "automountServiceAccountToken", json::Value(true), a);
  }
  render_affinity(vmi, pod_spec, a);

  // The compute container.
  json::Value container(rapidjson::kObjectType);
  json::set_string(container, "name", "compute", a);
  json::set_string(container, "image", settings.image, a);
  const std::string private_dir(pod_paths::private_dir);
  const std::string status_file = private_dir + "/" + std::string(pod_paths::status_file_name);
  const std::string serial_log = private_dir + "/" + std::string(pod_paths::serial_log_name);
  json::set(container, "command",
            string_array({settings.launcher_binary, "--vmi",
                          std::string(pod_paths::vmi_dir) + "/" + std::string(pod_paths::vmi_file_name),
                          "--status-file", status_file, "--console-log", serial_log},
                         a),
            a);
  // kubectl describe shows the launcher's last line (why it ended) as the termination message.
  json::set_string(container, "terminationMessagePolicy", "FallbackToLogsOnError", a);
  json::Value resource_requirements(rapidjson::kObjectType);
  json::set(resource_requirements, "requests", resource_object(resources->requests, a), a);
  json::set(resource_requirements, "limits", resource_object(resources->limits, a), a);
  json::set(container, "resources", std::move(resource_requirements), a);

  json::Value volumes(rapidjson::kArrayType);
  json::Value mounts(rapidjson::kArrayType);
  json::Value devices(rapidjson::kArrayType);
  const auto mount = [&a](json::Value& list, std::string_view volume, const std::string& path, bool read_only,
                          std::string_view field = "mountPath") {
    json::Value entry(rapidjson::kObjectType);
    json::set_string(entry, "name", volume, a);
    json::set_string(entry, field, path, a);
    if (read_only) {
      json::set(entry, "readOnly", json::Value(true), a);
    }
    list.PushBack(entry, a);
  };
  Result<ResourceList> vmi_requests = resource_list(domain_of(vmi), "requests");  // parsed above already
  Result<ResourceList> vmi_limits = resource_list(domain_of(vmi), "limits");
  const bool guaranteed =
      is_dedicated(domain_of(vmi)) || (vmi_requests && vmi_limits && wants_guaranteed(*vmi_requests, *vmi_limits));
  json::Value init_containers(rapidjson::kArrayType);
  const auto empty_dir_volume = [&a, &volumes](const std::string& volume_name) {
    json::Value entry(rapidjson::kObjectType);
    json::set_string(entry, "name", volume_name, a);
    json::set(entry, "emptyDir", json::Value(rapidjson::kObjectType), a);
    volumes.PushBack(entry, a);
  };
  const std::string binary_in_init =
      std::string(pod_paths::container_disk_binary_dir) + "/" + std::string(pod_paths::container_disk_binary_name);
  std::size_t index = 0;
  for (const json::Value* volume : volumes_of(vmi)) {
    const std::string volume_name(json::find_string(*volume, "name"));
    std::string claim;
    bool claim_read_only = false;
    if (const json::Value* pvc = json::find_object(*volume, "persistentVolumeClaim"); pvc != nullptr) {
      claim = json::find_string(*pvc, "claimName");
      claim_read_only = bool_member(pvc, "readOnly", false);
    } else if (const json::Value* data_volume = json::find_object(*volume, "dataVolume"); data_volume != nullptr) {
      claim = json::find_string(*data_volume, "name");  // CDI names the PVC after the DataVolume
    }
    if (!claim.empty()) {
      json::Value entry(rapidjson::kObjectType);
      json::set_string(entry, "name", volume_name, a);
      json::Value source(rapidjson::kObjectType);
      json::set_string(source, "claimName", claim, a);
      if (claim_read_only) {
        json::set(source, "readOnly", json::Value(true), a);
      }
      json::set(entry, "persistentVolumeClaim", std::move(source), a);
      volumes.PushBack(entry, a);
      std::string claim_key = namespace_name;
      claim_key.append("/").append(claim);
      if (settings.block_claims.count(claim_key) != 0) {
        mount(devices, volume_name, std::string(pod_paths::block_device_dir) + "/" + volume_name, false, "devicePath");
      } else {
        mount(mounts, volume_name, std::string(pod_paths::pvc_dir) + "/" + volume_name, claim_read_only);
      }
    } else if (const json::Value* host = json::find_object(*volume, "hostDisk"); host != nullptr) {
      // handleHostDisk: the node's directory of the path, where the launcher reads the file.
      const std::string field = "spec.volumes[" + std::to_string(index) + "].hostDisk";
      if (!settings.host_disk_enabled) {
        return Error{field + ": HostDisk feature gate is not enabled"};
      }
      const std::string_view node_path = json::find_string(*host, "path");
      if (pod_paths::host_disk_file_name(node_path).empty()) {
        return Error{field + ".path: must be an absolute path to a file of the node"};
      }
      json::Value entry(rapidjson::kObjectType);
      json::set_string(entry, "name", volume_name, a);
      json::Value source(rapidjson::kObjectType);
      json::set_string(source, "path", pod_paths::host_disk_node_dir(node_path), a);
      json::set_string(source, "type",
                       json::find_string(*host, "type") == "DiskOrCreate" ? "DirectoryOrCreate" : "Directory", a);
      json::set(entry, "hostPath", std::move(source), a);
      volumes.PushBack(entry, a);
      mount(mounts, volume_name, std::string(pod_paths::pvc_dir) + "/" + volume_name, false);
    } else if (const json::Value* copied_disk = json::find_object(*volume, "containerDisk");
               copied_disk != nullptr && settings.container_disk_delivery == ContainerDiskDelivery::copy) {
      // The image's disk copied by an init container running in that image (KubeVirt's
      // container-disk init containers, which pre-pull the image the same way), into an
      // emptyDir mounted where the image volume would be: the launcher reads it unchanged.
      const std::string mount_path = pod_paths::container_disk_volume(pod_paths::image_volume_dir, index);
      const std::string copy_volume = pod_paths::container_disk_copy_volume(index);
      if (init_containers.Empty()) {
        json::Value installer(rapidjson::kObjectType);
        json::set_string(installer, "name", pod_paths::container_disk_binary_container, a);
        json::set_string(installer, "image", settings.image, a);
        json::set(installer, "command", string_array({settings.container_disk_binary, "install", binary_in_init}, a),
                  a);
        json::Value installer_mounts(rapidjson::kArrayType);
        mount(installer_mounts, pod_paths::container_disk_binary_volume,
              std::string(pod_paths::container_disk_binary_dir), false);
        json::set(installer, "volumeMounts", std::move(installer_mounts), a);
        json::set(installer, "resources", helper_resources(container_disk_binary_resources, guaranteed, a), a);
        json::set(installer, "securityContext", unprivileged(a), a);
        json::set_string(installer, "terminationMessagePolicy", "FallbackToLogsOnError", a);
        init_containers.PushBack(installer, a);
        empty_dir_volume(std::string(pod_paths::container_disk_binary_volume));
      }
      json::Value copier(rapidjson::kObjectType);
      json::set_string(copier, "name", container_disk_copy_container_name(volume_name), a);
      json::set_string(copier, "image", json::find_string(*copied_disk, "image"), a);
      if (const std::string_view policy = json::find_string(*copied_disk, "imagePullPolicy"); !policy.empty()) {
        json::set_string(copier, "imagePullPolicy", policy, a);
      }
      json::set(copier, "command", string_array({binary_in_init, "copy", "--to", mount_path}, a), a);
      json::Value copier_mounts(rapidjson::kArrayType);
      mount(copier_mounts, pod_paths::container_disk_binary_volume, std::string(pod_paths::container_disk_binary_dir),
            true);
      mount(copier_mounts, copy_volume, mount_path, false);
      json::set(copier, "volumeMounts", std::move(copier_mounts), a);
      json::set(copier, "resources", helper_resources(container_disk_copy_resources, guaranteed, a), a);
      json::set(copier, "securityContext", unprivileged(a, {"DAC_OVERRIDE"}), a);
      json::set_string(copier, "terminationMessagePolicy", "FallbackToLogsOnError", a);
      init_containers.PushBack(copier, a);
      empty_dir_volume(copy_volume);
      mount(mounts, copy_volume, mount_path, true);
    } else if (const json::Value* disk = json::find_object(*volume, "containerDisk"); disk != nullptr) {
      // withImageVolumes: the image as a pod image volume, mounted read-only at disk_<index>.
      json::Value entry(rapidjson::kObjectType);
      json::set_string(entry, "name", volume_name, a);
      json::Value source(rapidjson::kObjectType);
      json::set_string(source, "reference", json::find_string(*disk, "image"), a);
      if (const std::string_view policy = json::find_string(*disk, "imagePullPolicy"); !policy.empty()) {
        json::set_string(source, "pullPolicy", policy, a);
      }
      json::set(entry, "image", std::move(source), a);
      volumes.PushBack(entry, a);
      mount(mounts, volume_name, pod_paths::container_disk_volume(pod_paths::image_volume_dir, index), true);
    }
    ++index;
  }
  if (const json::Value* hugepages = json::find_path(vmi, {"spec", "domain", "memory", "hugepages"});
      hugepages != nullptr) {
    // withHugepages: two emptyDirs on hugetlbfs, /dev/hugepages and libvirt's directory below it.
    for (const auto& [volume_name, path] : {std::pair<std::string, std::string>{"hugepages", hugepages_dir},
                                            {"hugetblfs-dir", std::string(hugepages_dir) + "/libvirt/qemu"}}) {
      json::Value entry(rapidjson::kObjectType);
      json::set_string(entry, "name", volume_name, a);
      json::Value empty_dir(rapidjson::kObjectType);
      json::set_string(empty_dir, "medium", "HugePages", a);
      json::set(entry, "emptyDir", std::move(empty_dir), a);
      volumes.PushBack(entry, a);
      mount(mounts, volume_name, path, false);
    }
  }
  // The VMI, from the annotation above, as the file the launcher reads.
  json::Value item(rapidjson::kObjectType);
  json::set_string(item, "path", pod_paths::vmi_file_name, a);
  json::Value field(rapidjson::kObjectType);
  json::set_string(field, "fieldPath", "metadata.annotations['" + std::string(pod_paths::vmi_annotation) + "']", a);
  json::set(item, "fieldRef", std::move(field), a);
  json::Value items(rapidjson::kArrayType);
  items.PushBack(item, a);
  json::Value downward(rapidjson::kObjectType);
  json::set(downward, "items", std::move(items), a);
  json::Value vmi_file(rapidjson::kObjectType);
  json::set_string(vmi_file, "name", pod_paths::vmi_volume, a);
  json::set(vmi_file, "downwardAPI", std::move(downward), a);
  volumes.PushBack(vmi_file, a);
  mount(mounts, pod_paths::vmi_volume, std::string(pod_paths::vmi_dir), true);
  // The status file and the console log: written by compute, read by guest-console-log and,
  // through the kubelet's directory, by the node agent.
  empty_dir_volume(std::string(pod_paths::private_volume));
  mount(mounts, pod_paths::private_volume, private_dir, false);
  if (logs_serial_console(vmi)) {
    // KubeVirt's guest-console-log: a sidecar (an init container that keeps running), started
    // before the others and stopped by the kubelet after compute has ended, so that it sees
    // the guest's last words and never holds the pod up.
    json::Value tail(rapidjson::kObjectType);
    json::set_string(tail, "name", pod_paths::guest_console_log_container, a);
    json::set_string(tail, "image", settings.image, a);
    json::set(tail, "command",
              string_array({settings.launcher_binary, "--tail-console", serial_log, "--until-status", status_file}, a),
              a);
    json::Value tail_mounts(rapidjson::kArrayType);
    mount(tail_mounts, pod_paths::private_volume, private_dir, true);
    json::set(tail, "volumeMounts", std::move(tail_mounts), a);
    json::set(tail, "resources", helper_resources(guest_console_log_resources, guaranteed, a), a);
    json::set(tail, "securityContext", unprivileged(a), a);
    json::set_string(tail, "restartPolicy", "Always", a);
    json::Value with_tail(rapidjson::kArrayType);
    with_tail.PushBack(tail, a);
    for (auto& other : init_containers.GetArray()) {
      with_tail.PushBack(other, a);
    }
    init_containers = std::move(with_tail);
  }
  // A VMI volume named as one of the pod's own (private, vmi, hugepages, container-disk-0...)
  // would make a pod the API server refuses, at every pass.
  std::set<std::string_view> volume_names;
  for (const json::Value& entry : volumes.GetArray()) {
    if (const std::string_view volume_name = json::find_string(entry, "name");
        !volume_names.insert(volume_name).second) {
      return Error{"spec.volumes: the name \"" + std::string(volume_name) +
                   "\" is one the launcher pod uses for a volume of its own"};
    }
  }
  if (!mounts.Empty()) {
    json::set(container, "volumeMounts", std::move(mounts), a);
  }
  if (!devices.Empty()) {
    json::set(container, "volumeDevices", std::move(devices), a);
  }
  json::Value containers(rapidjson::kArrayType);
  containers.PushBack(container, a);
  json::set(pod_spec, "containers", std::move(containers), a);
  if (!init_containers.Empty()) {
    json::set(pod_spec, "initContainers", std::move(init_containers), a);
  }
  if (!volumes.Empty()) {
    json::set(pod_spec, "volumes", std::move(volumes), a);
  }
  return pod;
}

}  // namespace vmgate::controller
