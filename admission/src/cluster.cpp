// ObjectStore, object kinds and the KubeVirt CR configuration.
#include "vmgate/admission/cluster.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace vmgate::admission {

namespace {

struct KindInfo {
  ObjectKind kind;
  std::string_view name;
  std::string_view resource;
  std::string_view group_resource;
  bool namespaced;
  std::array<std::string_view, 3> short_names;
};

// Short names as the CRDs declare them (kubectl api-resources).
constexpr std::array<KindInfo, 10> kinds{{
    {ObjectKind::instancetype,
     "VirtualMachineInstancetype",
     "virtualmachineinstancetypes",
     "virtualmachineinstancetypes.instancetype.kubevirt.io",
     true,
     {"vminstancetype", "vminstancetypes", "vmf"}},
    {ObjectKind::cluster_instancetype,
     "VirtualMachineClusterInstancetype",
     "virtualmachineclusterinstancetypes",
     "virtualmachineclusterinstancetypes.instancetype.kubevirt.io",
     false,
     {"vmclusterinstancetype", "vmclusterinstancetypes", "vmcf"}},
    {ObjectKind::preference,
     "VirtualMachinePreference",
     "virtualmachinepreferences",
     "virtualmachinepreferences.instancetype.kubevirt.io",
     true,
     {"vmpref", "vmprefs", "vmp"}},
    {ObjectKind::cluster_preference,
     "VirtualMachineClusterPreference",
     "virtualmachineclusterpreferences",
     "virtualmachineclusterpreferences.instancetype.kubevirt.io",
     false,
     {"vmcpref", "vmcprefs", "vmcp"}},
    {ObjectKind::persistent_volume_claim,
     "PersistentVolumeClaim",
     "persistentvolumeclaims",
     "persistentvolumeclaims",
     true,
     {"pvc", "", ""}},
    {ObjectKind::data_volume, "DataVolume", "datavolumes", "datavolumes.cdi.kubevirt.io", true, {"dv", "dvs", ""}},
    {ObjectKind::data_source, "DataSource", "datasources", "datasources.cdi.kubevirt.io", true, {"das", "", ""}},
    {ObjectKind::volume_snapshot,
     "VolumeSnapshot",
     "volumesnapshots",
     "volumesnapshots.snapshot.storage.k8s.io",
     true,
     {"vs", "", ""}},
    {ObjectKind::controller_revision,
     "ControllerRevision",
     "controllerrevisions",
     "controllerrevisions.apps",
     true,
     {"", "", ""}},
    {ObjectKind::kubevirt, "KubeVirt", "kubevirts", "kubevirts.kubevirt.io", true, {"kv", "kvs", ""}},
}};

const KindInfo& info(ObjectKind kind) {
  for (const KindInfo& k : kinds) {
    if (k.kind == kind) {
      return k;
    }
  }
  return kinds[0];  // unreachable: every enumerator is in the table
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string key_of(ObjectKind kind, std::string_view namespace_name, std::string_view name) {
  std::string key;
  key.reserve(4 + namespace_name.size() + name.size());
  key.push_back(static_cast<char>('0' + static_cast<int>(kind)));
  key.push_back('/');
  if (is_namespaced(kind)) {
    key.append(namespace_name);
  }
  key.push_back('/');
  key.append(name);
  return key;
}

// Transparent hashing so find() does not allocate a std::string per lookup.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

std::optional<ObjectKind> parse_object_kind(std::string_view name) {
  if (name.empty()) {
    return std::nullopt;
  }
  for (const KindInfo& k : kinds) {
    if (iequals(name, k.name) || iequals(name, k.resource) || iequals(name, k.group_resource)) {
      return k.kind;
    }
    for (std::string_view short_name : k.short_names) {
      if (!short_name.empty() && iequals(name, short_name)) {
        return k.kind;
      }
    }
  }
  return std::nullopt;
}

std::string_view kind_name(ObjectKind kind) {
  return info(kind).name;
}
std::string_view resource_name(ObjectKind kind) {
  return info(kind).resource;
}
std::string_view group_resource(ObjectKind kind) {
  return info(kind).group_resource;
}
bool is_namespaced(ObjectKind kind) {
  return info(kind).namespaced;
}

namespace {
// virt-config.go GetMachineType / GetEmulatedMachines switch on arm64 and s390x; every other
// architecture (amd64, "", ppc64le, ...) reads the amd64 settings.
std::string_view config_arch(std::string_view arch) {
  return arch == "arm64" || arch == "s390x" ? arch : std::string_view("amd64");
}
}  // namespace

std::string ClusterConfig::machine_type_for(std::string_view arch) const {
  // virt-config.go GetMachineType: the deprecated cluster-wide machineType wins over the
  // per-arch architectureConfiguration.<arch>.machineType.
  if (!machine_type.empty()) {
    return machine_type;
  }
  const std::string_view key = config_arch(arch);
  if (auto it = arch_machine_type.find(std::string(key)); it != arch_machine_type.end() && !it->second.empty()) {
    return it->second;
  }
  if (key == "arm64") {
    return "virt";
  }
  if (key == "s390x") {
    return "s390-ccw-virtio";
  }
  return "q35";
}

std::vector<std::string> ClusterConfig::emulated_machines_for(std::string_view arch) const {
  const std::string_view key = config_arch(arch);
  if (auto it = arch_emulated_machines.find(std::string(key)); it != arch_emulated_machines.end()) {
    return it->second;
  }
  // pkg/virt-config/virt-config.go defaults.
  if (key == "arm64") {
    return {"virt*"};
  }
  if (key == "s390x") {
    return {"s390-ccw-virtio*"};
  }
  return {"q35*", "pc-q35*"};
}

namespace {
// pkg/virt-config/featuregate/{active,inactive}.go at the reference commit. featuregate.IsEnabled:
// a GA gate is always on, then a gate listed in developerConfiguration.featureGates is on, one
// listed in disabledFeatureGates off, and otherwise a Beta gate is on and an Alpha gate off.
constexpr std::array<std::string_view, 15> beta_gates{"ImageVolume",
                                                      "Snapshot",
                                                      "WorkloadEncryptionSEV",
                                                      "KubevirtSeccompProfile",
                                                      "NodeRestriction",
                                                      "GPUsWithDRA",
                                                      "HostDevicesWithDRA",
                                                      "DecentralizedLiveMigration",
                                                      "DeclarativeHotplugVolumes",
                                                      "PasstBinding",
                                                      "PodSecondaryInterfaceNamingUpgrade",
                                                      "ExternalNetResourceInjection",
                                                      "RebootPolicy",
                                                      "Template",
                                                      "OptOutRoleAggregation"};
constexpr std::array<std::string_view, 31> ga_gates{"LiveMigration",
                                                    "SRIOVLiveMigration",
                                                    "NonRoot",
                                                    "PSA",
                                                    "CPUNodeDiscovery",
                                                    "NUMA",
                                                    "CommonInstancetypesDeploymentGate",
                                                    "GPU",
                                                    "HotplugNICs",
                                                    "BochsDisplayForEFIGuests",
                                                    "VMLiveUpdateFeatures",
                                                    "NetworkBindingPlugins",
                                                    "DynamicPodInterfaceNaming",
                                                    "VolumesUpdateStrategy",
                                                    "VolumeMigration",
                                                    "DisableCustomSELinuxPolicy",
                                                    "AutoResourceLimitsGate",
                                                    "ClusterProfiler",
                                                    "VMPersistentState",
                                                    "VMExport",
                                                    "PersistentReservation",
                                                    "InstancetypeReferencePolicy",
                                                    "EnableVirtioFsConfigVolumes",
                                                    "ExpandDisks",
                                                    "PanicDevices",
                                                    "LiveUpdateNADRef",
                                                    "VideoConfig",
                                                    "SecureExecution",
                                                    "MigrationPriorityQueue",
                                                    "VmiMemoryOverheadReport",
                                                    "LibvirtHooksServerAndClient"};
}  // namespace

bool ClusterConfig::feature_gate_enabled(std::string_view gate) const {
  const auto listed = [gate](const std::vector<std::string>& gates) {
    return std::find(gates.begin(), gates.end(), gate) != gates.end();
  };
  if (std::find(ga_gates.begin(), ga_gates.end(), gate) != ga_gates.end() || listed(feature_gates)) {
    return true;
  }
  if (listed(disabled_feature_gates)) {
    return false;
  }
  return std::find(beta_gates.begin(), beta_gates.end(), gate) != beta_gates.end();
}

bool ClusterConfig::persistent_reservation_enabled() const {
  if (persistent_reservation.has_value()) {
    return *persistent_reservation;
  }
  return std::find(feature_gates.begin(), feature_gates.end(), "PersistentReservation") != feature_gates.end();
}

namespace {

// Reads an optional string setting; a present value of another type is an error.
bool read_string(const json::Value& parent, std::string_view key, std::string_view path, std::string& out,
                 std::string& problems) {
  const json::Value* v = json::find(parent, key);
  if (v == nullptr || v->IsNull()) {
    return true;
  }
  if (!v->IsString()) {
    problems.append(problems.empty() ? "" : "; ").append(path).append(" must be a string");
    return false;
  }
  out = std::string(json::as_view(*v));
  return true;
}

void read_uint(const json::Value& parent, std::string_view key, std::string_view path, std::uint32_t& out,
               std::string& problems) {
  const json::Value* v = json::find(parent, key);
  if (v == nullptr || v->IsNull()) {
    return;
  }
  if (!v->IsUint()) {
    problems.append(problems.empty() ? "" : "; ").append(path).append(" must be a non-negative integer");
    return;
  }
  out = v->GetUint();
}

// A list of strings; any other element makes the whole setting an error.
void read_string_list(const json::Value& parent, std::string_view key, std::string_view path,
                      std::vector<std::string>& out, std::string& problems) {
  const json::Value* v = json::find(parent, key);
  if (v == nullptr || v->IsNull()) {
    return;
  }
  const bool strings =
      v->IsArray() && std::all_of(v->Begin(), v->End(), [](const json::Value& item) { return item.IsString(); });
  if (!strings) {
    problems.append(problems.empty() ? "" : "; ").append(path).append(" must be a list of strings");
    return;
  }
  for (const json::Value& item : v->GetArray()) {
    out.emplace_back(json::as_view(item));
  }
}

// Reads an optional boolean setting; true when one was read.
bool read_bool(const json::Value& parent, std::string_view key, std::string_view path, bool& out,
               std::string& problems) {
  const json::Value* v = json::find(parent, key);
  if (v == nullptr || v->IsNull()) {
    return false;
  }
  if (!v->IsBool()) {
    problems.append(problems.empty() ? "" : "; ").append(path).append(" must be true or false");
    return false;
  }
  out = v->GetBool();
  return true;
}

// configuration.go validateConfig: the settings whose bad values make KubeVirt ignore the whole
// configuration; its message, or "" when none is bad.
std::string kubevirt_rejection(const json::Value& configuration) {
  const std::string_view pull_policy = json::find_string(configuration, "imagePullPolicy");
  if (!pull_policy.empty() && pull_policy != "Always" && pull_policy != "Never" && pull_policy != "IfNotPresent") {
    return "invalid dev.imagePullPolicy in config: " + std::string(pull_policy);
  }
  if (const json::Value* developer = json::find_object(configuration, "developerConfiguration")) {
    const auto integer = [developer](std::string_view key) -> std::optional<std::int64_t> {
      const json::Value* value = json::find(*developer, key);
      return value != nullptr && value->IsInt64() ? std::optional<std::int64_t>(value->GetInt64()) : std::nullopt;
    };
    if (const auto overcommit = integer("memoryOvercommit"); overcommit && *overcommit <= 0) {
      return "invalid memoryOvercommit in ConfigMap: " + std::to_string(*overcommit);
    }
    if (const auto ratio = integer("cpuAllocationRatio"); ratio && *ratio <= 0) {
      return "invalid cpu allocation ratio in ConfigMap: " + std::to_string(*ratio);
    }
    if (const auto toleration = integer("lessPVCSpaceToleration");
        toleration && (*toleration < 0 || *toleration > 100)) {
      return "invalid lessPVCSpaceToleration in ConfigMap: " + std::to_string(*toleration);
    }
  }
  const json::Value* network = json::find_object(configuration, "network");
  const std::string_view interface = network != nullptr ? json::find_string(*network, "defaultNetworkInterface") : "";
  if (!interface.empty() && interface != "bridge" && interface != "slirp" && interface != "masquerade") {
    return "invalid default-network-interface in config: " + std::string(interface);
  }
  return {};
}

}  // namespace

Result<ClusterConfig> ClusterConfig::from_kubevirt(const json::Value& kubevirt) {
  ClusterConfig config;
  std::string problems;
  if (const json::Value* arch = json::find_path(kubevirt, {"status", "defaultArchitecture"})) {
    if (arch->IsString() && arch->GetStringLength() > 0) {
      config.default_architecture = std::string(json::as_view(*arch));
    }
  }
  if (const json::Value* annotations = json::find_path(kubevirt, {"metadata", "annotations"});
      annotations != nullptr && annotations->IsObject()) {
    config.emulator_thread_even_parity =
        json::has(*annotations, "alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity");
  }
  const json::Value* configuration = json::find_path(kubevirt, {"spec", "configuration"});
  if (configuration == nullptr || configuration->IsNull()) {
    return config;
  }
  if (!configuration->IsObject()) {
    return Error{"spec.configuration must be an object"};
  }
  const json::Value& c = *configuration;
  read_string(c, "cpuModel", "spec.configuration.cpuModel", config.cpu_model, problems);
  read_string(c, "machineType", "spec.configuration.machineType", config.machine_type, problems);
  read_string(c, "evictionStrategy", "spec.configuration.evictionStrategy", config.eviction_strategy, problems);
  read_string(c, "vmRolloutStrategy", "spec.configuration.vmRolloutStrategy", config.vm_rollout_strategy, problems);
  if (const json::Value* cpu_request = json::find(c, "cpuRequest"); cpu_request != nullptr) {
    if (cpu_request->IsString()) {
      config.cpu_request = std::string(json::as_view(*cpu_request));
    } else if (cpu_request->IsInt64()) {
      config.cpu_request = std::to_string(cpu_request->GetInt64());
    } else if (!cpu_request->IsNull()) {
      problems.append(problems.empty() ? "" : "; ").append("spec.configuration.cpuRequest must be a quantity");
    }
  }
  if (const json::Value* arches = json::find(c, "architectureConfiguration"); arches != nullptr && arches->IsObject()) {
    read_string(*arches, "defaultArchitecture", "spec.configuration.architectureConfiguration.defaultArchitecture",
                config.default_architecture, problems);
    for (std::string_view arch : {"amd64", "arm64", "s390x", "ppc64le"}) {
      const json::Value* per_arch = json::find(*arches, arch);
      if (per_arch == nullptr || !per_arch->IsObject()) {
        continue;
      }
      std::string machine;
      std::string path = "spec.configuration.architectureConfiguration." + std::string(arch);
      read_string(*per_arch, "machineType", path + ".machineType", machine, problems);
      if (!machine.empty()) {
        config.arch_machine_type[std::string(arch)] = machine;
      }
      if (const json::Value* machines = json::find_array(*per_arch, "emulatedMachines")) {
        std::vector<std::string> globs;
        for (const json::Value& glob : machines->GetArray()) {
          if (glob.IsString()) {
            globs.emplace_back(json::as_view(glob));
          } else {
            problems.append(problems.empty() ? "" : "; ").append(path + ".emulatedMachines must hold strings");
          }
        }
        config.arch_emulated_machines[std::string(arch)] = std::move(globs);
      }
    }
  }
  // Deprecated spec.configuration.emulatedMachines overrides every architecture's list
  // (virt-config.go GetEmulatedMachines).
  if (const json::Value* machines = json::find(c, "emulatedMachines"); machines != nullptr && !machines->IsNull()) {
    std::vector<std::string> globs;
    if (machines->IsArray()) {
      for (const json::Value& glob : machines->GetArray()) {
        if (glob.IsString()) {
          globs.emplace_back(json::as_view(glob));
        } else {
          problems.append(problems.empty() ? "" : "; ").append("spec.configuration.emulatedMachines must hold strings");
        }
      }
    } else {
      problems.append(problems.empty() ? "" : "; ")
          .append("spec.configuration.emulatedMachines must be a list of strings");
    }
    for (std::string_view arch : {"amd64", "arm64", "s390x"}) {
      config.arch_emulated_machines[std::string(arch)] = globs;
    }
  }
  if (const json::Value* developer = json::find_object(c, "developerConfiguration")) {
    read_string_list(*developer, "featureGates", "spec.configuration.developerConfiguration.featureGates",
                     config.feature_gates, problems);
    read_string_list(*developer, "disabledFeatureGates",
                     "spec.configuration.developerConfiguration.disabledFeatureGates", config.disabled_feature_gates,
                     problems);
  }
  if (const json::Value* instancetype = json::find_object(c, "instancetype")) {
    read_string(*instancetype, "referencePolicy", "spec.configuration.instancetype.referencePolicy",
                config.instancetype_reference_policy, problems);
    if (config.instancetype_reference_policy.empty()) {
      config.instancetype_reference_policy = "reference";
    }
  }
  if (const json::Value* network = json::find_object(c, "network")) {
    read_string(*network, "defaultNetworkInterface", "spec.configuration.network.defaultNetworkInterface",
                config.default_network_interface, problems);
    if (config.default_network_interface.empty()) {
      config.default_network_interface = "bridge";
    }
    read_bool(*network, "permitBridgeInterfaceOnPodNetwork",
              "spec.configuration.network.permitBridgeInterfaceOnPodNetwork",
              config.permit_bridge_interface_on_pod_network, problems);
  }
  if (const json::Value* reservation = json::find_object(c, "persistentReservationConfiguration")) {
    bool enabled = false;
    if (read_bool(*reservation, "enabled", "spec.configuration.persistentReservationConfiguration.enabled", enabled,
                  problems)) {
      config.persistent_reservation = enabled;
    }
  }
  if (const json::Value* live = json::find_object(c, "liveUpdateConfiguration")) {
    read_uint(*live, "maxHotplugRatio", "spec.configuration.liveUpdateConfiguration.maxHotplugRatio",
              config.max_hotplug_ratio, problems);
    read_uint(*live, "maxCpuSockets", "spec.configuration.liveUpdateConfiguration.maxCpuSockets",
              config.max_cpu_sockets, problems);
    if (const json::Value* max_guest = json::find(*live, "maxGuest"); max_guest != nullptr && max_guest->IsString()) {
      config.max_guest = std::string(json::as_view(*max_guest));
    }
    if (config.max_hotplug_ratio == 0) {
      config.max_hotplug_ratio = 4;
    }
  }
  if (!problems.empty()) {
    return Error{problems};
  }
  if (std::string rejection = kubevirt_rejection(c); !rejection.empty()) {
    // configuration.go: an invalid configuration is not applied; virt-api keeps the last valid
    // one, the defaults for a cluster that never had one. The reason travels as a warning.
    ClusterConfig defaults;
    defaults.ignored_configuration = std::move(rejection);
    return defaults;
  }
  return config;
}

struct ObjectStore::Impl {
  json::Document documents{rapidjson::kArrayType};  // owns every object (stable allocator)
  std::unordered_map<std::string, json::Document, StringHash, std::equal_to<>> objects;
  std::array<std::size_t, kinds.size()> counts{};
  ClusterConfig config;
};

ObjectStore::ObjectStore() : impl_(std::make_unique<Impl>()) {}
ObjectStore::ObjectStore(ObjectStore&&) noexcept = default;
ObjectStore& ObjectStore::operator=(ObjectStore&&) noexcept = default;
ObjectStore::~ObjectStore() = default;

Result<ObjectKind> ObjectStore::add(const json::Value& object, std::string_view default_namespace) {
  if (!object.IsObject()) {
    return Error{"object is not a JSON/YAML mapping"};
  }
  std::string_view kind_text = json::find_string(object, "kind");
  std::optional<ObjectKind> kind = parse_object_kind(kind_text);
  // Only exact Kind names identify stored objects; short names are for humans on the command line.
  if (!kind || kind_text != kind_name(*kind)) {
    return Error{"kind " + std::string(kind_text.empty() ? "(none)" : kind_text) + " is not an object vmgate reads"};
  }
  const json::Value* metadata = json::find(object, "metadata");
  const json::Value* name = metadata != nullptr ? json::find(*metadata, "name") : nullptr;
  if (name == nullptr || !name->IsString() || name->GetStringLength() == 0) {
    return Error{"metadata.name is required"};
  }
  std::string_view namespace_name = metadata != nullptr ? json::find_string(*metadata, "namespace") : "";
  if (namespace_name.empty()) {
    namespace_name = default_namespace;
  }
  if (*kind == ObjectKind::kubevirt) {
    Result<ClusterConfig> config = ClusterConfig::from_kubevirt(object);
    if (!config) {
      return Error{"KubeVirt " + std::string(json::as_view(*name)) + ": " + config.error().message};
    }
    impl_->config = std::move(config.value());
  }
  json::Document stored;
  stored.CopyFrom(object, stored.GetAllocator());
  auto [it, inserted] =
      impl_->objects.insert_or_assign(key_of(*kind, namespace_name, json::as_view(*name)), std::move(stored));
  (void)it;
  if (inserted) {
    ++impl_->counts[static_cast<std::size_t>(*kind)];
  }
  return *kind;
}

const json::Value* ObjectStore::find(ObjectKind kind, std::string_view namespace_name, std::string_view name) const {
  auto it = impl_->objects.find(key_of(kind, namespace_name, name));
  return it == impl_->objects.end() ? nullptr : &it->second;
}

const ClusterConfig& ObjectStore::config() const {
  return impl_->config;
}
std::size_t ObjectStore::size() const {
  return impl_->objects.size();
}
std::size_t ObjectStore::count(ObjectKind kind) const {
  return impl_->counts[static_cast<std::size_t>(kind)];
}

}  // namespace vmgate::admission
