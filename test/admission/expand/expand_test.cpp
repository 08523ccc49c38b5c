// Tests of what the VM controller does with an admitted VM (pkg/virt-controller/watch/vm/vm.go
// startVMI, pkg/instancetype/controller/vm/controller.go ApplyToVMI, pkg/instancetype/expand):
// template copy, stable firmware UUID, disks for volumes, autoattach preferences before the default
// input and pod network, instancetype then preference, the [cluster-]instancetype/preference-name
// annotations, and the controller's conflict error text.
#include "vmgate/admission/expand/expand.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/json_test_support.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::expand {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::text;

ObjectStore cluster() {
  ObjectStore store;
  EXPECT_TRUE(
      store
          .add(parse(R"({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
      "metadata": {"name": "u1.small"}, "spec": {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}})"))
          .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
      "metadata": {"name": "mine", "namespace": "ns"}, "spec": {"cpu": {"guest": 4}, "memory": {"guest": "4Gi"}}})"))
                  .ok());
  EXPECT_TRUE(
      store
          .add(parse(R"({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
      "metadata": {"name": "fedora"}, "spec": {"devices": {"preferredDiskBus": "virtio", "preferredAutoattachInputDevice": true,
      "preferredInputBus": "virtio", "preferredInputType": "tablet", "preferredInterfaceModel": "virtio"}}})"))
          .ok());
  EXPECT_TRUE(store
                  .add(parse(R"({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
      "metadata": {"name": "no-pod-net", "namespace": "ns"}, "spec": {"devices": {"preferredAutoattachPodInterface": false,
      "preferredAutoattachInputDevice": true}}})"))
                  .ok());
  return store;
}

std::string vm_text(std::string_view spec_members,
                    std::string_view template_text = R"({"spec": {"domain": {"devices": {}}}})") {
  std::string spec = R"({"runStrategy": "Always", "template": )" + std::string(template_text);
  if (!spec_members.empty()) {
    spec += ", " + std::string(spec_members);
  }
  return R"({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "testvm", "namespace": "ns"},
             "spec": )" +
         spec + "}}";
}

json::Document built(const std::string& vm, const ObjectStore& store) {
  Result<json::Document> vmi = build_vmi(parse(vm), "ns", store);
  EXPECT_TRUE(vmi.ok()) << (vmi.ok() ? "" : vmi.error().message);
  if (!vmi.ok()) {
    return parse("{}");
  }
  return std::move(vmi.value());
}

std::string build_error(const std::string& vm, const ObjectStore& store) {
  Result<json::Document> vmi = build_vmi(parse(vm), "ns", store);
  return vmi.ok() ? "(built)" : vmi.error().message;
}

TEST(ExpandBuildVmi, CopiesTheTemplate) {
  const ObjectStore store = cluster();
  const json::Document vmi = built(vm_text("", R"({"metadata": {"generateName": "x-", "labels": {"app": "demo"},
      "annotations": {"a": "b"}}, "spec": {"domain": {"devices": {}, "memory": {"guest": "1Gi"}}}})"),
                                   store);
  EXPECT_EQ(text(vmi, "/apiVersion"), "kubevirt.io/v1");
  EXPECT_EQ(text(vmi, "/kind"), "VirtualMachineInstance");
  // SetupVMIFromVM's controller reference and startVMI's generation annotation (1: the API server's
  // generation of a VM being created).
  EXPECT_EQ(text(vmi, "/metadata"),
            R"({"labels":{"app":"demo"},"annotations":{"a":"b","kubevirt.io/vm-generation":"1"},"name":"testvm",)"
            R"("namespace":"ns","ownerReferences":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",)"
            R"("name":"testvm","uid":"","controller":true,"blockOwnerDeletion":true}],)"
            R"("finalizers":["kubevirt.io/virtualMachineControllerFinalize"]})");
  EXPECT_EQ(text(vmi, "/spec/domain/memory/guest"), "1Gi");
}

TEST(ExpandBuildVmi, StableFirmwareUuid) {
  const ObjectStore store = cluster();
  // firmware.go CalculateLegacyUUID: uuid5(6a1a24a1-4061-4607-8bf4-a3963d0c5895, "testvm")
  EXPECT_EQ(text(built(vm_text(""), store), "/spec/domain/firmware/uuid"), "5a9fc181-957e-5c32-9e5a-2de5e9673531");
  EXPECT_EQ(text(built(vm_text("", R"({"spec": {"domain": {"firmware": {"uuid": "given"}, "devices": {}}}})"), store),
                 "/spec/domain/firmware/uuid"),
            "given");
}

TEST(ExpandBuildVmi, DisksForVolumesAndTheDefaultPodNetwork) {
  const ObjectStore store = cluster();
  const json::Document vmi = built(vm_text("", R"({"spec": {"domain": {"devices": {}},
      "volumes": [{"name": "root", "containerDisk": {"image": "fedora"}}]}})"),
                                   store);
  EXPECT_EQ(text(vmi, "/spec/domain/devices/disks"), R"([{"name":"root"}])");
  EXPECT_EQ(text(vmi, "/spec/domain/devices/interfaces"), R"([{"name":"default","bridge":{}}])");
  EXPECT_EQ(text(vmi, "/spec/networks"), R"([{"name":"default","pod":{}}])");
  // No instancetype or preference: no annotations but the generation, and no input device.
  EXPECT_EQ(text(vmi, "/metadata/annotations"), R"({"kubevirt.io/vm-generation":"1"})");
  EXPECT_EQ(text(vmi, "/spec/domain/devices/inputs"), "<absent>");
}

TEST(ExpandBuildVmi, MissingTemplate) {
  EXPECT_EQ(build_error(R"({"metadata": {"name": "testvm"}, "spec": {"runStrategy": "Always"}})", cluster()),
            "missing virtual machine template.");
}

TEST(ExpandBuildVmi, NamelessMatcherIsLookedUpAndNotFound) {
  // instancetype/find/spec.go: a matcher the inference left empty is still looked up, by name "".
  EXPECT_EQ(build_error(vm_text(R"("instancetype": {})"), cluster()),
            R"(virtualmachineclusterinstancetypes.instancetype.kubevirt.io "" not found)");
  EXPECT_EQ(build_error(vm_text(R"("preference": {"inferFromVolume": "root", "kind": "VirtualMachinePreference"})"),
                        cluster()),
            R"(virtualmachinepreferences.instancetype.kubevirt.io "" not found)");
}

TEST(ExpandBuildVmi, SlirpStopsTheController) {
  ObjectStore store;
  ASSERT_TRUE(store
                  .add(parse(R"({"kind": "KubeVirt", "metadata": {"name": "kv", "namespace": "kubevirt"},
      "spec": {"configuration": {"network": {"defaultNetworkInterface": "slirp"}}}})"))
                  .ok());
  EXPECT_EQ(build_error(vm_text(""), store), "slirp interface is deprecated as of v1.3");
}

TEST(ExpandBuildVmi, InputDeviceOnlyWhenAutoattachIsTrue) {
  const ObjectStore store = cluster();
  EXPECT_EQ(text(built(vm_text("", R"({"spec": {"domain": {"devices": {"autoattachInputDevice": true}}}})"), store),
                 "/spec/domain/devices/inputs"),
            R"([{"name":"default-0"}])");
  // Existing inputs are kept as they are.
  EXPECT_EQ(text(built(vm_text("", R"({"spec": {"domain": {"devices": {"autoattachInputDevice": true,
                 "inputs": [{"name": "mine", "type": "tablet"}]}}}})"),
                       store),
                 "/spec/domain/devices/inputs"),
            R"([{"name":"mine","type":"tablet"}])");
}

TEST(ExpandBuildVmi, AutoattachPreferencesComeBeforeDefaultInputAndNetwork) {
  const ObjectStore store = cluster();
  // The preference asks for an input device: it is added as default-0 and then gets the preferred
  // bus and type; the default interface gets the preferred model.
  const json::Document vmi = built(vm_text(R"("preference": {"name": "fedora"})"), store);
  EXPECT_EQ(text(vmi, "/spec/domain/devices/autoattachInputDevice"), "true");
  EXPECT_EQ(text(vmi, "/spec/domain/devices/inputs"), R"([{"name":"default-0","bus":"virtio","type":"tablet"}])");
  EXPECT_EQ(text(vmi, "/spec/domain/devices/interfaces"), R"([{"name":"default","bridge":{},"model":"virtio"}])");
  EXPECT_EQ(text(vmi, "/metadata/annotations"),
            R"({"kubevirt.io/vm-generation":"1","kubevirt.io/cluster-preference-name":"fedora"})");

  // preferredAutoattachPodInterface: false means no default interface or pod network.
  const json::Document no_net =
      built(vm_text(R"("preference": {"name": "no-pod-net", "kind": "VirtualMachinePreference"})"), store);
  EXPECT_EQ(text(no_net, "/spec/networks"), "<absent>");
  EXPECT_EQ(text(no_net, "/spec/domain/devices/interfaces"), "<absent>");
  EXPECT_EQ(text(no_net, "/spec/domain/devices/inputs"), R"([{"name":"default-0"}])");
  EXPECT_EQ(text(no_net, "/metadata/annotations"),
            R"({"kubevirt.io/vm-generation":"1","kubevirt.io/preference-name":"no-pod-net"})");
}

TEST(ExpandBuildVmi, UserAutoattachValueBeatsThePreference) {
  const ObjectStore store = cluster();
  const json::Document vmi = built(vm_text(R"("preference": {"name": "fedora"})",
                                           R"({"spec": {"domain": {"devices": {"autoattachInputDevice": false}}}})"),
                                   store);
  EXPECT_EQ(text(vmi, "/spec/domain/devices/inputs"), "<absent>");
}

TEST(ExpandBuildVmi, InstancetypeAnnotationsByKind) {
  const ObjectStore store = cluster();
  EXPECT_EQ(text(built(vm_text(R"("instancetype": {"name": "u1.small"})"), store), "/metadata/annotations"),
            R"({"kubevirt.io/vm-generation":"1","kubevirt.io/cluster-instancetype-name":"u1.small"})");
  EXPECT_EQ(text(built(vm_text(R"("instancetype": {"name": "u1.small", "kind": "virtualmachineclusterinstancetypes"})"),
                       store),
                 "/metadata/annotations"),
            R"({"kubevirt.io/vm-generation":"1","kubevirt.io/cluster-instancetype-name":"u1.small"})");
  EXPECT_EQ(
      text(built(vm_text(R"("instancetype": {"name": "mine", "kind": "VirtualMachineInstancetype"},
                                  "preference": {"name": "fedora", "kind": "VirtualMachineClusterPreference"})"),
                 store),
           "/metadata/annotations"),
      R"({"kubevirt.io/vm-generation":"1","kubevirt.io/instancetype-name":"mine","kubevirt.io/cluster-preference-name":"fedora"})");
}

TEST(ExpandBuildVmi, InstancetypeIsApplied) {
  const ObjectStore store = cluster();
  const json::Document vmi = built(vm_text(R"("instancetype": {"name": "u1.small"})"), store);
  EXPECT_EQ(text(vmi, "/spec/domain/cpu/sockets"), "2");
  EXPECT_EQ(text(vmi, "/spec/domain/memory/guest"), "2Gi");
}

TEST(ExpandBuildVmi, ConflictsInTheControllersWords) {
  const ObjectStore store = cluster();
  EXPECT_EQ(build_error(
                vm_text(R"("instancetype": {"name": "u1.small"})",
                        R"({"spec": {"domain": {"cpu": {"sockets": 2}, "memory": {"guest": "1Gi"}, "devices": {}}}})"),
                store),
            "VMI conflicts with instancetype spec in fields: [spec.domain.cpu.sockets, spec.domain.memory.guest]");
  EXPECT_EQ(build_error(vm_text(R"("instancetype": {"name": "u1.small"})",
                                R"({"spec": {"domain": {"cpu": {"sockets": 2}, "devices": {}}}})"),
                        store),
            "VMI conflicts with instancetype spec in fields: [spec.domain.cpu.sockets]");
}

TEST(ExpandBuildVmi, LookupErrors) {
  const ObjectStore store = cluster();
  EXPECT_EQ(build_error(vm_text(R"("instancetype": {"name": "u1.large"})"), store),
            "virtualmachineclusterinstancetypes.instancetype.kubevirt.io \"u1.large\" not found");
  EXPECT_EQ(build_error(vm_text(R"("instancetype": {"name": "u1.small", "kind": "vmcf"})"), store),
            "got unexpected kind in InstancetypeMatcher: vmcf");
  EXPECT_EQ(build_error(vm_text(R"("preference": {"name": "fedora", "kind": "VirtualMachinePreference"})"), store),
            "virtualmachinepreferences.instancetype.kubevirt.io \"fedora\" not found");
}

TEST(ExpandInPlace, WritesTheInstancetypeIntoTheTemplateAndDropsTheMatchers) {
  const ObjectStore store = cluster();
  json::Document vm = parse(vm_text(
      R"("instancetype": {"name": "u1.small"}, "preference": {"name": "fedora"})",
      R"({"spec": {"domain": {"devices": {}}, "volumes": [{"name": "root", "containerDisk": {"image": "f"}}]}})"));
  json::Value status;
  status.CopyFrom(
      parse(R"({"instancetypeRef": {"name": "u1.small"}, "preferenceRef": {"name": "fedora"}, "ready": false})"),
      vm.GetAllocator());
  vm.AddMember("status", status, vm.GetAllocator());
  ASSERT_TRUE(expand_vm_in_place(vm, "ns", store));
  EXPECT_EQ(text(vm, "/spec/instancetype"), "<absent>");
  EXPECT_EQ(text(vm, "/spec/preference"), "<absent>");
  EXPECT_EQ(text(vm, "/status"), R"({"ready":false})");
  EXPECT_EQ(text(vm, "/spec/template/spec/domain/cpu/sockets"), "2");
  EXPECT_EQ(text(vm, "/spec/template/spec/domain/memory/guest"), "2Gi");
  EXPECT_EQ(text(vm, "/spec/template/spec/domain/devices/disks"), R"([{"name":"root","disk":{"bus":"virtio"}}])");
  EXPECT_EQ(text(vm, "/spec/template/spec/networks"), R"([{"name":"default","pod":{}}])");
  // SetDefaultVirtualMachineInstanceSpec ran on the template after the instancetype.
  EXPECT_EQ(text(vm, "/spec/template/spec/domain/machine/type"), "q35");
}

TEST(ExpandInPlace, NothingToDoOrCannotExpand) {
  const ObjectStore store = cluster();
  for (const std::string& text_vm : {vm_text(""), vm_text(R"("instancetype": {"name": "missing"})"),
                                     vm_text(R"("instancetype": {"name": "u1.small"})",
                                             R"({"spec": {"domain": {"cpu": {"cores": 2}, "devices": {}}}})")}) {
    json::Document vm = parse(text_vm);
    const std::string before = dump(vm);
    EXPECT_FALSE(expand_vm_in_place(vm, "ns", store)) << text_vm;
    EXPECT_EQ(dump(vm), before);
  }
}

TEST(ExpandBuildVmi, GenerationAndReceiverAnnotations) {
  const ObjectStore store = cluster();
  json::Document vm = parse(vm_text(""));
  json::set(*json::find(vm, "metadata"), "generation", json::Value(7), vm.GetAllocator());
  json::set_string(*json::find(vm, "spec"), "runStrategy", "WaitAsReceiver", vm.GetAllocator());
  Result<json::Document> vmi = build_vmi(vm, "ns", store);
  ASSERT_TRUE(vmi.ok()) << vmi.error().message;
  EXPECT_EQ(text(*vmi, "/metadata/annotations"),
            R"({"kubevirt.io/vm-generation":"7","kubevirt.io/create-migration-target":"true"})");
}

}  // namespace
}  // namespace vmgate::admission::expand
