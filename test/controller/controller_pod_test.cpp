// The launcher pod against KubeVirt's template rules, field by field, with the figures worked
// out by hand from pkg/virt-controller/services (template.go, renderresources.go,
// nodeselectorrenderer.go, rendervolumes.go) and pkg/hypervisor/kvm GetMemoryOverhead.
#include "vmgate/controller/controller_pod.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "support/json_test_support.hpp"
#include "vmgate/admission/cluster.hpp"
#include "vmgate/kube/pod_paths.hpp"

namespace vmgate::controller {
namespace {

using testing::parse;
using testing::text;

constexpr std::int64_t mi = std::int64_t{1} << 20U;

// A list of volumes or mounts without the pod's own (the VMI file and the private emptyDir,
// covered by PodLinkCarriesTheVmiAsAFileAndNoToken): what the VMI's own volumes became.
std::string vmi_entries(const json::Value* list) {
  json::Document out(rapidjson::kArrayType);
  if (list != nullptr && list->IsArray()) {
    for (const json::Value& entry : list->GetArray()) {
      const std::string_view name = json::find_string(entry, "name");
      if (name != kube::pod_paths::vmi_volume && name != kube::pod_paths::private_volume) {
        out.PushBack(json::copy(entry, out.GetAllocator()), out.GetAllocator());
      }
    }
  }
  return json::to_string(out);
}

std::int64_t overhead_bytes(std::string_view vmi_text, PodSettings settings = {}) {
  const json::Document vmi = parse(vmi_text);
  Result<admission::Quantity> overhead = memory_overhead(vmi, settings);
  EXPECT_TRUE(overhead.ok()) << (overhead.ok() ? "" : overhead.error().message);
  return overhead.ok() ? *overhead->value() : -1;
}

// KubeVirt's own unit test (hypervisorbackend_test.go): 1Gi requested, nothing else: 2Mi of page
// tables + 240Mi of processes + 8Mi IO thread + 32Mi video + 8Mi for the one vCPU.
TEST(MemoryOverhead, BaseCaseMatchesKubeVirtsTest) {
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{"resources":{"requests":{"memory":"1Gi"}}}}})"), 290 * mi);
}

TEST(MemoryOverhead, CountsVcpusFromTopologyThenLimitsThenRequests) {
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{"cpu":{"sockets":2,"cores":2,"threads":2},
                                "resources":{"requests":{"memory":"1Gi"}}}}})"),
            (290 + 7 * 8) * mi);
  EXPECT_EQ(overhead_bytes(
                R"({"spec":{"domain":{"resources":{"requests":{"memory":"1Gi","cpu":"3"},"limits":{"cpu":"5"}}}}})"),
            (290 + 4 * 8) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{"resources":{"requests":{"memory":"1Gi","cpu":"3"}}}}})"),
            (290 + 2 * 8) * mi);
}

TEST(MemoryOverhead, AddsEachDeviceAndFeature) {
  const std::string base = R"("resources":{"requests":{"memory":"1Gi"}})";
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(,"devices":{"autoattachGraphicsDevice":false}}}})"),
            258 * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"architecture":"arm64","domain":{)" + base + "}}}"), (290 + 128) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(,"devices":{"hostDevices":[{"name":"a"}]}}}})"),
            (290 + 1024) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(},"volumes":[{"name":"m","downwardMetrics":{}}]}})"),
            (290 + 1) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(},"livenessProbe":{"exec":{"command":["true"]}},
                                "readinessProbe":{"exec":{"command":["true"]}}}})"),
            (290 + 120) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(,"launchSecurity":{"sev":{}}}}})"), (290 + 256) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(,"devices":{"tpm":{}}}}})"), (290 + 53) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(,"devices":{"tpm":{"enabled":false}}}}})"), 290 * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{)" + base + R"(,"cpu":{"dedicatedCpuPlacement":true}}}})"),
            (290 + 100) * mi);
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{"resources":{"requests":{"memory":"1Gi","cpu":"1"},
                                "limits":{"memory":"1Gi","cpu":"1"}}}}})"),
            (290 + 100) * mi);
  EXPECT_EQ(
      overhead_bytes(R"({"spec":{"domain":{)" + base + R"(,"memory":{"reservedOverhead":{"addedOverhead":"10Mi"}}}}})"),
      (290 + 10) * mi);
}

TEST(MemoryOverhead, AdditionalRatioMultipliesTheTotal) {
  PodSettings settings;
  settings.additional_overhead_ratio = 2.0;
  const std::int64_t once = 290 * mi;
  // MultiplyMemory adds (kB count) x (ratio - 1) in kB.
  EXPECT_EQ(overhead_bytes(R"({"spec":{"domain":{"resources":{"requests":{"memory":"1Gi"}}}}})", settings),
            once + (once + 999) / 1000 * 1000);
}

TEST(MemoryOverhead, AnUnparsableQuantityNamesTheField) {
  const json::Document vmi = parse(R"({"spec":{"domain":{"resources":{"requests":{"memory":"lots"}}}}})");
  Result<admission::Quantity> overhead = memory_overhead(vmi, {});
  ASSERT_FALSE(overhead.ok());
  EXPECT_NE(overhead.error().message.find("spec.domain.resources.requests.memory 'lots'"), std::string::npos)
      << overhead.error().message;
}

// A VMI as the admission core expands a VM with an instancetype (2 Gi of 2 Mi hugepages, a
// Haswell with required and forbidden features) and a preference.
constexpr std::string_view hugepages_vmi = R"({
  "apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
  "metadata":{"name":"vm1","namespace":"ns1","uid":"6a1b2c3d-0000-4000-8000-000000000001",
              "labels":{"app":"demo"}},
  "spec":{
    "terminationGracePeriodSeconds":60,
    "nodeSelector":{"disktype":"ssd"},
    "tolerations":[{"key":"dedicated","operator":"Equal","value":"vms","effect":"NoSchedule"}],
    "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
      {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}}},
    "domain":{
      "cpu":{"sockets":2,"cores":1,"threads":1,"model":"Haswell",
             "features":[{"name":"vmx","policy":"require"},{"name":"pcid"},{"name":"svm","policy":"forbid"},
                         {"name":"x2apic","policy":"optional"}]},
      "memory":{"guest":"2Gi","hugepages":{"pageSize":"2Mi"}},
      "machine":{"type":"q35"},
      "resources":{"requests":{"memory":"2Gi"}},
      "devices":{"interfaces":[{"name":"default","masquerade":{}}]}},
    "networks":[{"name":"default","pod":{}}],
    "volumes":[{"name":"rootdisk","containerDisk":{"image":"quay.io/containerdisks/fedora:40","imagePullPolicy":"IfNotPresent"}},
               {"name":"data","persistentVolumeClaim":{"claimName":"data-pvc"}},
               {"name":"raw","persistentVolumeClaim":{"claimName":"raw-pvc"}},
               {"name":"cloudinit","cloudInitNoCloud":{"userData":"#cloud-config"}}]}})";

// A VMI name of up to 253 characters (admitted) makes a valid pod name, cut as the apiserver cuts
// KubeVirt's generateName: the isolation issue's 240-character VM made the create fail 422 and
// the controller recreate its VMI without end.
TEST(LauncherPod, ALongVmiNameIsCutAsAGenerateName) {
  json::Document vmi =
      parse(R"({"metadata":{"name":"x","namespace":"ns1","uid":"6a1b2c3d-0000-4000-8000-000000000001"}})");
  const std::string long_name(240, 'a');
  json::set_string(vmi["metadata"], "name", long_name, vmi.GetAllocator());
  const std::string name = launcher_pod_name(vmi);
  EXPECT_EQ(name, "virt-launcher-" + std::string(44, 'a') + "6a1b2");
  EXPECT_EQ(name.size(), 63U);
  json::set_string(vmi["metadata"], "name", "vm1", vmi.GetAllocator());
  EXPECT_EQ(launcher_pod_name(vmi), "virt-launcher-vm1-6a1b2");
}

// A VMI that bypassed the webhook (an excluded namespace, a failurePolicy: Ignore outage) may hold
// any number: the renderer refuses what would overflow its arithmetic or make a pod the API
// server refuses, naming the field, instead of computing garbage.
TEST(LauncherPod, NumbersBeyondReasonAreRefusedNotOverflowed) {
  const auto render = [](std::string_view domain, std::string_view spec_extra = "") {
    return launcher_pod(parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{)" +
                              std::string(spec_extra) + R"("domain":)" + std::string(domain) + "}}"),
                        PodSettings{});
  };
  const Result<json::Document> sockets = render(R"({"cpu":{"sockets":4294967296,"cores":4294967296,"threads":8}})");
  ASSERT_FALSE(sockets.ok());
  EXPECT_EQ(sockets.error().message,
            "spec.domain.cpu: sockets x cores x threads is more than the 4096 vCPUs a launcher pod is rendered for");
  const Result<json::Document> negative = render(R"({"resources":{"requests":{"memory":"-18014398207492092"}}})");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().message,
            "spec.domain.resources.requests.memory '-18014398207492092': must not be negative");
  const Result<json::Document> huge = render(R"({"resources":{"requests":{"memory":"9223372036854775807"}}})");
  ASSERT_TRUE(huge.ok()) << huge.error().message;  // the largest request: no overflow in the overhead
  const Result<json::Document> grace = render("{}", R"("terminationGracePeriodSeconds":9223372036854775807,)");
  ASSERT_TRUE(grace.ok()) << grace.error().message;
  EXPECT_EQ(json::find_path(*grace, {"spec", "terminationGracePeriodSeconds"})->GetInt64(), 366 * 24 * 3600 + 30);
}

// A hostDisk path is the node's: its directory becomes a hostPath volume mounted where the
// launcher reads the file, and only with the HostDisk gate (a VMI that bypassed the webhook gets
// no node path).
TEST(LauncherPod, AHostDiskIsTheNodesDirectoryBehindTheGate) {
  const json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{
    "domain":{"devices":{"disks":[{"name":"host","disk":{}}]}},
    "volumes":[{"name":"host","hostDisk":{"path":"/data/images/disk.img","type":"DiskOrCreate","capacity":"1Gi"}}]}})");
  PodSettings settings;
  const Result<json::Document> refused = launcher_pod(vmi, settings);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "spec.volumes[0].hostDisk: HostDisk feature gate is not enabled");
  settings.host_disk_enabled = true;
  const Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(vmi_entries(json::find_path(*pod, {"spec", "volumes"})),
            R"([{"name":"host","hostPath":{"path":"/data/images","type":"DirectoryOrCreate"}}])");
  EXPECT_EQ(vmi_entries(json::find(json::find_path(*pod, {"spec", "containers"})->GetArray()[0], "volumeMounts")),
            R"([{"name":"host","mountPath":"/var/run/kubevirt-private/vmi-disks/host"}])");
  const json::Document relative = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{
    "domain":{},"volumes":[{"name":"host","hostDisk":{"path":"token","type":"Disk"}}]}})");
  EXPECT_EQ(launcher_pod(relative, settings).error().message,
            "spec.volumes[0].hostDisk.path: must be an absolute path to a file of the node");
}

TEST(LauncherPod, MetadataCommandAndOwner) {
  const json::Document vmi = parse(hugepages_vmi);
  PodSettings settings;
  settings.image = "registry.example/vmgate-launcher:1";
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(text(*pod, "/metadata/name"), "virt-launcher-vm1-6a1b2");
  EXPECT_EQ(text(*pod, "/metadata/namespace"), "ns1");
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"metadata", "labels"}),
                                   R"({"app":"demo","kubevirt.io":"virt-launcher",
                                       "kubevirt.io/created-by":"6a1b2c3d-0000-4000-8000-000000000001",
                                       "vm.kubevirt.io/name":"vm1","vmi.kubevirt.io/id":"vm1"})"));
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"metadata", "ownerReferences"}),
                                   R"([{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","name":"vm1",
                                        "uid":"6a1b2c3d-0000-4000-8000-000000000001","controller":true,
                                        "blockOwnerDeletion":true}])"));
  EXPECT_EQ(text(*pod, "/spec/restartPolicy"), "Never");
  EXPECT_EQ(text(*pod, "/spec/terminationGracePeriodSeconds"), "90");  // 60 + 2 x 15 padding
  EXPECT_EQ(text(*pod, "/spec/hostname"), "vm1");
  EXPECT_EQ(text(*pod, "/spec/containers/0/name"), "compute");
  EXPECT_EQ(text(*pod, "/spec/containers/0/image"), "registry.example/vmgate-launcher:1");
  EXPECT_EQ(
      text(*pod, "/spec/containers/0/command"),
      R"(["vmgate-launcher","--vmi","/var/run/vmgate/vmi/vmi.json","--status-file",)"
      R"("/var/run/kubevirt-private/vmgate-status.json","--console-log","/var/run/kubevirt-private/virt-serial0-log"])");
  EXPECT_EQ(text(*pod, "/spec/tolerations"),
            R"([{"key":"dedicated","operator":"Equal","value":"vms","effect":"NoSchedule"}])");
}

// A VMI's serviceAccountName alone (no serviceAccount volume) puts no token in the pod: naming
// an account, even one of vmgate's, reaches nothing (the isolation issue's finding 1c).
TEST(LauncherPod, AServiceAccountNameAloneMountsNoToken) {
  json::Document vmi = parse(hugepages_vmi);
  for (const char* account : {"", "own", "kubevirt-handler", "kubevirt-controller", "vmgate-launcher"}) {
    if (*account != '\0') {
      json::set_string(vmi["spec"], "serviceAccountName", account, vmi.GetAllocator());
    }
    const Result<json::Document> pod = launcher_pod(vmi, {});
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    EXPECT_EQ(text(*pod, "/spec/serviceAccountName"), "<absent>") << account;
    EXPECT_EQ(text(*pod, "/spec/automountServiceAccountToken"), "false") << account;
  }
}

TEST(LauncherPod, ResourcesWithHugepages) {
  const json::Document vmi = parse(hugepages_vmi);
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  // Overhead: 2Gi / 512 after rounding to kB (4194304) + 240Mi + 8Mi IO thread + 32Mi video +
  // 2 x 8Mi vCPUs = 314572800 bytes. WithHugePages: the memory request is only what exceeds the
  // guest (nothing) plus the overhead; the 2Gi go to hugepages-2Mi. The sum starts from
  // KubeVirt's zero kilo-scaled (decimal) quantity, so 300Mi prints in decimal form.
  EXPECT_TRUE(
      testing::json_equals(json::find_path(*pod, {"spec", "containers"})[0][0]["resources"]["requests"],
                           R"({"cpu":"200m","ephemeral-storage":"50M","hugepages-2Mi":"2Gi","memory":"314572800"})"));
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"spec", "containers"})[0][0]["resources"]["limits"],
                                   R"({"devices.kubevirt.io/kvm":"1","devices.kubevirt.io/tun":"1",
                                       "devices.kubevirt.io/vhost-net":"1","hugepages-2Mi":"2Gi"})"));
}

TEST(LauncherPod, ResourcesWithoutHugepagesAddOverheadToTheRequest) {
  const json::Document vmi = parse(R"({"metadata":{"name":"a","namespace":"b","uid":"u1"},
    "spec":{"domain":{"cpu":{"sockets":1,"cores":1,"threads":1},"memory":{"guest":"1Gi"},
                      "resources":{"requests":{"memory":"1Gi"},"limits":{"memory":"2Gi"}},"devices":{}}}})");
  PodSettings settings;
  settings.allow_emulation = true;
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  // 1Gi + 290Mi; the limit 2Gi + 290Mi; no kvm under emulation, no interfaces: no tun.
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"spec", "containers"})[0][0]["resources"],
                                   R"({"requests":{"cpu":"100m","ephemeral-storage":"50M","memory":"1314Mi"},
                                       "limits":{"memory":"2338Mi"}})"));
}

TEST(LauncherPod, MemoryRequestFromGuestWithOvercommit) {
  const json::Document vmi = parse(R"({"metadata":{"name":"a","namespace":"b","uid":"u1"},
    "spec":{"domain":{"memory":{"guest":"1Gi"},"devices":{}}}})");
  PodSettings settings;
  settings.memory_overcommit = 200;
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  // Half the guest (overcommit 200 %) + the overhead of a VMI requesting nothing (0 page tables):
  // 512Mi + 288Mi.
  EXPECT_EQ(text(*pod, "/spec/containers/0/resources/requests/memory"), "800Mi");
}

TEST(LauncherPod, DedicatedCpusAreWholeAndGuaranteed) {
  const json::Document vmi = parse(R"({"metadata":{"name":"a","namespace":"b","uid":"u1"},
    "spec":{"domain":{"cpu":{"sockets":1,"cores":2,"threads":1,"dedicatedCpuPlacement":true,"isolateEmulatorThread":true},
                      "resources":{"requests":{"memory":"1Gi"}},"devices":{}}}})");
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(text(*pod, "/spec/containers/0/resources/requests/cpu"), "3");
  EXPECT_EQ(text(*pod, "/spec/containers/0/resources/limits/cpu"), "3");
  EXPECT_EQ(text(*pod, "/spec/nodeSelector/kubevirt.io~1cpumanager"), "true");
}

TEST(LauncherPod, NodeSelectorsForModelFeaturesMachineAndTheVmis) {
  const json::Document vmi = parse(hugepages_vmi);
  PodSettings settings;
  settings.node_selectors = {{"cluster-wide", "yes"}};
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"spec", "nodeSelector"}),
                                   R"({"kubevirt.io/schedulable":"true","cluster-wide":"yes","disktype":"ssd",
                                       "cpu-model.node.kubevirt.io/Haswell":"true",
                                       "cpu-feature.node.kubevirt.io/vmx":"true",
                                       "cpu-feature.node.kubevirt.io/pcid":"true",
                                       "machine-type.node.kubevirt.io/q35":"true"})"));
  // The forbidden feature joins every required term of the VMI's own affinity.
  EXPECT_TRUE(
      testing::json_equals(json::find_path(*pod, {"spec", "affinity"}),
                           R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
           {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]},
                                {"key":"cpu-feature.node.kubevirt.io/svm","operator":"DoesNotExist"}]}]}}})"));
}

// status.machine is the node agent's to write: one a user set at CREATE selects nothing.
TEST(LauncherPod, TheMachineTypeLabelComesFromTheSpecOnly) {
  json::Document vmi = parse(hugepages_vmi);
  auto& a = vmi.GetAllocator();
  json::Value& status = json::ensure_object(vmi, "status", a);
  json::set(status, "machine", json::copy(parse(R"({"type":"pc-q35-rhel9.6.0/../x"})"), a), a);
  Result<json::Document> pod = launcher_pod(vmi, PodSettings{});
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const json::Value* selectors = json::find_path(*pod, {"spec", "nodeSelector"});
  ASSERT_NE(selectors, nullptr);
  EXPECT_EQ(text(*selectors, "/machine-type.node.kubevirt.io~1q35"), "true");
  EXPECT_EQ(selectors->MemberCount(), 6U);
}

TEST(LauncherPod, HostModelGetsNoModelLabelButAvoidsObsoleteHosts) {
  const json::Document vmi = parse(R"({"metadata":{"name":"a","namespace":"b","uid":"u1"},
    "spec":{"architecture":"amd64","domain":{"cpu":{"model":"host-model"},"devices":{}}}})");
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"spec", "nodeSelector"}),
                                   R"({"kubevirt.io/schedulable":"true","kubernetes.io/arch":"amd64"})"));
  EXPECT_EQ(text(*pod,
                 "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/"
                 "matchExpressions/0/key"),
            "node-labeller.kubevirt.io/obsolete-host-model");
}

TEST(LauncherPod, VolumesHugepagesContainerDisksAndClaims) {
  const json::Document vmi = parse(hugepages_vmi);
  PodSettings settings;
  settings.container_disk_delivery = ContainerDiskDelivery::image_volume;
  settings.block_claims = {"ns1/raw-pvc"};
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_TRUE(testing::json_equals(
      testing::parse(vmi_entries(json::find_path(*pod, {"spec", "volumes"}))),
      R"([{"name":"rootdisk","image":{"reference":"quay.io/containerdisks/fedora:40","pullPolicy":"IfNotPresent"}},
          {"name":"data","persistentVolumeClaim":{"claimName":"data-pvc"}},
          {"name":"raw","persistentVolumeClaim":{"claimName":"raw-pvc"}},
          {"name":"hugepages","emptyDir":{"medium":"HugePages"}},
          {"name":"hugetblfs-dir","emptyDir":{"medium":"HugePages"}}])"));
  EXPECT_TRUE(testing::json_equals(
      testing::parse(vmi_entries(&json::find_path(*pod, {"spec", "containers"})[0][0]["volumeMounts"])),
      R"([{"name":"rootdisk","mountPath":"/var/run/kubevirt-image-volume/disk_0","readOnly":true},
          {"name":"data","mountPath":"/var/run/kubevirt-private/vmi-disks/data"},
          {"name":"hugepages","mountPath":"/dev/hugepages"},
          {"name":"hugetblfs-dir","mountPath":"/dev/hugepages/libvirt/qemu"}])"));
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"spec", "containers"})[0][0]["volumeDevices"],
                                   R"([{"name":"raw","devicePath":"/dev/raw"}])"));
  // vmgate-launcher's PodLayout reads the containerDisk from the same place (volume_plan_test
  // asserts its side of this path).
  EXPECT_EQ(kube::pod_paths::container_disk_volume(kube::pod_paths::image_volume_dir, 0),
            "/var/run/kubevirt-image-volume/disk_0");
}

// The pod link (the default): the VMI travels in an annotation and a downwardAPI file, the status
// and the console log in the `private` emptyDir; no token, no service account.
TEST(LauncherPod, PodLinkCarriesTheVmiAsAFileAndNoToken) {
  json::Document vmi = parse(hugepages_vmi);
  auto& a = vmi.GetAllocator();
  json::set_string(vmi["metadata"], "resourceVersion", "42", a);
  json::set(vmi["metadata"], "managedFields", json::Value(rapidjson::kArrayType), a);
  json::set_string(json::ensure_object(vmi["metadata"], "annotations", a),
                   "kubectl.kubernetes.io/last-applied-configuration", "{}", a);
  json::set_string(json::ensure_object(vmi["metadata"], "annotations", a), "team", "a", a);
  json::set_string(vmi["spec"], "serviceAccountName", "own", a);
  json::set_string(json::ensure_object(vmi, "status", a), "phase", "Scheduling", a);
  PodSettings settings;
  settings.image = "registry.example/vmgate-launcher:1";
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;

  const json::Value* annotation = json::find_path(*pod, {"metadata", "annotations", "vmgate.kubevirt.io/vmi"});
  ASSERT_TRUE(annotation != nullptr && annotation->IsString());
  const json::Document embedded = parse(json::as_view(*annotation));
  EXPECT_EQ(text(embedded, "/metadata/uid"), "6a1b2c3d-0000-4000-8000-000000000001");
  EXPECT_EQ(text(embedded, "/metadata/name"), "vm1");
  EXPECT_EQ(text(embedded, "/metadata/namespace"), "ns1");
  EXPECT_EQ(text(embedded, "/metadata/annotations"), R"({"team":"a"})");
  EXPECT_EQ(text(embedded, "/metadata/resourceVersion"), "<absent>");
  EXPECT_EQ(text(embedded, "/metadata/managedFields"), "<absent>");
  EXPECT_EQ(text(embedded, "/status"), "<absent>");
  EXPECT_TRUE(json::equal(embedded["spec"], vmi["spec"]));

  EXPECT_EQ(text(*pod, "/spec/automountServiceAccountToken"), "false");
  EXPECT_EQ(text(*pod, "/spec/serviceAccountName"), "<absent>");
  const json::Value& compute = (*json::find_path(*pod, {"spec", "containers"}))[0];
  EXPECT_EQ(text(compute, "/name"), "compute");
  EXPECT_EQ(text(compute, "/command"), R"(["vmgate-launcher","--vmi","/var/run/vmgate/vmi/vmi.json",)"
                                       R"("--status-file","/var/run/kubevirt-private/vmgate-status.json",)"
                                       R"("--console-log","/var/run/kubevirt-private/virt-serial0-log"])");
  const std::string mounts = text(compute, "/volumeMounts");
  EXPECT_NE(mounts.find(R"({"name":"vmi","mountPath":"/var/run/vmgate/vmi","readOnly":true})"), std::string::npos)
      << mounts;
  EXPECT_NE(mounts.find(R"({"name":"private","mountPath":"/var/run/kubevirt-private"})"), std::string::npos) << mounts;
  const std::string volumes = text(*pod, "/spec/volumes");
  EXPECT_NE(volumes.find(R"({"name":"vmi","downwardAPI":{"items":[{"path":"vmi.json","fieldRef":)"
                         R"({"fieldPath":"metadata.annotations['vmgate.kubevirt.io/vmi']"}}]}})"),
            std::string::npos)
      << volumes;
  EXPECT_NE(volumes.find(R"({"name":"private","emptyDir":{}})"), std::string::npos) << volumes;
  // The launcher's grace period (the VMI's 60 s) fits in the pod's, with KubeVirt's padding.
  EXPECT_EQ(text(*pod, "/spec/terminationGracePeriodSeconds"), "90");
  // The same paths as the node agent's and the launcher's (kube/pod_paths.hpp).
  EXPECT_EQ(kube::pod_paths::kubelet_empty_dir_file("/var/lib/kubelet", "u1", kube::pod_paths::private_volume,
                                                    kube::pod_paths::status_file_name),
            "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/private/vmgate-status.json");
}

TEST(LauncherPod, PodLinkRefusesAVmiLargerThanItsAnnotation) {
  json::Document vmi = parse(hugepages_vmi);
  auto& a = vmi.GetAllocator();
  json::Value& annotations = json::ensure_object(vmi["metadata"], "annotations", a);
  // kubectl's last-applied copy does not count: it is not embedded.
  json::set_string(annotations, "kubectl.kubernetes.io/last-applied-configuration", std::string(300 * 1024, 'x'), a);
  EXPECT_TRUE(launcher_pod(vmi, {}).ok());
  json::set_string(annotations, "note", std::string(kube::pod_paths::vmi_annotation_max_bytes, 'x'), a);
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_FALSE(pod.ok());
  EXPECT_NE(pod.error().message.find("the VirtualMachineInstance ns1/vm1 is "), std::string::npos)
      << pod.error().message;
  EXPECT_NE(pod.error().message.find("more than the 204800 the launcher pod's annotation vmgate.kubevirt.io/vmi may "
                                     "hold"),
            std::string::npos)
      << pod.error().message;
}

// template.go: a serviceAccount volume makes the pod run as the VMI's serviceAccountName, else
// as the volume's account, with the token mounted (the launcher builds the guest's disk from it);
// without one, a pod-link pod names no account and mounts no token.
TEST(LauncherPod, PodLinkMountsTheTokenOfTheServiceAccountVolumesAccount) {
  json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{"domain":{},
    "volumes":[{"name":"root","emptyDisk":{"capacity":"1Gi"}},{"name":"sa","serviceAccount":{"serviceAccountName":"x"}}]}})");
  PodSettings settings;
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(text(*pod, "/spec/serviceAccountName"), "x");
  EXPECT_EQ(text(*pod, "/spec/automountServiceAccountToken"), "true");
  // No volume of the pod's own for it: the kubelet mounts the token where the launcher reads it.
  EXPECT_EQ(text(*pod, "/spec/volumes").find("\"sa\""), std::string::npos) << text(*pod, "/spec/volumes");

  json::set_string(vmi["spec"], "serviceAccountName", "own", vmi.GetAllocator());
  pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(text(*pod, "/spec/serviceAccountName"), "own");
  EXPECT_EQ(text(*pod, "/spec/automountServiceAccountToken"), "true");

  vmi["spec"]["volumes"].PopBack();
  pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(text(*pod, "/spec/serviceAccountName"), "<absent>");
  EXPECT_EQ(text(*pod, "/spec/automountServiceAccountToken"), "false");
}

// KubeVirt's template_test.go figures: 3 cores request 300m at the default ratio 10, 3 at ratio
// 1, and a VMI's own request (150m, 5 cores, ratio 16) wins.
TEST(LauncherPod, CpuRequestIsVcpusOverTheAllocationRatio) {
  json::Document vmi = parse(R"({"metadata":{"name":"testvmi","namespace":"default","uid":"1234"},
    "spec":{"domain":{"cpu":{"cores":3},"memory":{"guest":"1Gi"},"devices":{}}}})");
  PodSettings settings;
  EXPECT_EQ(text(*launcher_pod(vmi, settings), "/spec/containers/0/resources/requests/cpu"), "300m");
  settings.cpu_allocation_ratio = 1;
  EXPECT_EQ(text(*launcher_pod(vmi, settings), "/spec/containers/0/resources/requests/cpu"), "3");
  settings.cpu_allocation_ratio = 16;
  vmi["spec"]["domain"]["cpu"]["cores"] = 5;
  json::Value requests(rapidjson::kObjectType);
  json::set_string(requests, "cpu", "150m", vmi.GetAllocator());
  json::set(json::ensure_object(vmi["spec"]["domain"], "resources", vmi.GetAllocator()), "requests",
            std::move(requests), vmi.GetAllocator());
  EXPECT_EQ(text(*launcher_pod(vmi, settings), "/spec/containers/0/resources/requests/cpu"), "150m");
  // Rounded up to the millicore; no ratio overflows the arithmetic.
  vmi["spec"]["domain"].RemoveMember("resources");
  settings.cpu_allocation_ratio = 3;
  EXPECT_EQ(text(*launcher_pod(vmi, settings), "/spec/containers/0/resources/requests/cpu"), "1667m");
  settings.cpu_allocation_ratio = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(text(*launcher_pod(vmi, settings), "/spec/containers/0/resources/requests/cpu"), "1m");
}

// The KubeVirt CR's share of the pod settings comes from the admission cache's ClusterConfig.
TEST(LauncherPod, TheKubeVirtCrsSettingsReachThePod) {
  Result<admission::ClusterConfig> config = admission::ClusterConfig::from_kubevirt(parse(R"({"spec":{"configuration":{
    "developerConfiguration":{"cpuAllocationRatio":4,"memoryOvercommit":150,"featureGates":["HostDisk"],
                              "nodeSelectors":{"example.com/vms":"yes"}}}},"status":{"defaultArchitecture":"arm64"}})"));
  ASSERT_TRUE(config.ok()) << config.error().message;
  PodSettings base;
  base.image = "registry.example/vmgate-launcher:1";
  const ClusterPodSettings applied = with_cluster_configuration(base, *config);
  EXPECT_TRUE(applied.refused.empty());
  EXPECT_EQ(applied.pod.image, "registry.example/vmgate-launcher:1");
  EXPECT_EQ(applied.pod.cpu_allocation_ratio, 4);
  EXPECT_EQ(applied.pod.memory_overcommit, 150);
  EXPECT_TRUE(applied.pod.host_disk_enabled);
  EXPECT_EQ(applied.pod.cluster_architecture, "arm64");

  const json::Document vmi = parse(R"({"metadata":{"name":"a","namespace":"b","uid":"u1"},
    "spec":{"domain":{"cpu":{"cores":2},"memory":{"guest":"1536Mi"},"devices":{}}}})");
  Result<json::Document> pod = launcher_pod(vmi, applied.pod);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(text(*pod, "/spec/nodeSelector/example.com~1vms"), "yes");
  EXPECT_EQ(text(*pod, "/spec/nodeSelector/kubevirt.io~1schedulable"), "true");
  EXPECT_EQ(text(*pod, "/spec/containers/0/resources/requests/cpu"), "500m");
  // 1536Mi x 100 / 150 = 1Gi, plus the overhead.
  const Result<admission::Quantity> overhead = memory_overhead(vmi, applied.pod);
  ASSERT_TRUE(overhead.ok());
  const Result<admission::Quantity> request = admission::Quantity::parse("1Gi")->add(*overhead);
  EXPECT_EQ(text(*pod, "/spec/containers/0/resources/requests/memory"), request->to_string());
}

TEST(LauncherPod, AbsurdKubeVirtRatiosAreRefusedWithANote) {
  admission::ClusterConfig config;
  config.cpu_allocation_ratio = 5000;
  config.memory_overcommit = std::numeric_limits<std::int64_t>::max();
  const ClusterPodSettings applied = with_cluster_configuration({}, config);
  EXPECT_EQ(applied.pod.cpu_allocation_ratio, 10);
  EXPECT_EQ(applied.pod.memory_overcommit, 100);
  ASSERT_EQ(applied.refused.size(), 2U);
  EXPECT_EQ(applied.refused[0],
            "the KubeVirt CR's developerConfiguration.cpuAllocationRatio 5000 is not in 1..1000: the default, 10, is "
            "used");
  EXPECT_EQ(applied.refused[1],
            "the KubeVirt CR's developerConfiguration.memoryOvercommit 9223372036854775807 is not in 1..10000: the "
            "default, 100, is used");
  config.cpu_allocation_ratio = 1000;
  config.memory_overcommit = 10000;
  EXPECT_TRUE(with_cluster_configuration({}, config).refused.empty());
}

TEST(LauncherPod, AVolumeNamedAsThePodsOwnIsRefused) {
  const json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{"domain":{},
    "volumes":[{"name":"private","persistentVolumeClaim":{"claimName":"c"}}]}})");
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().message,
            "spec.volumes: the name \"private\" is one the launcher pod uses for a volume of its own");
}

// containerDisks by copy (the default): the static copier from the launcher image, then one init
// container per containerDisk in its own image, into an emptyDir mounted where an image volume
// would be; guest-console-log first, as KubeVirt orders its init containers.
TEST(LauncherPod, ContainerDisksByCopyAndTheGuestConsoleLog) {
  const json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{"domain":{},
    "volumes":[{"name":"rootdisk","containerDisk":{"image":"quay.io/containerdisks/fedora:40","imagePullPolicy":"Always"}},
               {"name":"data","persistentVolumeClaim":{"claimName":"c"}},
               {"name":"tools","containerDisk":{"image":"registry.example/tools:1"}}]}})");
  PodSettings settings;
  settings.image = "registry.example/vmgate-launcher:1";
  Result<json::Document> pod = launcher_pod(vmi, settings);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const json::Value* init = json::find_path(*pod, {"spec", "initContainers"});
  ASSERT_TRUE(init != nullptr && init->IsArray());
  ASSERT_EQ(init->Size(), 4U) << text(*pod, "/spec/initContainers");
  EXPECT_TRUE(
      testing::json_equals((*init)[0], R"({"name":"guest-console-log","image":"registry.example/vmgate-launcher:1",
    "command":["vmgate-launcher","--tail-console","/var/run/kubevirt-private/virt-serial0-log",
               "--until-status","/var/run/kubevirt-private/vmgate-status.json"],
    "volumeMounts":[{"name":"private","mountPath":"/var/run/kubevirt-private","readOnly":true}],
    "resources":{"requests":{"cpu":"5m","memory":"35M"},"limits":{"cpu":"15m","memory":"60M"}},
    "securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}},
    "restartPolicy":"Always"})"));
  EXPECT_TRUE(
      testing::json_equals((*init)[1], R"({"name":"container-disk-binary","image":"registry.example/vmgate-launcher:1",
    "command":["vmgate-container-disk","install","/init/vmgate-container-disk"],
    "volumeMounts":[{"name":"container-disk-binary","mountPath":"/init"}],
    "resources":{"requests":{"cpu":"1m","memory":"1M","ephemeral-storage":"50M"},"limits":{"cpu":"10m","memory":"40M"}},
    "securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}},
    "terminationMessagePolicy":"FallbackToLogsOnError"})"));
  EXPECT_TRUE(testing::json_equals((*init)[2], R"({"name":"volumerootdisk","image":"quay.io/containerdisks/fedora:40",
    "imagePullPolicy":"Always",
    "command":["/init/vmgate-container-disk","copy","--to","/var/run/kubevirt-image-volume/disk_0"],
    "volumeMounts":[{"name":"container-disk-binary","mountPath":"/init","readOnly":true},
                    {"name":"container-disk-0","mountPath":"/var/run/kubevirt-image-volume/disk_0"}],
    "resources":{"requests":{"cpu":"1m","memory":"1M","ephemeral-storage":"50M"},"limits":{"cpu":"100m","memory":"40M"}},
    "securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"],"add":["DAC_OVERRIDE"]}},
    "terminationMessagePolicy":"FallbackToLogsOnError"})"));
  EXPECT_EQ(text((*init)[3], "/name"), "volumetools");
  EXPECT_EQ(text((*init)[3], "/imagePullPolicy"), "<absent>");
  EXPECT_EQ(text((*init)[3], "/command"),
            R"(["/init/vmgate-container-disk","copy","--to","/var/run/kubevirt-image-volume/disk_2"])");
  EXPECT_TRUE(testing::json_equals(json::find_path(*pod, {"spec", "volumes"}),
                                   R"([{"name":"container-disk-binary","emptyDir":{}},
          {"name":"container-disk-0","emptyDir":{}},
          {"name":"data","persistentVolumeClaim":{"claimName":"c"}},
          {"name":"container-disk-2","emptyDir":{}},
          {"name":"vmi","downwardAPI":{"items":[{"path":"vmi.json","fieldRef":{"fieldPath":"metadata.annotations['vmgate.kubevirt.io/vmi']"}}]}},
          {"name":"private","emptyDir":{}}])"));
  EXPECT_TRUE(testing::json_equals(
      json::find_path(*pod, {"spec", "containers"})[0][0]["volumeMounts"],
      R"([{"name":"container-disk-0","mountPath":"/var/run/kubevirt-image-volume/disk_0","readOnly":true},
          {"name":"data","mountPath":"/var/run/kubevirt-private/vmi-disks/data"},
          {"name":"container-disk-2","mountPath":"/var/run/kubevirt-image-volume/disk_2","readOnly":true},
          {"name":"vmi","mountPath":"/var/run/vmgate/vmi","readOnly":true},
          {"name":"private","mountPath":"/var/run/kubevirt-private"}])"));
  // The helpers leave the compute container's resources as renderresources.go makes them.
  PodSettings image_volume = settings;
  image_volume.container_disk_delivery = ContainerDiskDelivery::image_volume;
  Result<json::Document> plain = launcher_pod(vmi, image_volume);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(text(*pod, "/spec/containers/0/resources"), text(*plain, "/spec/containers/0/resources"));
  EXPECT_EQ(json::find_path(*plain, {"spec", "initContainers"})->Size(), 1U);  // guest-console-log only
  EXPECT_EQ(text(*plain, "/spec/volumes/0"),
            R"({"name":"rootdisk","image":{"reference":"quay.io/containerdisks/fedora:40","pullPolicy":"Always"}})");
}

TEST(LauncherPod, HelpersAreGuaranteedWithTheComputeContainer) {
  const json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{"domain":{
    "cpu":{"cores":2,"dedicatedCpuPlacement":true},"resources":{"requests":{"memory":"1Gi"},"limits":{"memory":"1Gi"}}},
    "volumes":[{"name":"rootdisk","containerDisk":{"image":"img"}}]}})");
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  for (const char* pointer :
       {"/spec/initContainers/0/resources", "/spec/initContainers/1/resources", "/spec/initContainers/2/resources"}) {
    const json::Document resources = parse(text(*pod, pointer));
    EXPECT_EQ(text(resources, "/requests/cpu"), text(resources, "/limits/cpu")) << pointer;
    EXPECT_EQ(text(resources, "/requests/memory"), text(resources, "/limits/memory")) << pointer;
  }
}

TEST(LauncherPod, NoGuestConsoleLogWithoutASerialConsoleLog) {
  for (const char* devices : {R"({"autoattachSerialConsole":false})", R"({"logSerialConsole":false})"}) {
    const json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{"domain":{
      "devices":)" + std::string(devices) +
                                     "}}}");
    Result<json::Document> pod = launcher_pod(vmi, {});
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    EXPECT_EQ(text(*pod, "/spec/initContainers"), "<absent>") << devices;
  }
}

// A volume name is a DNS label (up to 63 characters); "volume" + it may not be: cut and hashed
// to a valid container name. The emptyDirs are named by index, always short.
TEST(LauncherPod, CopyContainerNamesStayValidForLongVolumeNames) {
  const std::string fits(57, 'v');
  const std::string too_long(63, 'w');
  const json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"u-1"},"spec":{"domain":{},
    "volumes":[{"name":")" + fits + R"(","containerDisk":{"image":"a"}},{"name":")" +
                                   too_long + R"(","containerDisk":{"image":"b"}}]}})");
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(text(*pod, "/spec/initContainers/2/name"), "volume" + fits);
  const std::string cut = text(*pod, "/spec/initContainers/3/name");
  EXPECT_EQ(cut.size(), 63U);
  EXPECT_EQ(cut.substr(0, 55), "volume" + std::string(48, 'w') + "-");
  EXPECT_EQ(cut.find_first_not_of("0123456789abcdef", 55), std::string::npos) << cut;
  EXPECT_EQ(text(*pod, "/spec/initContainers/3/volumeMounts/1/name"), "container-disk-1");
}

TEST(BlockClaims, FromThePvcsVolumeMode) {
  admission::ObjectStore store;
  for (const char* pvc :
       {R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"raw-pvc","namespace":"ns1"},
                              "spec":{"volumeMode":"Block"}})",
        R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data-pvc","namespace":"ns1"},
                              "spec":{"volumeMode":"Filesystem"}})",
        R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"dv1","namespace":"ns1"},
                              "spec":{"volumeMode":"Block"}})",
        R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"raw-pvc","namespace":"other"},
                              "spec":{"volumeMode":"Block"}})"}) {
    ASSERT_TRUE(store.add(parse(pvc)).ok());
  }
  const json::Document vmi = parse(hugepages_vmi);
  const json::Document with_dv = parse(R"({"metadata":{"name":"b","namespace":"ns1"},
    "spec":{"volumes":[{"name":"d","dataVolume":{"name":"dv1"}},{"name":"m","persistentVolumeClaim":{"claimName":"missing"}}]}})");
  const json::Document no_metadata =
      parse(R"({"spec":{"volumes":[{"name":"x","persistentVolumeClaim":{"claimName":"raw-pvc"}}]}})");
  EXPECT_EQ(block_claims({&vmi, &with_dv, &no_metadata}, store), (std::set<std::string>{"ns1/raw-pvc", "ns1/dv1"}));
}

TEST(LauncherPod, LongNamesGetKubeVirtsHashedId) {
  const std::string name(70, 'a');
  const json::Document vmi =
      parse(R"({"metadata":{"name":")" + name + R"(","namespace":"b","uid":"u1"},"spec":{"domain":{}}})");
  Result<json::Document> pod = launcher_pod(vmi, {});
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const std::string id = text(*pod, "/metadata/labels/vmi.kubevirt.io~1id");
  EXPECT_EQ(id.size(), 63U);
  EXPECT_EQ(id.substr(0, 55), std::string(54, 'a') + "-");
  EXPECT_EQ(text(*pod, "/metadata/labels/vm.kubevirt.io~1name"), std::string(63, 'a'));
}

TEST(LauncherPod, RefusesAVmiWithoutIdentity) {
  for (const char* vmi_text :
       {R"({"metadata":{"namespace":"b","uid":"u"},"spec":{}})", R"({"metadata":{"name":"a","uid":"u"},"spec":{}})",
        R"({"metadata":{"name":"a","namespace":"b"},"spec":{}})", R"({"spec":{}})"}) {
    const json::Document vmi = parse(vmi_text);
    Result<json::Document> pod = launcher_pod(vmi, {});
    EXPECT_FALSE(pod.ok()) << vmi_text;
  }
}

}  // namespace
}  // namespace vmgate::controller
