// Tests of cluster.hpp: object kinds (names, plurals, short names), ObjectStore (namespaced and
// cluster-scoped lookups, replacement, errors) and ClusterConfig::from_kubevirt (the settings
// admission reads, KubeVirt's precedence between them, and errors for mistyped settings).
#include "vmgate/admission/cluster.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/json_test_support.hpp"

namespace vmgate::admission {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

TEST(ClusterObjectKind, KindNamesPluralsAndShortNames) {
  struct Case {
    std::string_view text;
    ObjectKind kind;
  };
  const Case cases[] = {
      {"VirtualMachineInstancetype", ObjectKind::instancetype},
      {"virtualmachineinstancetypes", ObjectKind::instancetype},
      {"vminstancetype", ObjectKind::instancetype},
      {"vmf", ObjectKind::instancetype},
      {"VirtualMachineClusterInstancetype", ObjectKind::cluster_instancetype},
      {"VMCF", ObjectKind::cluster_instancetype},
      {"vmclusterinstancetypes", ObjectKind::cluster_instancetype},
      {"virtualmachinepreference", ObjectKind::preference},
      {"vmp", ObjectKind::preference},
      {"vmprefs", ObjectKind::preference},
      {"VirtualMachineClusterPreferences", ObjectKind::cluster_preference},
      {"vmcp", ObjectKind::cluster_preference},
      {"PersistentVolumeClaim", ObjectKind::persistent_volume_claim},
      {"pvc", ObjectKind::persistent_volume_claim},
      {"persistentvolumeclaims", ObjectKind::persistent_volume_claim},
      {"dv", ObjectKind::data_volume},
      {"datavolumes.cdi.kubevirt.io", ObjectKind::data_volume},
      {"DataSource", ObjectKind::data_source},
      {"das", ObjectKind::data_source},
      {"vs", ObjectKind::volume_snapshot},
      {"VolumeSnapshot", ObjectKind::volume_snapshot},
      {"controllerrevisions.apps", ObjectKind::controller_revision},
      {"ControllerRevision", ObjectKind::controller_revision},
      {"kv", ObjectKind::kubevirt},
      {"KubeVirt", ObjectKind::kubevirt},
  };
  for (const Case& c : cases) {
    const std::optional<ObjectKind> kind = parse_object_kind(c.text);
    ASSERT_TRUE(kind.has_value()) << c.text;
    EXPECT_EQ(*kind, c.kind) << c.text;
  }
}

TEST(ClusterObjectKind, UnknownNames) {
  for (std::string_view text : {"", "Pod", "vm", "VirtualMachine", "instancetype", "datasource.cdi", " pvc"}) {
    EXPECT_FALSE(parse_object_kind(text).has_value()) << text;
  }
}

TEST(ClusterObjectKind, NamesAndScopes) {
  EXPECT_EQ(kind_name(ObjectKind::cluster_instancetype), "VirtualMachineClusterInstancetype");
  EXPECT_EQ(resource_name(ObjectKind::cluster_instancetype), "virtualmachineclusterinstancetypes");
  EXPECT_EQ(group_resource(ObjectKind::cluster_instancetype),
            "virtualmachineclusterinstancetypes.instancetype.kubevirt.io");
  EXPECT_EQ(group_resource(ObjectKind::persistent_volume_claim), "persistentvolumeclaims");
  EXPECT_EQ(group_resource(ObjectKind::data_source), "datasources.cdi.kubevirt.io");
  EXPECT_EQ(group_resource(ObjectKind::volume_snapshot), "volumesnapshots.snapshot.storage.k8s.io");
  EXPECT_EQ(kind_name(ObjectKind::preference), "VirtualMachinePreference");
  EXPECT_EQ(resource_name(ObjectKind::data_volume), "datavolumes");
  for (ObjectKind kind :
       {ObjectKind::instancetype, ObjectKind::preference, ObjectKind::persistent_volume_claim, ObjectKind::data_volume,
        ObjectKind::data_source, ObjectKind::volume_snapshot, ObjectKind::controller_revision, ObjectKind::kubevirt}) {
    EXPECT_TRUE(is_namespaced(kind)) << kind_name(kind);
    // Every kind's own name parses back to it.
    EXPECT_EQ(parse_object_kind(kind_name(kind)), kind);
    EXPECT_EQ(parse_object_kind(resource_name(kind)), kind);
  }
  EXPECT_FALSE(is_namespaced(ObjectKind::cluster_instancetype));
  EXPECT_FALSE(is_namespaced(ObjectKind::cluster_preference));
}

TEST(ObjectStore, NamespacedLookups) {
  ObjectStore store;
  ASSERT_TRUE(
      store.add(parse(R"({"kind": "DataSource", "metadata": {"name": "fedora", "namespace": "os-images"}})")).ok());
  const Result<ObjectKind> added =
      store.add(parse(R"({"kind": "PersistentVolumeClaim", "metadata": {"name": "root"}})"), "vms");
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(*added, ObjectKind::persistent_volume_claim);
  EXPECT_NE(store.find(ObjectKind::data_source, "os-images", "fedora"), nullptr);
  EXPECT_EQ(store.find(ObjectKind::data_source, "default", "fedora"), nullptr);
  EXPECT_EQ(store.find(ObjectKind::persistent_volume_claim, "os-images", "fedora"), nullptr);
  // A namespaced object without metadata.namespace lands in the default namespace given.
  EXPECT_NE(store.find(ObjectKind::persistent_volume_claim, "vms", "root"), nullptr);
  EXPECT_EQ(store.find(ObjectKind::persistent_volume_claim, "default", "root"), nullptr);
  EXPECT_EQ(store.size(), 2U);
}

TEST(ObjectStore, ClusterScopedLookupsIgnoreTheNamespace) {
  ObjectStore store;
  ASSERT_TRUE(
      store
          .add(
              parse(R"({"kind": "VirtualMachineClusterInstancetype", "metadata": {"name": "u1.small", "namespace": "x"},
                                  "spec": {"cpu": {"guest": 1}}})"))
          .ok());
  const json::Value* found = store.find(ObjectKind::cluster_instancetype, "anything", "u1.small");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(dump(*json::find_path(*found, {"spec", "cpu"})), R"({"guest":1})");
  EXPECT_NE(store.find(ObjectKind::cluster_instancetype, "", "u1.small"), nullptr);
  EXPECT_EQ(store.find(ObjectKind::instancetype, "x", "u1.small"), nullptr);
}

TEST(ObjectStore, ReAddReplaces) {
  ObjectStore store;
  ASSERT_TRUE(
      store
          .add(parse(
              R"({"kind": "VirtualMachinePreference", "metadata": {"name": "p", "namespace": "a"}, "spec": {"v": 1}})"))
          .ok());
  ASSERT_TRUE(
      store
          .add(parse(
              R"({"kind": "VirtualMachinePreference", "metadata": {"name": "p", "namespace": "b"}, "spec": {"v": 2}})"))
          .ok());
  ASSERT_TRUE(
      store
          .add(parse(
              R"({"kind": "VirtualMachinePreference", "metadata": {"name": "p", "namespace": "a"}, "spec": {"v": 3}})"))
          .ok());
  EXPECT_EQ(store.size(), 2U);
  EXPECT_EQ(store.count(ObjectKind::preference), 2U);
  EXPECT_EQ(store.count(ObjectKind::cluster_preference), 0U);
  EXPECT_EQ(dump(*json::find(*store.find(ObjectKind::preference, "a", "p"), "spec")), R"({"v":3})");
  EXPECT_EQ(dump(*json::find(*store.find(ObjectKind::preference, "b", "p"), "spec")), R"({"v":2})");
}

TEST(ObjectStore, StoresACopy) {
  ObjectStore store;
  {
    const json::Document object =
        parse(R"({"kind": "DataVolume", "metadata": {"name": "dv", "namespace": "n"}, "spec": {"x": "y"}})");
    ASSERT_TRUE(store.add(object).ok());
  }
  const json::Value* found = store.find(ObjectKind::data_volume, "n", "dv");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(dump(*found), R"({"kind":"DataVolume","metadata":{"name":"dv","namespace":"n"},"spec":{"x":"y"}})");
  ObjectStore moved(std::move(store));
  EXPECT_NE(moved.find(ObjectKind::data_volume, "n", "dv"), nullptr);
}

TEST(ObjectStore, AddErrors) {
  ObjectStore store;
  struct Case {
    std::string object;
    std::string error;
  };
  const Case cases[] = {
      {"[]", "object is not a JSON/YAML mapping"},
      {R"({"metadata": {"name": "x"}})", "kind (none) is not an object vmgate reads"},
      {R"({"kind": "Pod", "metadata": {"name": "x"}})", "kind Pod is not an object vmgate reads"},
      // Short names are for the command line, not for `kind:` in an object.
      {R"({"kind": "vmcf", "metadata": {"name": "x"}})", "kind vmcf is not an object vmgate reads"},
      {R"({"kind": "virtualmachineclusterinstancetype", "metadata": {"name": "x"}})",
       "kind virtualmachineclusterinstancetype is not an object vmgate reads"},
      {R"({"kind": "DataSource"})", "metadata.name is required"},
      {R"({"kind": "DataSource", "metadata": {"name": ""}})", "metadata.name is required"},
      {R"({"kind": "DataSource", "metadata": {"name": 7}})", "metadata.name is required"},
      {R"({"kind": "KubeVirt", "metadata": {"name": "kv"}, "spec": {"configuration": {"cpuModel": 5}}})",
       "KubeVirt kv: spec.configuration.cpuModel must be a string"},
  };
  for (const Case& c : cases) {
    const Result<ObjectKind> added = store.add(parse(c.object));
    ASSERT_FALSE(added.ok()) << c.object;
    EXPECT_EQ(added.error().message, c.error);
  }
  EXPECT_EQ(store.size(), 0U);
}

TEST(ObjectStore, KubeVirtSetsTheConfiguration) {
  ObjectStore store;
  EXPECT_EQ(store.config().cpu_model, "");
  EXPECT_EQ(store.config().default_architecture, "amd64");
  ASSERT_TRUE(store
                  .add(parse(R"({"kind": "KubeVirt", "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
      "spec": {"configuration": {"cpuModel": "Haswell"}}, "status": {"defaultArchitecture": "arm64"}})"))
                  .ok());
  EXPECT_EQ(store.config().cpu_model, "Haswell");
  EXPECT_EQ(store.config().default_architecture, "arm64");
  EXPECT_EQ(store.count(ObjectKind::kubevirt), 1U);
}

TEST(ClusterConfigFromKubeVirt, Defaults) {
  for (std::string_view cr :
       {R"({})", R"({"spec": {}})", R"({"spec": {"configuration": null}})", R"({"spec": {"configuration": {}}})"}) {
    const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(cr));
    ASSERT_TRUE(config.ok()) << cr;
    EXPECT_EQ(config->default_architecture, "amd64");
    EXPECT_EQ(config->cpu_model, "");
    EXPECT_EQ(config->machine_type_for("amd64"), "q35");
    EXPECT_EQ(config->machine_type_for("arm64"), "virt");
    EXPECT_EQ(config->machine_type_for("s390x"), "s390-ccw-virtio");
    EXPECT_EQ(config->emulated_machines_for("amd64"), (std::vector<std::string>{"q35*", "pc-q35*"}));
    EXPECT_EQ(config->emulated_machines_for("arm64"), (std::vector<std::string>{"virt*"}));
    EXPECT_EQ(config->emulated_machines_for("s390x"), (std::vector<std::string>{"s390-ccw-virtio*"}));
    EXPECT_EQ(config->instancetype_reference_policy, "reference");
    EXPECT_EQ(config->default_network_interface, "bridge");
    EXPECT_EQ(config->eviction_strategy, "None");
    EXPECT_EQ(config->vm_rollout_strategy, "LiveUpdate");
    EXPECT_EQ(config->max_hotplug_ratio, 4U);
    EXPECT_EQ(config->max_cpu_sockets, 0U);
    EXPECT_EQ(config->max_guest, "");
    EXPECT_EQ(config->cpu_request, "");
  }
}

TEST(ClusterConfigFromKubeVirt, EverySettingAdmissionReads) {
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({
    "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
    "spec": {"configuration": {
      "cpuModel": "Haswell-noTSX",
      "cpuRequest": "800m",
      "evictionStrategy": "LiveMigrate",
      "vmRolloutStrategy": "Stage",
      "architectureConfiguration": {
        "amd64": {"machineType": "pc-q35-rhel9.4.0", "emulatedMachines": ["pc-q35-rhel*", "q35"]},
        "arm64": {"machineType": "virt-rhel9.4.0"}
      },
      "developerConfiguration": {"featureGates": ["HostDevices", "Root"]},
      "instancetype": {"referencePolicy": "expand"},
      "network": {"defaultNetworkInterface": "masquerade", "permitBridgeInterfaceOnPodNetwork": false},
      "liveUpdateConfiguration": {"maxHotplugRatio": 2, "maxCpuSockets": 16, "maxGuest": "64Gi"}
    }},
    "status": {"defaultArchitecture": "s390x"}
  })"));
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->cpu_model, "Haswell-noTSX");
  EXPECT_EQ(config->cpu_request, "800m");
  EXPECT_EQ(config->eviction_strategy, "LiveMigrate");
  EXPECT_EQ(config->vm_rollout_strategy, "Stage");
  EXPECT_EQ(config->default_architecture, "s390x");
  EXPECT_EQ(config->machine_type_for("amd64"), "pc-q35-rhel9.4.0");
  EXPECT_EQ(config->machine_type_for("arm64"), "virt-rhel9.4.0");
  EXPECT_EQ(config->machine_type_for("s390x"), "s390-ccw-virtio");
  EXPECT_EQ(config->emulated_machines_for("amd64"), (std::vector<std::string>{"pc-q35-rhel*", "q35"}));
  EXPECT_EQ(config->emulated_machines_for("arm64"), (std::vector<std::string>{"virt*"}));
  EXPECT_TRUE(config->feature_gate_enabled("HostDevices"));
  EXPECT_TRUE(config->feature_gate_enabled("Root"));
  EXPECT_EQ(config->instancetype_reference_policy, "expand");
  EXPECT_EQ(config->default_network_interface, "masquerade");
  EXPECT_FALSE(config->permit_bridge_interface_on_pod_network);
  EXPECT_EQ(config->max_hotplug_ratio, 2U);
  EXPECT_EQ(config->max_cpu_sockets, 16U);
  EXPECT_EQ(config->max_guest, "64Gi");
}

TEST(ClusterConfigFromKubeVirt, DeprecatedMachineTypeWinsOverArchitectureConfiguration) {
  // virt-config.go GetMachineType reads spec.configuration.machineType first.
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "machineType": "pc-q35-2.12", "architectureConfiguration": {"amd64": {"machineType": "pc-q35-rhel9.4.0"}}}}})"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->machine_type_for("amd64"), "pc-q35-2.12");
  EXPECT_EQ(config->machine_type_for("arm64"), "pc-q35-2.12");
}

TEST(ClusterConfigFromKubeVirt, OtherArchitecturesReadTheAmd64Settings) {
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "architectureConfiguration": {"amd64": {"machineType": "pc-q35-9.0", "emulatedMachines": ["pc-q35-9*"]},
                                    "ppc64le": {"machineType": "pseries"}}}}})"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->machine_type_for(""), "pc-q35-9.0");
  EXPECT_EQ(config->machine_type_for("ppc64le"), "pc-q35-9.0");
  EXPECT_EQ(config->emulated_machines_for(""), (std::vector<std::string>{"pc-q35-9*"}));
  EXPECT_EQ(config->emulated_machines_for("ppc64le"), (std::vector<std::string>{"pc-q35-9*"}));
}

TEST(ClusterConfigFromKubeVirt, DeprecatedEmulatedMachinesWinForEveryArchitecture) {
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "emulatedMachines": ["pc-i440fx*"], "architectureConfiguration": {"arm64": {"emulatedMachines": ["virt-9*"]}}}}})"));
  ASSERT_TRUE(config.ok());
  for (std::string_view arch : {"amd64", "arm64", "s390x", ""}) {
    EXPECT_EQ(config->emulated_machines_for(arch), (std::vector<std::string>{"pc-i440fx*"})) << arch;
  }
}

TEST(ClusterConfigFromKubeVirt, SpecDefaultArchitectureAsTheOperatorCopiesIt) {
  // virt-operator SetDefaultArchitecture copies the spec value into status.
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "architectureConfiguration": {"defaultArchitecture": "arm64"}}}, "status": {"defaultArchitecture": "amd64"}})"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->default_architecture, "arm64");
}

TEST(ClusterConfigFromKubeVirt, NumericCpuRequestAndEmptyStringsKeepDefaults) {
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "cpuRequest": 1, "instancetype": {"referencePolicy": ""}, "network": {"defaultNetworkInterface": ""},
      "liveUpdateConfiguration": {"maxHotplugRatio": 0}}}})"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->cpu_request, "1");
  EXPECT_EQ(config->instancetype_reference_policy, "reference");
  EXPECT_EQ(config->default_network_interface, "bridge");
  EXPECT_EQ(config->max_hotplug_ratio, 4U);
}

TEST(ClusterConfigFromKubeVirt, MistypedSettingsAreErrors) {
  struct Case {
    std::string configuration;
    std::string error;
  };
  const Case cases[] = {
      {R"("not an object")", "spec.configuration must be an object"},
      {R"({"cpuModel": 5})", "spec.configuration.cpuModel must be a string"},
      {R"({"machineType": ["q35"]})", "spec.configuration.machineType must be a string"},
      {R"({"evictionStrategy": true})", "spec.configuration.evictionStrategy must be a string"},
      {R"({"vmRolloutStrategy": {}})", "spec.configuration.vmRolloutStrategy must be a string"},
      {R"({"cpuRequest": false})", "spec.configuration.cpuRequest must be a quantity"},
      {R"({"architectureConfiguration": {"amd64": {"machineType": 1}}})",
       "spec.configuration.architectureConfiguration.amd64.machineType must be a string"},
      {R"({"architectureConfiguration": {"s390x": {"emulatedMachines": ["a", 2]}}})",
       "spec.configuration.architectureConfiguration.s390x.emulatedMachines must hold strings"},
      {R"({"emulatedMachines": "q35*"})", "spec.configuration.emulatedMachines must be a list of strings"},
      {R"({"developerConfiguration": {"featureGates": "Root"}})",
       "spec.configuration.developerConfiguration.featureGates must be a list of strings"},
      {R"({"instancetype": {"referencePolicy": 3}})",
       "spec.configuration.instancetype.referencePolicy must be a string"},
      {R"({"network": {"defaultNetworkInterface": null, "x": 1}, "liveUpdateConfiguration": {"maxHotplugRatio": -1}})",
       "spec.configuration.liveUpdateConfiguration.maxHotplugRatio must be a non-negative integer"},
      {R"({"network": {"permitBridgeInterfaceOnPodNetwork": "no"}})",
       "spec.configuration.network.permitBridgeInterfaceOnPodNetwork must be true or false"},
      {R"({"persistentReservationConfiguration": {"enabled": "yes"}})",
       "spec.configuration.persistentReservationConfiguration.enabled must be true or false"},
      {R"({"liveUpdateConfiguration": {"maxCpuSockets": "8"}})",
       "spec.configuration.liveUpdateConfiguration.maxCpuSockets must be a non-negative integer"},
      // Every problem is reported, joined by "; ".
      {R"({"cpuModel": 1, "machineType": 2})",
       "spec.configuration.cpuModel must be a string; spec.configuration.machineType must be a string"},
  };
  for (const Case& c : cases) {
    const Result<ClusterConfig> config =
        ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": )" + c.configuration + "}}"));
    ASSERT_FALSE(config.ok()) << c.configuration;
    EXPECT_EQ(config.error().message, c.error);
  }
}

TEST(ClusterConfigFromKubeVirt, ProblemsComeInReadingOrderAndRepeatPerBadGlob) {
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "liveUpdateConfiguration": {"maxCpuSockets": -1}, "emulatedMachines": ["q35*", 1, 2],
      "developerConfiguration": {"featureGates": [1]}, "cpuRequest": []}}})"));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message,
            "spec.configuration.cpuRequest must be a quantity; "
            "spec.configuration.emulatedMachines must hold strings; "
            "spec.configuration.emulatedMachines must hold strings; "
            "spec.configuration.developerConfiguration.featureGates must be a list of strings; "
            "spec.configuration.liveUpdateConfiguration.maxCpuSockets must be a non-negative integer");
}

TEST(ClusterConfigFromKubeVirt, PerArchitectureMachinesThatAreNotAListAreIgnored) {
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(
      R"({"spec": {"configuration": {"architectureConfiguration": {"amd64": {"emulatedMachines": "q35*"}},
          "liveUpdateConfiguration": {"maxHotplugRatio": 0}}}})"));
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->emulated_machines_for("amd64"), (std::vector<std::string>{"q35*", "pc-q35*"}));
  EXPECT_EQ(config->max_hotplug_ratio, 4U);  // 0 means the default
}

TEST(ClusterConfigFeatureGates, AlphaGatesOnlyWhenListed) {
  ClusterConfig config;
  for (std::string_view gate : {"HostDevices", "Root", "CPUManager", "Sidecar", "NoSuchGate"}) {
    EXPECT_FALSE(config.feature_gate_enabled(gate)) << gate;
  }
  config.feature_gates = {"HostDevices", "NoSuchGate"};
  EXPECT_TRUE(config.feature_gate_enabled("HostDevices"));
  EXPECT_TRUE(config.feature_gate_enabled("NoSuchGate"));
  EXPECT_FALSE(config.feature_gate_enabled("Root"));
}

TEST(ClusterConfigFeatureGates, DisabledFeatureGatesTurnBetaGatesOff) {
  // featuregate.IsEnabled: GA always on; listed in featureGates wins over disabledFeatureGates.
  const Result<ClusterConfig> config = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "developerConfiguration": {"featureGates": ["Snapshot"],
                                 "disabledFeatureGates": ["DecentralizedLiveMigration", "Snapshot", "NUMA"]}}}})"));
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_FALSE(config->feature_gate_enabled("DecentralizedLiveMigration"));
  EXPECT_TRUE(config->feature_gate_enabled("Snapshot"));
  EXPECT_TRUE(config->feature_gate_enabled("NUMA"));  // GA
  EXPECT_TRUE(config->feature_gate_enabled("PasstBinding"));

  const Result<ClusterConfig> mixed = ClusterConfig::from_kubevirt(
      parse(R"({"spec": {"configuration": {"developerConfiguration": {"disabledFeatureGates": ["A", 1]}}}})"));
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.error().message,
            "spec.configuration.developerConfiguration.disabledFeatureGates must be a list of strings");
}

TEST(ClusterConfigFromKubeVirt, EmulatorThreadEvenParityAnnotation) {
  EXPECT_FALSE(ClusterConfig::from_kubevirt(parse(R"({"spec": {}})"))->emulator_thread_even_parity);
  EXPECT_TRUE(
      ClusterConfig::from_kubevirt(
          parse(R"({"metadata": {"annotations": {"alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity": ""}}})"))
          ->emulator_thread_even_parity);
}

TEST(ClusterConfigFromKubeVirt, AnInvalidConfigurationIsIgnoredAsKubeVirtDoes) {
  // configuration.go validateConfig: one bad setting and none of the CR's configuration applies.
  struct Case {
    std::string configuration;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {R"({"cpuModel": "Haswell", "network": {"defaultNetworkInterface": "macvtap"}})",
       "invalid default-network-interface in config: macvtap"},
      {R"({"cpuModel": "Haswell", "imagePullPolicy": "Sometimes"})",
       "invalid dev.imagePullPolicy in config: Sometimes"},
      {R"({"cpuModel": "Haswell", "developerConfiguration": {"memoryOvercommit": 0}})",
       "invalid memoryOvercommit in ConfigMap: 0"},
      {R"({"cpuModel": "Haswell", "developerConfiguration": {"cpuAllocationRatio": -1}})",
       "invalid cpu allocation ratio in ConfigMap: -1"},
      {R"({"cpuModel": "Haswell", "developerConfiguration": {"lessPVCSpaceToleration": 101}})",
       "invalid lessPVCSpaceToleration in ConfigMap: 101"},
  };
  for (const Case& c : cases) {
    const Result<ClusterConfig> config =
        ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": )" + c.configuration + "}}"));
    ASSERT_TRUE(config.ok()) << c.configuration;
    EXPECT_EQ(config->ignored_configuration, c.reason);
    EXPECT_EQ(config->cpu_model, "") << c.configuration;
  }
  const Result<ClusterConfig> valid = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "cpuModel": "Haswell", "imagePullPolicy": "Always", "network": {"defaultNetworkInterface": "masquerade"},
      "developerConfiguration": {"memoryOvercommit": 150, "cpuAllocationRatio": 5, "lessPVCSpaceToleration": 0}}}})"));
  ASSERT_TRUE(valid.ok());
  EXPECT_EQ(valid->ignored_configuration, "");
  EXPECT_EQ(valid->cpu_model, "Haswell");
}

// The launcher pod's settings (the controller reads them from here): developerConfiguration's
// cpuAllocationRatio, memoryOvercommit and nodeSelectors; a mistyped one names its field.
TEST(ClusterConfigFromKubeVirt, ReadsTheLauncherPodSettings) {
  const ClusterConfig defaults;
  EXPECT_EQ(defaults.cpu_allocation_ratio, 10);
  EXPECT_EQ(defaults.memory_overcommit, 100);
  EXPECT_TRUE(defaults.node_selectors.empty());
  const Result<ClusterConfig> set = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "developerConfiguration": {"cpuAllocationRatio": 4, "memoryOvercommit": 150,
                                 "nodeSelectors": {"example.com/vms": "yes", "zone": "a"}}}}})"));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->cpu_allocation_ratio, 4);
  EXPECT_EQ(set->memory_overcommit, 150);
  EXPECT_EQ(set->node_selectors, (std::map<std::string, std::string>{{"example.com/vms", "yes"}, {"zone", "a"}}));
  const Result<ClusterConfig> mistyped = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "developerConfiguration": {"cpuAllocationRatio": "4", "nodeSelectors": {"zone": 1}}}}})"));
  ASSERT_FALSE(mistyped.ok());
  EXPECT_EQ(mistyped.error().message,
            "spec.configuration.developerConfiguration.cpuAllocationRatio must be an integer; "
            "spec.configuration.developerConfiguration.nodeSelectors must be a map of strings");
}

TEST(ClusterConfigFeatureGates, PersistentReservationIsOptInThoughGa) {
  // virt-config.go PersistentReservationEnabled: the configuration's enabled, else the gate listed.
  EXPECT_FALSE(ClusterConfig{}.persistent_reservation_enabled());
  const Result<ClusterConfig> listed = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "developerConfiguration": {"featureGates": ["PersistentReservation"]}}}})"));
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  EXPECT_TRUE(listed->persistent_reservation_enabled());
  const Result<ClusterConfig> configured = ClusterConfig::from_kubevirt(parse(R"({"spec": {"configuration": {
      "developerConfiguration": {"featureGates": ["PersistentReservation"]},
      "persistentReservationConfiguration": {"enabled": false}}}})"));
  ASSERT_TRUE(configured.ok()) << configured.error().message;
  EXPECT_FALSE(configured->persistent_reservation_enabled());
}

TEST(ClusterConfigFeatureGates, BetaAndGaGatesAreOnByDefault) {
  // pkg/virt-config/featuregate IsEnabled: GA always, Beta unless disabled.
  const ClusterConfig config;
  for (std::string_view gate : {"DeclarativeHotplugVolumes", "DecentralizedLiveMigration", "Snapshot", "NUMA",
                                "CPUNodeDiscovery", "LiveMigration", "VMLiveUpdateFeatures"}) {
    EXPECT_TRUE(config.feature_gate_enabled(gate)) << gate;
  }
}

}  // namespace
}  // namespace vmgate::admission

namespace vmgate::admission {
namespace {

TEST(ClusterConfigRelease, ObservedKubeVirtVersionNamesTheRelease) {
  Result<ClusterConfig> v18 = ClusterConfig::from_kubevirt(
      testing::parse(R"({"status": {"observedKubeVirtVersion": "v1.8.2"}, "spec": {"configuration": {}}})"));
  ASSERT_TRUE(v18.ok()) << v18.error().message;
  EXPECT_EQ(v18->release, Release::v1_8);
  EXPECT_EQ(v18->release_source, ReleaseSource::cluster);
  EXPECT_EQ(v18->observed_kubevirt_version, "v1.8.2");

  Result<ClusterConfig> none = ClusterConfig::from_kubevirt(testing::parse(R"({"spec": {}})"));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->release, Release::main);
  EXPECT_EQ(none->release_source, ReleaseSource::newest);

  Result<ClusterConfig> old =
      ClusterConfig::from_kubevirt(testing::parse(R"({"status": {"observedKubeVirtVersion": "v1.6.0"}})"));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->release, Release::v1_7);  // the nearest supported release
  EXPECT_EQ(old->release_source, ReleaseSource::unsupported_cluster);
  EXPECT_EQ(old->observed_kubevirt_version, "v1.6.0");
}

TEST(ClusterConfigRelease, AnIgnoredConfigurationKeepsTheRelease) {
  Result<ClusterConfig> config = ClusterConfig::from_kubevirt(testing::parse(
      R"({"status": {"observedKubeVirtVersion": "v1.8.1"},
          "spec": {"configuration": {"network": {"defaultNetworkInterface": "macvtap"}}}})"));
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_FALSE(config->ignored_configuration.empty());
  EXPECT_EQ(config->release, Release::v1_8);
}

TEST(ClusterConfigRelease, V18HasNoBetaGatesByDefaultAndFewerGaGates) {
  ClusterConfig main;
  ClusterConfig v18;
  v18.release = Release::v1_8;
  // GA at main, Beta or Alpha in v1.8 (pkg/virt-config/featuregate at v1.8.2).
  for (std::string_view gate : {"VideoConfig", "PanicDevices", "SecureExecution", "ExpandDisks"}) {
    EXPECT_TRUE(main.feature_gate_enabled(gate)) << gate;
    EXPECT_FALSE(v18.feature_gate_enabled(gate)) << gate;
  }
  // Beta: on by default at main only.
  for (std::string_view gate : {"PasstBinding", "WorkloadEncryptionSEV", "DecentralizedLiveMigration"}) {
    EXPECT_TRUE(main.feature_gate_enabled(gate)) << gate;
    EXPECT_FALSE(v18.feature_gate_enabled(gate)) << gate;
  }
  // GA in both.
  EXPECT_TRUE(v18.feature_gate_enabled("LiveMigration"));
  EXPECT_TRUE(v18.feature_gate_enabled("EnableVirtioFsConfigVolumes"));
  v18.feature_gates = {"VideoConfig", "PasstBinding"};
  EXPECT_TRUE(v18.feature_gate_enabled("VideoConfig"));
  EXPECT_TRUE(v18.feature_gate_enabled("PasstBinding"));
}

}  // namespace
}  // namespace vmgate::admission
