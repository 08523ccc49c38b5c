// ObjectStore, object kinds and the KubeVirt CR configuration.
#include "vmgate/admission/cluster.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "vmgate/common/ascii.hpp"
#include "vmgate/common/json_field.hpp"

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

std::string key_of(ObjectKind kind, std::string_view namespace_name, std::string_view name) {
  const bool namespaced = is_namespaced(kind);
  std::string key;
  // Exactly the key's size: a cluster-scoped one of a short name then fits the string's own
  // buffer, with no allocation per lookup.
  key.reserve(3 + (namespaced ? namespace_name.size() : 0) + name.size());
  key.push_back(static_cast<char>('0' + static_cast<int>(kind)));
  key.push_back('/');
  if (namespaced) {
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
    if (common::equals_ignoring_ascii_case(name, k.name) || common::equals_ignoring_ascii_case(name, k.resource) ||
        common::equals_ignoring_ascii_case(name, k.group_resource)) {
      return k.kind;
    }
    for (std::string_view short_name : k.short_names) {
      if (!short_name.empty() && common::equals_ignoring_ascii_case(name, short_name)) {
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
// The GA gates above that v1.8 (pkg/virt-config/featuregate at v1.8.2) still has as Alpha or Beta.
constexpr std::array<std::string_view, 10> graduated_after_v1_8{"VMExport",
                                                                "PersistentReservation",
                                                                "ExpandDisks",
                                                                "PanicDevices",
                                                                "LiveUpdateNADRef",
                                                                "VideoConfig",
                                                                "SecureExecution",
                                                                "MigrationPriorityQueue",
                                                                "VmiMemoryOverheadReport",
                                                                "LibvirtHooksServerAndClient"};

// The GA gates above that v1.7 (pkg/virt-config/featuregate at v1.7.0) still has as Alpha.
constexpr std::array<std::string_view, 1> graduated_after_v1_7{"EnableVirtioFsConfigVolumes"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& gates, std::string_view gate) {
  return std::find(gates.begin(), gates.end(), gate) != gates.end();
}
}  // namespace

bool ClusterConfig::feature_gate_enabled(std::string_view gate) const {
  const auto listed = [gate](const std::vector<std::string>& gates) {
    return std::find(gates.begin(), gates.end(), gate) != gates.end();
  };
  const bool ga = contains(ga_gates, gate) && !(release <= Release::v1_8 && contains(graduated_after_v1_8, gate)) &&
                  !(release <= Release::v1_7 && contains(graduated_after_v1_7, gate));
  if (ga || listed(feature_gates)) {
    return true;
  }
  if (listed(disabled_feature_gates)) {
    return false;
  }
  // v1.8's isFeatureGateEnabled (pkg/virt-config/feature-gates.go) turns on only what the CR
  // lists: Beta gates are on by default from the release after it.
  return release > Release::v1_8 && contains(beta_gates, gate);
}

bool ClusterConfig::persistent_reservation_enabled() const {
  if (persistent_reservation.has_value()) {
    return *persistent_reservation;
  }
  return std::find(feature_gates.begin(), feature_gates.end(), "PersistentReservation") != feature_gates.end();
}

namespace {

// A setting of the CR: nullopt when unset (absent or null), an error naming its path when set
// to another type. The setting lives at `parent_path` + "." + `key`.
template <class T>
using Setting = Result<std::optional<T>>;

std::string setting_path(std::string_view parent_path, std::string_view key) {
  return std::string(parent_path).append(".").append(key);
}

// "<path> must be <what>": these messages name what was expected, not what was found.
Error must_be(std::string_view parent_path, std::string_view key, std::string_view what) {
  return Error{setting_path(parent_path, key).append(" must be ").append(what)};
}

Setting<std::string> string_setting(const json::Value& parent, std::string_view parent_path, std::string_view key) {
  json::Field<std::string_view> field = json::read_string(parent, key);
  if (!field) {
    return must_be(parent_path, key, json::describe(field.error().expected));
  }
  if (!field->has_value()) {
    return std::optional<std::string>();
  }
  return std::optional<std::string>(**field);
}

Setting<std::uint32_t> uint_setting(const json::Value& parent, std::string_view parent_path, std::string_view key) {
  json::Field<std::uint32_t> field = json::read_uint32(parent, key);
  if (!field) {
    return must_be(parent_path, key, json::describe(field.error().expected));
  }
  return *field;
}

Setting<bool> bool_setting(const json::Value& parent, std::string_view parent_path, std::string_view key) {
  json::Field<bool> field = json::read_bool(parent, key);
  if (!field) {
    return must_be(parent_path, key, "true or false");
  }
  return *field;
}

// A list of strings; any other element makes the whole setting an error.
Setting<std::vector<std::string>> string_list_setting(const json::Value& parent, std::string_view parent_path,
                                                      std::string_view key) {
  json::Field<std::vector<std::string_view>> field = json::read_string_list(parent, key);
  if (!field) {
    return must_be(parent_path, key, json::describe(field.error().expected));
  }
  if (!field->has_value()) {
    return std::optional<std::vector<std::string>>();
  }
  return std::optional<std::vector<std::string>>(std::in_place, (*field)->begin(), (*field)->end());
}

Setting<std::int64_t> int_setting(const json::Value& parent, std::string_view parent_path, std::string_view key) {
  json::Field<std::int64_t> field = json::read_int64(parent, key);
  if (!field) {
    return must_be(parent_path, key, json::describe(field.error().expected));
  }
  return *field;
}

// A map[string]string (nodeSelectors); a value that is not a string makes the whole setting an
// error, as Go's decoder refuses the CR.
Setting<std::map<std::string, std::string>> string_map_setting(const json::Value& parent, std::string_view parent_path,
                                                               std::string_view key) {
  json::Field<const json::Value*> field = json::read_object(parent, key);
  if (!field) {
    return must_be(parent_path, key, "a map of strings");
  }
  if (!field->has_value()) {
    return std::optional<std::map<std::string, std::string>>();
  }
  std::map<std::string, std::string> out;
  for (const auto& member : field->value()->GetObject()) {
    if (!member.value.IsString()) {
      return must_be(parent_path, key, "a map of strings");
    }
    out.emplace(json::as_view(member.name), json::as_view(member.value));
  }
  return std::optional<std::map<std::string, std::string>>(std::move(out));
}

// cpuRequest is a quantity, which the CR may spell as a string or as an integer.
Setting<std::string> cpu_request_setting(const json::Value& configuration) {
  const json::Value* value = json::find(configuration, "cpuRequest");
  if (value == nullptr || value->IsNull()) {
    return std::optional<std::string>();
  }
  if (value->IsString()) {
    return std::optional<std::string>(json::as_view(*value));
  }
  if (value->IsInt64()) {
    return std::optional<std::string>(std::to_string(value->GetInt64()));
  }
  return must_be("spec.configuration", "cpuRequest", "a quantity");
}

// The machine type globs of an emulatedMachines array. Every element that is not a string is a
// problem of its own, so the error repeats the message once per such element.
Setting<std::vector<std::string>> machine_globs(const json::Value& machines, std::string_view parent_path) {
  std::vector<std::string> globs;
  std::string problems;
  for (const json::Value& glob : machines.GetArray()) {
    if (glob.IsString()) {
      globs.emplace_back(json::as_view(glob));
    } else {
      problems.append(problems.empty() ? "" : "; ")
          .append(setting_path(parent_path, "emulatedMachines"))
          .append(" must hold strings");
    }
  }
  if (!problems.empty()) {
    return Error{std::move(problems)};
  }
  return std::optional<std::vector<std::string>>(std::move(globs));
}

// The problems found in one CR, in the order the settings are read; from_kubevirt reports them
// all at once, joined by "; ", so that one round of edits can fix every one.
class Problems {
 public:
  void add(const Error& error) { text_.append(text_.empty() ? "" : "; ").append(error.message); }

  // The value of a setting; nullopt when it is unset or mistyped (the problem is then noted).
  template <class T>
  std::optional<T> take(Setting<T> setting) {
    if (!setting) {
      add(setting.error());
      return std::nullopt;
    }
    return std::move(setting).value();
  }

  [[nodiscard]] bool empty() const { return text_.empty(); }
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  std::string text_;
};

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

namespace {

// status.observedKubeVirtVersion is virt-operator's: the release the cluster runs. A cluster
// without virt-operator (vmgate alone) has none, and the newest release judges; a release vmgate
// does not model is judged as the nearest one it does.
void read_release(const json::Value& kubevirt, ClusterConfig& config) {
  const json::Value* observed = json::find_path(kubevirt, {"status", "observedKubeVirtVersion"});
  if (observed == nullptr || !observed->IsString() || observed->GetStringLength() == 0) {
    return;
  }
  config.observed_kubevirt_version = std::string(json::as_view(*observed));
  if (Result<Release> release = parse_release(config.observed_kubevirt_version)) {
    config.release = *release;
    config.release_source = ReleaseSource::cluster;
  } else {
    config.release = nearest_release(config.observed_kubevirt_version);
    config.release_source = ReleaseSource::unsupported_cluster;
  }
}

}  // namespace

Result<ClusterConfig> ClusterConfig::from_kubevirt(const json::Value& kubevirt) {
  ClusterConfig config;
  read_release(kubevirt, config);
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
  const std::string_view base = "spec.configuration";
  Problems problems;
  // A string setting that is set replaces the default, even when set to "" (Go's zero value).
  if (auto model = problems.take(string_setting(c, base, "cpuModel"))) {
    config.cpu_model = std::move(*model);
  }
  if (auto machine = problems.take(string_setting(c, base, "machineType"))) {
    config.machine_type = std::move(*machine);
  }
  if (auto strategy = problems.take(string_setting(c, base, "evictionStrategy"))) {
    config.eviction_strategy = std::move(*strategy);
  }
  if (auto strategy = problems.take(string_setting(c, base, "vmRolloutStrategy"))) {
    config.vm_rollout_strategy = std::move(*strategy);
  }
  if (auto cpu_request = problems.take(cpu_request_setting(c))) {
    config.cpu_request = std::move(*cpu_request);
  }
  if (const json::Value* arches = json::find_object(c, "architectureConfiguration")) {
    const std::string arches_path = setting_path(base, "architectureConfiguration");
    if (auto arch = problems.take(string_setting(*arches, arches_path, "defaultArchitecture"))) {
      config.default_architecture = std::move(*arch);
    }
    for (std::string_view arch : {"amd64", "arm64", "s390x", "ppc64le"}) {
      const json::Value* per_arch = json::find_object(*arches, arch);
      if (per_arch == nullptr) {
        continue;
      }
      const std::string path = setting_path(arches_path, arch);
      if (auto machine = problems.take(string_setting(*per_arch, path, "machineType")); machine && !machine->empty()) {
        config.arch_machine_type[std::string(arch)] = std::move(*machine);
      }
      // Unlike the deprecated list below, an emulatedMachines here that is not a list is ignored.
      if (const json::Value* machines = json::find_array(*per_arch, "emulatedMachines")) {
        if (auto globs = problems.take(machine_globs(*machines, path))) {
          config.arch_emulated_machines[std::string(arch)] = std::move(*globs);
        }
      }
    }
  }
  // Deprecated spec.configuration.emulatedMachines overrides every architecture's list
  // (virt-config.go GetEmulatedMachines).
  json::Field<const json::Value*> machines = json::read_array(c, "emulatedMachines");
  if (!machines) {
    problems.add(must_be(base, "emulatedMachines", json::describe(json::Expected::string_list)));
  } else if (machines->has_value()) {
    if (auto globs = problems.take(machine_globs(*machines->value(), base))) {
      for (std::string_view arch : {"amd64", "arm64", "s390x"}) {
        config.arch_emulated_machines[std::string(arch)] = *globs;
      }
    }
  }
  if (const json::Value* developer = json::find_object(c, "developerConfiguration")) {
    const std::string path = setting_path(base, "developerConfiguration");
    if (auto gates = problems.take(string_list_setting(*developer, path, "featureGates"))) {
      config.feature_gates = std::move(*gates);
    }
    if (auto gates = problems.take(string_list_setting(*developer, path, "disabledFeatureGates"))) {
      config.disabled_feature_gates = std::move(*gates);
    }
    // Values <= 0 are KubeVirt's validateConfig's to refuse (kubevirt_rejection, below).
    if (auto ratio = problems.take(int_setting(*developer, path, "cpuAllocationRatio"))) {
      config.cpu_allocation_ratio = *ratio;
    }
    if (auto overcommit = problems.take(int_setting(*developer, path, "memoryOvercommit"))) {
      config.memory_overcommit = *overcommit;
    }
    if (auto selectors = problems.take(string_map_setting(*developer, path, "nodeSelectors"))) {
      config.node_selectors = std::move(*selectors);
    }
  }
  if (const json::Value* instancetype = json::find_object(c, "instancetype")) {
    const std::string path = setting_path(base, "instancetype");
    if (auto policy = problems.take(string_setting(*instancetype, path, "referencePolicy"));
        policy && !policy->empty()) {
      config.instancetype_reference_policy = std::move(*policy);
    }
  }
  if (const json::Value* network = json::find_object(c, "network")) {
    const std::string path = setting_path(base, "network");
    if (auto interface = problems.take(string_setting(*network, path, "defaultNetworkInterface"));
        interface && !interface->empty()) {
      config.default_network_interface = std::move(*interface);
    }
    if (auto permit = problems.take(bool_setting(*network, path, "permitBridgeInterfaceOnPodNetwork"))) {
      config.permit_bridge_interface_on_pod_network = *permit;
    }
  }
  if (const json::Value* reservation = json::find_object(c, "persistentReservationConfiguration")) {
    const std::string path = setting_path(base, "persistentReservationConfiguration");
    if (auto enabled = problems.take(bool_setting(*reservation, path, "enabled"))) {
      config.persistent_reservation = *enabled;
    }
  }
  if (const json::Value* live = json::find_object(c, "liveUpdateConfiguration")) {
    const std::string path = setting_path(base, "liveUpdateConfiguration");
    // maxHotplugRatio 0 means the default, 4.
    if (auto ratio = problems.take(uint_setting(*live, path, "maxHotplugRatio")); ratio && *ratio != 0) {
      config.max_hotplug_ratio = *ratio;
    }
    if (auto sockets = problems.take(uint_setting(*live, path, "maxCpuSockets"))) {
      config.max_cpu_sockets = *sockets;
    }
    if (const json::Value* max_guest = json::find(*live, "maxGuest"); max_guest != nullptr && max_guest->IsString()) {
      config.max_guest = std::string(json::as_view(*max_guest));
    }
  }
  if (!problems.empty()) {
    return Error{problems.text()};
  }
  if (std::string rejection = kubevirt_rejection(c); !rejection.empty()) {
    // configuration.go: an invalid configuration is not applied; virt-api keeps the last valid
    // one, the defaults for a cluster that never had one. The reason travels as a warning.
    ClusterConfig defaults;
    defaults.ignored_configuration = std::move(rejection);
    read_release(kubevirt, defaults);
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
