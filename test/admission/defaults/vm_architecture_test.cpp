// Tests of the VM mutator's architecture and machine type defaults and the PCI topology helpers
// (pkg/defaults/defaults.go SetVirtualMachineDefaults, SupportsPCIeHotplug; defaults_test.go and
// vm-mutator_test.go cases).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/admission/defaults/vm.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::defaults {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::text;

// A cluster whose KubeVirt CR reports "configArch" as default architecture, as in defaults_test.go.
ObjectStore cluster_with_datasources() {
  ObjectStore store;
  EXPECT_TRUE(store
                  .add(parse(R"({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
      "metadata": {"name": "kubevirt", "namespace": "kubevirt"}, "status": {"defaultArchitecture": "configArch"}})"))
                  .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"kind": "DataSource", "metadata": {"name": "ds", "namespace": "ds-namespace",
      "labels": {"template.kubevirt.io/architecture": "arm64"}}, "spec": {"source": {}}})"))
                  .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"kind": "DataSource", "metadata": {"name": "ds", "namespace": "vm-namespace",
      "labels": {"template.kubevirt.io/architecture": "s390x"}}, "spec": {"source": {}}})"))
                  .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"kind": "DataSource", "metadata": {"name": "unknown", "namespace": "ds-namespace",
      "labels": {"template.kubevirt.io/architecture": "foobar"}}, "spec": {"source": {}}})"))
                  .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"kind": "DataSource", "metadata": {"name": "unlabelled", "namespace": "ds-namespace"},
      "spec": {"source": {}}})"))
                  .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"kind": "DataSource", "metadata": {"name": "nested-ds", "namespace": "ds-namespace",
      "labels": {"template.kubevirt.io/architecture": "arm64"}}, "spec": {"source": {}}})"))
                  .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"kind": "DataSource", "metadata": {"name": "outer", "namespace": "ds-namespace",
      "labels": {"template.kubevirt.io/architecture": "s390x"}},
      "spec": {"source": {"dataSource": {"name": "nested-ds", "namespace": "ds-namespace"}}}})"))
                  .ok());
  return store;
}

std::string vm_with_source_ref(std::string_view kind, std::string_view source_namespace, std::string_view name,
                               std::string_view arch = "") {
  std::string ref = R"({"kind": ")" + std::string(kind) + R"(", "name": ")" + std::string(name) + "\"";
  if (!source_namespace.empty()) {
    ref += R"(, "namespace": ")" + std::string(source_namespace) + "\"";
  }
  ref += "}";
  std::string spec = arch.empty() ? "{}" : R"({"architecture": ")" + std::string(arch) + "\"}";
  return R"({"metadata": {"name": "vm", "namespace": "vm-namespace"}, "spec": {
      "dataVolumeTemplates": [{"metadata": {"name": "root"}, "spec": {"sourceRef": )" +
         ref + R"(, "storage": {}}}],
      "template": {"spec": )" +
         spec + "}}}";
}

std::string architecture_of(const std::string& vm_text, const ObjectStore& store) {
  json::Document vm = parse(vm_text);
  set_vm_architecture(vm, "vm-namespace", store, vm.GetAllocator());
  return text(vm, "/spec/template/spec/architecture");
}

TEST(DefaultsVmArchitecture, UserProvidedValueWins) {
  const ObjectStore store = cluster_with_datasources();
  EXPECT_EQ(architecture_of(vm_with_source_ref("DataSource", "ds-namespace", "ds", "userArch"), store), "userArch");
}

TEST(DefaultsVmArchitecture, ReferencedDataSourceLabel) {
  const ObjectStore store = cluster_with_datasources();
  EXPECT_EQ(architecture_of(vm_with_source_ref("DataSource", "ds-namespace", "ds"), store), "arm64");
}

TEST(DefaultsVmArchitecture, DataSourceWithoutNamespaceIsLookedUpInTheVmNamespace) {
  const ObjectStore store = cluster_with_datasources();
  EXPECT_EQ(architecture_of(vm_with_source_ref("DataSource", "", "ds"), store), "s390x");
}

TEST(DefaultsVmArchitecture, FollowsOneNestedDataSource) {
  // The outer DataSource's own label is not read: the nested one replaces it.
  const ObjectStore store = cluster_with_datasources();
  EXPECT_EQ(architecture_of(vm_with_source_ref("DataSource", "ds-namespace", "outer"), store), "arm64");
}

TEST(DefaultsVmArchitecture, SourceRefKindIsCaseInsensitive) {
  const ObjectStore store = cluster_with_datasources();
  EXPECT_EQ(architecture_of(vm_with_source_ref("datasource", "ds-namespace", "ds"), store), "arm64");
  EXPECT_EQ(architecture_of(vm_with_source_ref("DATASOURCE", "ds-namespace", "ds"), store), "arm64");
  // strings.EqualFold folds U+017F (long s) with 's'.
  EXPECT_EQ(architecture_of(vm_with_source_ref("Data\xC5\xBFource", "ds-namespace", "ds"), store), "arm64");
}

TEST(DefaultsVmArchitecture, FallsBackToTheClusterDefault) {
  const ObjectStore store = cluster_with_datasources();
  // unknown architecture label, no label, missing DataSource, other sourceRef kind, no templates
  EXPECT_EQ(architecture_of(vm_with_source_ref("DataSource", "ds-namespace", "unknown"), store), "configArch");
  EXPECT_EQ(architecture_of(vm_with_source_ref("DataSource", "ds-namespace", "unlabelled"), store), "configArch");
  EXPECT_EQ(architecture_of(vm_with_source_ref("DataSource", "ds-namespace", "missing"), store), "configArch");
  EXPECT_EQ(architecture_of(vm_with_source_ref("PersistentVolumeClaim", "ds-namespace", "ds"), store), "configArch");
  EXPECT_EQ(architecture_of(R"({"metadata": {"name": "vm"}, "spec": {"template": {"spec": {}}}})", store),
            "configArch");
}

TEST(DefaultsVmArchitecture, WithoutKubeVirtCrTheDefaultIsAmd64) {
  const ObjectStore empty;
  EXPECT_EQ(architecture_of(R"({"metadata": {"name": "vm"}, "spec": {"template": {"spec": {}}}})", empty), "amd64");
}

TEST(DefaultsVmArchitecture, FirstUsableTemplateWins) {
  const ObjectStore store = cluster_with_datasources();
  const std::string vm = R"({"metadata": {"name": "vm"}, "spec": {"dataVolumeTemplates": [
      {"metadata": {"name": "a"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "unlabelled", "namespace": "ds-namespace"}}},
      {"metadata": {"name": "b"}, "spec": {"source": {"http": {"url": "http://example.com/disk.img"}}}},
      {"metadata": {"name": "c"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "ds", "namespace": "ds-namespace"}}},
      {"metadata": {"name": "d"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "ds", "namespace": "vm-namespace"}}}],
      "template": {"spec": {}}}})";
  EXPECT_EQ(architecture_of(vm, store), "arm64");
}

TEST(DefaultsVmArchitecture, NoTemplateIsLeftForValidation) {
  const ObjectStore store = cluster_with_datasources();
  json::Document vm = parse(R"({"metadata": {"name": "vm"}, "spec": {"runStrategy": "Always"}})");
  set_vm_architecture(vm, "default", store, vm.GetAllocator());
  set_vm_machine_type(vm, store.config(), vm.GetAllocator());
  EXPECT_EQ(dump(vm), R"({"metadata":{"name":"vm"},"spec":{"runStrategy":"Always"}})");
}

std::string machine_type_of(std::string_view arch, const ClusterConfig& config, std::string_view machine = "") {
  std::string domain = machine.empty() ? "{}" : R"({"machine": {"type": ")" + std::string(machine) + "\"}}";
  json::Document vm = parse(R"({"spec": {"template": {"spec": {"architecture": ")" + std::string(arch) +
                            R"(", "domain": )" + domain + "}}}}");
  set_vm_machine_type(vm, config, vm.GetAllocator());
  return text(vm, "/spec/template/spec/domain/machine/type");
}

TEST(DefaultsVmArchitecture, MachineTypePerArchitecture) {
  const ClusterConfig config;
  EXPECT_EQ(machine_type_of("amd64", config), "q35");
  EXPECT_EQ(machine_type_of("arm64", config), "virt");
  EXPECT_EQ(machine_type_of("s390x", config), "s390-ccw-virtio");
  EXPECT_EQ(machine_type_of("", config), "q35");
}

TEST(DefaultsVmArchitecture, MachineTypeFromArchitectureConfiguration) {
  // vm-mutator_test.go "should apply configurable defaults on VM create"
  ClusterConfig config;
  config.arch_machine_type["amd64"] = "pc-q35-3.0";
  EXPECT_EQ(machine_type_of("amd64", config), "pc-q35-3.0");
  EXPECT_EQ(machine_type_of("arm64", config), "virt");
  config.arch_machine_type["arm64"] = "virt-8.0";
  EXPECT_EQ(machine_type_of("arm64", config), "virt-8.0");
}

TEST(DefaultsVmArchitecture, DeprecatedClusterMachineTypeWinsForEveryArchitecture) {
  // virt-config.go GetMachineType: spec.configuration.machineType is read first.
  ClusterConfig config;
  config.machine_type = "pc-q35-rhel8.6.0";
  config.arch_machine_type["amd64"] = "pc-q35-3.0";
  EXPECT_EQ(machine_type_of("amd64", config), "pc-q35-rhel8.6.0");
  EXPECT_EQ(machine_type_of("s390x", config), "pc-q35-rhel8.6.0");
}

TEST(DefaultsVmArchitecture, UserMachineTypeIsKept) {
  ClusterConfig config;
  config.machine_type = "pc-q35-3.0";
  EXPECT_EQ(machine_type_of("amd64", config, "pc-q35-2.12"), "pc-q35-2.12");
}

TEST(DefaultsVmArchitecture, SupportsPcieHotplug) {
  // defaults_test.go "should report PCIe hotplug support based on architecture and machine type"
  struct Case {
    std::string arch;
    std::optional<std::string> machine;
    bool expected;
  };
  const Case cases[] = {
      {"amd64", "pc-q35-3.0", true},    {"amd64", std::nullopt, true}, {"amd64", "pc-i440fx-2.12", false},
      {"arm64", "virt", true},          {"arm64", "virt-6.2", true},   {"arm64", std::nullopt, true},
      {"", "pc-q35-3.0", true},         {"", std::nullopt, true},      {"s390x", std::nullopt, false},
      {"ppc64le", std::nullopt, false},
  };
  for (const Case& c : cases) {
    std::string spec = R"({"architecture": ")" + c.arch + R"(", "domain": {)";
    if (c.machine) {
      spec += R"("machine": {"type": ")" + *c.machine + "\"}";
    }
    spec += "}}";
    EXPECT_EQ(supports_pcie_hotplug(parse(spec)), c.expected) << spec;
  }
}

// pkg/defaults SupportsPCIeHotplug at v1.8.2 asks the architecture only.
TEST(DefaultsVmArchitecture, AtV18PcieHotplugAnyMachineType) {
  EXPECT_TRUE(supports_pcie_hotplug(
      parse(R"({"architecture": "amd64", "domain": {"machine": {"type": "pc-i440fx-2.12"}}})"), Release::v1_8));
  EXPECT_TRUE(supports_pcie_hotplug(parse(R"({"domain": {"machine": {"type": "s390-ccw-virtio"}}})"), Release::v1_8));
  EXPECT_FALSE(supports_pcie_hotplug(parse(R"({"architecture": "s390x", "domain": {}})"), Release::v1_8));
}

// v1.7.0 has no kubevirt.io/pci-topology-version: neither mutator writes it.
TEST(DefaultsVmArchitecture, AtV17NoPciTopologyAnnotation) {
  const json::Document amd64 = parse(R"({"architecture": "amd64", "domain": {"machine": {"type": "q35"}}})");
  EXPECT_FALSE(annotates_pci_topology(amd64, Release::v1_7));
  EXPECT_TRUE(annotates_pci_topology(amd64, Release::v1_8));
  EXPECT_TRUE(annotates_pci_topology(amd64, Release::main));
  EXPECT_FALSE(annotates_pci_topology(parse(R"({"architecture": "s390x", "domain": {}})"), Release::v1_8));
}

TEST(DefaultsVmArchitecture, PciTopologyVersionIsAddedButNeverReplaced) {
  json::Document metadata = parse(R"({"name": "vm"})");
  set_pci_topology_version(metadata, metadata.GetAllocator());
  EXPECT_EQ(text(metadata, "/annotations/kubevirt.io~1pci-topology-version"), "v3");

  json::Document existing = parse(R"({"annotations": {"kubevirt.io/pci-topology-version": "v2", "a": "b"}})");
  set_pci_topology_version(existing, existing.GetAllocator());
  EXPECT_EQ(dump(existing), R"({"annotations":{"kubevirt.io/pci-topology-version":"v2","a":"b"}})");
}

}  // namespace
}  // namespace vmgate::admission::defaults
