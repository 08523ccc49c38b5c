// Tests of the whole VMI CREATE mutation (vmi-mutator.go Mutate + SetDefaultVirtualMachineInstance),
// with the cases of vmi-mutator_test.go: per-arch machine type and CPU model, configurable
// defaults, user values kept, finalizer, status, PCI topology annotation, hotplug.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/defaults/vmi.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::defaults {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::text;

// vmi-mutator_test.go BeforeEach: a VMI with a label and an empty domain.
std::string minimal_vmi(std::string_view arch = "", std::string_view domain = R"({"resources": {}})") {
  std::string spec = R"({"domain": )" + std::string(domain);
  if (!arch.empty()) {
    spec += R"(, "architecture": ")" + std::string(arch) + "\"";
  }
  spec += "}";
  return R"({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
             "metadata": {"name": "testvmi", "namespace": "default", "labels": {"test": "test"}}, "spec": )" +
         spec + "}";
}

json::Document created(const std::string& vmi_text, const ClusterConfig& config = ClusterConfig{}) {
  json::Document vmi = parse(vmi_text);
  const std::optional<std::string> error = apply_vmi_create_defaults(vmi, "default", config, "", vmi.GetAllocator());
  EXPECT_FALSE(error.has_value()) << *error;
  return vmi;
}

TEST(DefaultsVmiCreate, DefaultsPerKnownArchitecture) {
  // "should apply defaults on VMI create when arch is known"
  struct Case {
    std::string arch;
    std::string model;
    std::string machine;
  };
  for (const Case& c : {Case{"amd64", "host-model", "q35"}, Case{"arm64", "host-passthrough", "virt"},
                        Case{"s390x", "host-model", "s390-ccw-virtio"}}) {
    const json::Document vmi = created(minimal_vmi(c.arch));
    EXPECT_EQ(text(vmi, "/spec/domain/machine/type"), c.machine) << c.arch;
    EXPECT_EQ(text(vmi, "/spec/domain/cpu/model"), c.model) << c.arch;
    EXPECT_EQ(text(vmi, "/spec/domain/resources/requests"), "<absent>") << c.arch;
  }
}

TEST(DefaultsVmiCreate, DefaultsPerClusterDefaultArchitecture) {
  // "should apply defaults on VMI create when arch is unknown": the cluster default decides.
  for (std::string_view arch : {"amd64", "arm64", "s390x"}) {
    ClusterConfig config;
    config.default_architecture = std::string(arch);
    const json::Document vmi = created(minimal_vmi(), config);
    EXPECT_EQ(text(vmi, "/spec/architecture"), arch);
    EXPECT_EQ(text(vmi, "/spec/domain/machine/type"), config.machine_type_for(arch));
  }
}

TEST(DefaultsVmiCreate, ConfigurableDefaults) {
  // "should apply configurable defaults on VMI create"
  ClusterConfig config;
  config.cpu_model = "Haswell";
  config.cpu_request = "800m";
  for (std::string_view arch : {"amd64", "arm64", "s390x"}) {
    config.arch_machine_type[std::string(arch)] = "pc-q35-3.0";
  }
  for (std::string_view arch : {"amd64", "s390x", "arm64"}) {
    const json::Document vmi = created(minimal_vmi(arch), config);
    // arm64 always gets host-passthrough: the cluster model never applies there.
    EXPECT_EQ(text(vmi, "/spec/domain/cpu/model"), arch == "arm64" ? "host-passthrough" : "Haswell") << arch;
    EXPECT_EQ(text(vmi, "/spec/domain/machine/type"), "pc-q35-3.0") << arch;
    EXPECT_EQ(text(vmi, "/spec/domain/resources/requests/cpu"), "800m") << arch;
  }
}

TEST(DefaultsVmiCreate, SpecifiedPropertiesAreNotOverridden) {
  // "should not override specified properties with defaults on VMI create"
  ClusterConfig config;
  config.cpu_model = "Haswell";
  config.machine_type = "pc-q35-3.0";
  config.cpu_request = "800m";
  const json::Document vmi = created(minimal_vmi("", R"({"resources": {"requests": {"cpu": "600m", "memory": "512Mi"}},
                                                         "cpu": {"model": "EPYC"}, "machine": {"type": "q35"}})"),
                                     config);
  EXPECT_EQ(text(vmi, "/spec/domain/cpu/model"), "EPYC");
  EXPECT_EQ(text(vmi, "/spec/domain/machine/type"), "q35");
  EXPECT_EQ(text(vmi, "/spec/domain/resources/requests"), R"({"cpu":"600m","memory":"512Mi"})");
  EXPECT_EQ(text(vmi, "/spec/domain/memory/guest"), "512Mi");
}

TEST(DefaultsVmiCreate, FinalizerIsAddedOnce) {
  // "should apply foreground finalizer on VMI create"; vmgate adds it only once (idempotent).
  const json::Document vmi = created(minimal_vmi());
  EXPECT_EQ(text(vmi, "/metadata/finalizers"), R"(["kubevirt.io/foregroundDeleteVirtualMachine"])");
  const json::Document again = created(dump(vmi));
  EXPECT_EQ(text(again, "/metadata/finalizers"), R"(["kubevirt.io/foregroundDeleteVirtualMachine"])");
  const json::Document other = created(R"({"metadata": {"name": "v", "finalizers": ["example.io/keep"]}, "spec": {}})");
  EXPECT_EQ(text(other, "/metadata/finalizers"), R"(["example.io/keep","kubevirt.io/foregroundDeleteVirtualMachine"])");
}

TEST(DefaultsVmiCreate, StatusPhaseAndRuntimeUser) {
  const json::Document vmi = created(minimal_vmi());
  EXPECT_EQ(text(vmi, "/status/phase"), "Pending");
  EXPECT_EQ(text(vmi, "/status/runtimeUser"), "107");
  // "Should not tag vmi as non-root" with the Root feature gate: runtimeUser has no omitempty, so
  // KubeVirt's status carries 0.
  ClusterConfig root;
  root.feature_gates = {"Root"};
  EXPECT_EQ(text(created(minimal_vmi(), root), "/status/runtimeUser"), "0");
}

TEST(DefaultsVmiCreate, EmulatorThreadEvenParityAnnotationFromTheKubeVirtCr) {
  // "should copy the EmulatorThreadCompleteToEvenParity annotation to the VMI"
  const std::string isolated = minimal_vmi("", R"({"cpu": {"isolateEmulatorThread": true}})");
  const char* annotation = "/metadata/annotations/alpha.kubevirt.io~1EmulatorThreadCompleteToEvenParity";
  ClusterConfig config;
  config.emulator_thread_even_parity = true;
  EXPECT_EQ(text(created(isolated, config), annotation), "<absent>");  // AlignCPUs is alpha
  config.feature_gates = {"AlignCPUs"};
  EXPECT_EQ(text(created(isolated, config), annotation), "");
  EXPECT_EQ(text(created(minimal_vmi(), config), annotation), "<absent>");
}

TEST(DefaultsVmiCreate, PendingTransitionAtTheRequestTimeOnce) {
  json::Document vmi = parse(minimal_vmi());
  ASSERT_FALSE(apply_vmi_create_defaults(vmi, "default", ClusterConfig{}, "2026-11-22T23:10:51Z", vmi.GetAllocator()));
  EXPECT_EQ(text(vmi, "/status/phaseTransitionTimestamps"),
            R"([{"phase":"Pending","phaseTransitionTimestamp":"2026-11-22T23:10:51Z"}])");
  // Mutating the admitted VMI again adds nothing; without a time nothing is recorded.
  ASSERT_FALSE(apply_vmi_create_defaults(vmi, "default", ClusterConfig{}, "2026-11-22T23:11:00Z", vmi.GetAllocator()));
  EXPECT_EQ(text(vmi, "/status/phaseTransitionTimestamps"),
            R"([{"phase":"Pending","phaseTransitionTimestamp":"2026-11-22T23:10:51Z"}])");
  EXPECT_EQ(text(created(minimal_vmi()), "/status/phaseTransitionTimestamps"), "<absent>");
}

TEST(DefaultsVmiCreate, GuestMemoryStatus) {
  // "should set guest memory status on VMI creation"
  const json::Document vmi = created(minimal_vmi("", R"({"memory": {"guest": "128Mi"}})"));
  EXPECT_EQ(text(vmi, "/status/memory"), R"({"guestAtBoot":"128Mi","guestCurrent":"128Mi","guestRequested":"128Mi"})");
  // setGuestMemoryStatus overwrites whatever the request carried.
  const json::Document stale = created(R"({"metadata": {"name": "v"}, "spec": {"domain": {"memory": {"guest": "2Gi"}}},
      "status": {"memory": {"guestAtBoot": "1Gi", "guestCurrent": "1Gi", "guestRequested": "1Gi"}}})");
  EXPECT_EQ(text(stale, "/status/memory"), R"({"guestAtBoot":"2Gi","guestCurrent":"2Gi","guestRequested":"2Gi"})");
  // No guest memory, no memory status.
  EXPECT_EQ(text(created(minimal_vmi()), "/status/memory"), "<absent>");
}

TEST(DefaultsVmiCreate, CurrentCpuTopologyStatus) {
  // "should set default CPU topology in Status when not provided by VMI"
  EXPECT_EQ(text(created(minimal_vmi()), "/status/currentCPUTopology"), R"({"cores":1,"sockets":1,"threads":1})");
  // "should copy VMI provided" full and partial topologies
  EXPECT_EQ(text(created(minimal_vmi("", R"({"cpu": {"sockets": 3, "cores": 3, "threads": 2}})")),
                 "/status/currentCPUTopology"),
            R"({"cores":3,"sockets":3,"threads":2})");
  EXPECT_EQ(text(created(minimal_vmi("", R"({"cpu": {"sockets": 1, "cores": 1, "threads": 0}})")),
                 "/status/currentCPUTopology"),
            R"({"cores":1,"sockets":1})");  // CPUTopology's counts are omitempty
  // "should not overwrite existing CurrentCPUTopology within status"
  const json::Document kept =
      created(R"({"metadata": {"name": "v"}, "spec": {"domain": {"cpu": {"sockets": 2, "cores": 1, "threads": 1}}},
      "status": {"currentCPUTopology": {"sockets": 1, "cores": 1, "threads": 1}}})");
  EXPECT_EQ(text(kept, "/status/currentCPUTopology"), R"({"sockets":1,"cores":1,"threads":1})");
}

TEST(DefaultsVmiCreate, PciTopologyVersionByArchitecture) {
  // "should set PCI topology version based on architecture"
  for (std::string_view arch : {"amd64", "arm64"}) {
    EXPECT_EQ(text(created(minimal_vmi(arch)), "/metadata/annotations/kubevirt.io~1pci-topology-version"), "v3")
        << arch;
  }
  for (std::string_view arch : {"s390x", "ppc64le"}) {
    EXPECT_EQ(text(created(minimal_vmi(arch)), "/metadata/annotations/kubevirt.io~1pci-topology-version"), "<absent>")
        << arch;
  }
  // "should skip PCI topology version for i440fx machine type"
  EXPECT_EQ(text(created(minimal_vmi("amd64", R"({"machine": {"type": "pc-i440fx-2.12"}})")),
                 "/metadata/annotations/kubevirt.io~1pci-topology-version"),
            "<absent>");
  // "should not override existing PCI topology version annotation"
  EXPECT_EQ(
      text(created(
               R"({"metadata": {"name": "v", "annotations": {"kubevirt.io/pci-topology-version": "v2"}}, "spec": {}})"),
           "/metadata/annotations/kubevirt.io~1pci-topology-version"),
      "v2");
}

TEST(DefaultsVmiCreate, SlirpIsReportedAndNothingElseHappens) {
  // "should reject adding a default deprecated slirp interface"
  ClusterConfig config;
  config.default_network_interface = "slirp";
  json::Document vmi = parse(minimal_vmi());
  EXPECT_EQ(apply_vmi_create_defaults(vmi, "default", config, "", vmi.GetAllocator()),
            "slirp interface is deprecated as of v1.3");
}

TEST(DefaultsVmiCreate, HotplugMaximaAfterStatus) {
  const json::Document vmi = created(minimal_vmi("amd64", R"({"memory": {"guest": "1Gi"}})"));
  EXPECT_EQ(text(vmi, "/spec/domain/cpu/maxSockets"), "4");
  EXPECT_EQ(text(vmi, "/spec/domain/memory/maxGuest"), "4Gi");
  // status.memory records the boot size, not the maximum.
  EXPECT_EQ(text(vmi, "/status/memory/guestAtBoot"), "1Gi");
  const json::Document arm = created(minimal_vmi("arm64", R"({"memory": {"guest": "1Gi"}})"));
  EXPECT_EQ(text(arm, "/spec/domain/cpu/maxSockets"), "<absent>");
}

TEST(DefaultsVmiCreate, WholeMutationOfAMinimalVmi) {
  const json::Document vmi = created(
      R"({"metadata": {"name": "testvmi", "uid": "u-1"},
          "spec": {"domain": {"devices": {"disks": [{"name": "root"}]}, "resources": {"requests": {"memory": "1Gi"}}},
                   "volumes": [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}},
                               {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config"}}]}})");
  EXPECT_EQ(text(vmi, "/spec/architecture"), "amd64");
  EXPECT_EQ(text(vmi, "/spec/domain/devices/disks"),
            R"([{"name":"root","disk":{"bus":"sata"}},{"name":"cloudinit","disk":{"bus":"sata"}}])");
  EXPECT_EQ(text(vmi, "/spec/domain/devices/interfaces"), R"([{"name":"default","bridge":{}}])");
  EXPECT_EQ(text(vmi, "/spec/networks"), R"([{"name":"default","pod":{}}])");
  EXPECT_EQ(text(vmi, "/spec/volumes/0/containerDisk/imagePullPolicy"), "Always");
  EXPECT_EQ(text(vmi, "/spec/domain/firmware/uuid"), name_based_uuid("uid:u-1#firmware-uuid"));
  EXPECT_EQ(text(vmi, "/spec/domain/features"), R"({"acpi":{"enabled":true}})");
  EXPECT_EQ(text(vmi, "/spec/evictionStrategy"), "None");
  EXPECT_EQ(text(vmi, "/spec/domain/memory"), R"({"guest":"1Gi","maxGuest":"4Gi"})");
  EXPECT_EQ(text(vmi, "/spec/domain/cpu"),
            R"({"sockets":1,"cores":1,"threads":1,"model":"host-model","maxSockets":4})");
}

TEST(DefaultsVmiCreate, FirmwareUuidSeed) {
  const std::string with_uid = R"({"metadata": {"name": "a", "uid": "x"}, "spec": {}})";
  EXPECT_EQ(text(created(with_uid), "/spec/domain/firmware/uuid"), name_based_uuid("uid:x#firmware-uuid"));
  const std::string without_uid = R"({"metadata": {"name": "a"}, "spec": {}})";
  EXPECT_EQ(text(created(without_uid), "/spec/domain/firmware/uuid"), name_based_uuid("vmi:default/a#firmware-uuid"));
}

TEST(DefaultsVmiCreate, MutatingTheMutatedVmiChangesNothing) {
  for (std::string_view arch : {"amd64", "arm64", "s390x"}) {
    const json::Document once = created(minimal_vmi(arch, R"({"resources": {"limits": {"cpu": "2", "memory": "2Gi"}},
        "devices": {"inputs": [{"name": "tablet"}], "watchdog": {"name": "w"}}})"));
    const json::Document twice = created(dump(once));
    EXPECT_EQ(dump(twice), dump(once)) << arch;
  }
}

TEST(DefaultsVmiCreate, NonObjectIsIgnored) {
  json::Document vmi = parse("[1]");
  EXPECT_FALSE(apply_vmi_create_defaults(vmi, "default", ClusterConfig{}, "", vmi.GetAllocator()).has_value());
  EXPECT_EQ(dump(vmi), "[1]");
}

}  // namespace
}  // namespace vmgate::admission::defaults
