// Tests of SetDefaultVirtualMachineInstanceSpec (pkg/defaults/defaults.go), with the cases of
// vmi-mutator_test.go: architecture, machine type, CPU requests, guest memory, CPU topology, pull
// policies, eviction strategy, the default pod network and a disk per volume.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/admission/defaults/vmi.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::defaults {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::text;

json::Document defaulted(std::string_view spec_text, const ClusterConfig& config = ClusterConfig{}) {
  json::Document spec = parse(spec_text);
  const std::optional<std::string> error = set_spec_defaults(spec, config, spec.GetAllocator());
  EXPECT_FALSE(error.has_value()) << *error;
  return spec;
}

TEST(DefaultsVmiSpec, ArchitectureFromTheClusterUnlessSet) {
  ClusterConfig config;
  config.default_architecture = "arm64";
  EXPECT_EQ(text(defaulted("{}", config), "/architecture"), "arm64");
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x"})", config), "/architecture"), "s390x");
  EXPECT_EQ(text(defaulted("{}"), "/architecture"), "amd64");
}

TEST(DefaultsVmiSpec, MachineTypePerArchitecture) {
  EXPECT_EQ(text(defaulted(R"({"architecture": "amd64"})"), "/domain/machine/type"), "q35");
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64"})"), "/domain/machine/type"), "virt");
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x"})"), "/domain/machine/type"), "s390-ccw-virtio");
  // Unknown architectures read the amd64 settings (virt-config.go GetMachineType default branch).
  EXPECT_EQ(text(defaulted(R"({"architecture": "ppc64le"})"), "/domain/machine/type"), "q35");
}

TEST(DefaultsVmiSpec, MachineTypeFromClusterConfiguration) {
  ClusterConfig config;
  config.arch_machine_type["amd64"] = "pc-q35-3.0";
  config.arch_machine_type["arm64"] = "pc-q35-3.0";
  config.arch_machine_type["s390x"] = "pc-q35-3.0";
  for (std::string_view arch : {"amd64", "arm64", "s390x"}) {
    EXPECT_EQ(text(defaulted(R"({"architecture": ")" + std::string(arch) + "\"}", config), "/domain/machine/type"),
              "pc-q35-3.0")
        << arch;
  }
  ClusterConfig deprecated;
  deprecated.machine_type = "pc-q35-rhel9.2.0";
  deprecated.arch_machine_type["amd64"] = "pc-q35-3.0";
  EXPECT_EQ(text(defaulted(R"({"architecture": "amd64"})", deprecated), "/domain/machine/type"), "pc-q35-rhel9.2.0");
}

TEST(DefaultsVmiSpec, UserMachineTypeIsKept) {
  ClusterConfig config;
  config.machine_type = "pc-q35-3.0";
  EXPECT_EQ(text(defaulted(R"({"domain": {"machine": {"type": "q35"}}})", config), "/domain/machine/type"), "q35");
}

TEST(DefaultsVmiSpec, CpuRequestsCopiedFromLimitsWhenOnlyLimitsAreSet) {
  const json::Document spec = defaulted(R"({"domain": {"resources": {"requests": {}, "limits": {"cpu": "1"}}}})");
  EXPECT_EQ(text(spec, "/domain/resources/requests/cpu"), "1");
  EXPECT_EQ(text(spec, "/domain/resources/limits/cpu"), "1");

  const json::Document both =
      defaulted(R"({"domain": {"resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "2"}}}})");
  EXPECT_EQ(text(both, "/domain/resources/requests/cpu"), "500m");
}

TEST(DefaultsVmiSpec, NoCpuRequestWithoutLimitsOrClusterSetting) {
  const json::Document spec = defaulted("{}");
  EXPECT_EQ(text(spec, "/domain/resources/requests/cpu"), "<absent>");
  EXPECT_EQ(text(spec, "/domain/resources/requests/memory"), "<absent>");
}

TEST(DefaultsVmiSpec, ClusterCpuRequest) {
  ClusterConfig config;
  config.cpu_request = "800m";
  EXPECT_EQ(text(defaulted("{}", config), "/domain/resources/requests/cpu"), "800m");
  // An existing request is kept.
  EXPECT_EQ(text(defaulted(R"({"domain": {"resources": {"requests": {"cpu": "600m"}}}})", config),
                 "/domain/resources/requests/cpu"),
            "600m");
  // Dedicated CPUs get no cluster request.
  EXPECT_EQ(text(defaulted(R"({"domain": {"cpu": {"dedicatedCpuPlacement": true}}})", config),
                 "/domain/resources/requests/cpu"),
            "<absent>");
  // The default 100m is never written.
  config.cpu_request = "100m";
  EXPECT_EQ(text(defaulted("{}", config), "/domain/resources/requests/cpu"), "<absent>");
  config.cpu_request = "0.1";
  EXPECT_EQ(text(defaulted("{}", config), "/domain/resources/requests/cpu"), "<absent>");
}

TEST(DefaultsVmiSpec, GuestMemoryFromRequestsThenLimitsThenPageSize) {
  // vmi-mutator_test.go "should always set memory.guest"
  EXPECT_EQ(text(defaulted(R"({"domain": {"resources": {"requests": {"memory": "1Gi"}}}})"), "/domain/memory/guest"),
            "1Gi");
  EXPECT_EQ(text(defaulted(R"({"domain": {"resources": {"limits": {"memory": "1Gi"}}}})"), "/domain/memory/guest"),
            "1Gi");
  EXPECT_EQ(
      text(defaulted(R"({"domain": {"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}}}})"),
           "/domain/memory/guest"),
      "1Gi");
  EXPECT_EQ(text(defaulted(R"({"domain": {"memory": {"hugepages": {"pageSize": "1Gi"}}}})"), "/domain/memory/guest"),
            "1Gi");
}

TEST(DefaultsVmiSpec, GuestMemoryIsKeptAndNeverWrittenBack) {
  const json::Document spec =
      defaulted(R"({"domain": {"memory": {"guest": "2Gi"}, "resources": {"limits": {"memory": "4Gi"}}}})");
  EXPECT_EQ(text(spec, "/domain/memory/guest"), "2Gi");
  // requests.memory is never derived from memory.guest; KubeVirt derives guest from requests, and
  // only an instancetype's overcommitPercent writes requests.memory.
  EXPECT_EQ(text(spec, "/domain/resources/requests/memory"), "<absent>");
}

TEST(DefaultsVmiSpec, NoMemoryAnywhereLeavesGuestUnset) {
  const json::Document spec = defaulted("{}");
  EXPECT_EQ(text(spec, "/domain/memory"), "{}");
  // An unparseable page size does not become a guest size.
  EXPECT_EQ(text(defaulted(R"({"domain": {"memory": {"hugepages": {"pageSize": "2ab"}}}})"), "/domain/memory/guest"),
            "<absent>");
}

TEST(DefaultsVmiSpec, DefaultTopologyIsOneSocket) {
  const json::Document spec = defaulted("{}");
  EXPECT_EQ(text(spec, "/domain/cpu"), R"({"sockets":1,"cores":1,"threads":1})");
}

TEST(DefaultsVmiSpec, CpuRequestsAndLimitsBecomeSocketsRoundedUp) {
  // vmi-mutator_test.go "should convert CPU requests to sockets" (2200m and 2.3 give 3)
  for (std::string_view request : {"\"2200m\"", "\"2.3\""}) {
    const json::Document spec = defaulted(
        R"({"domain": {"cpu": {"model": "EPYC"}, "resources": {"requests": {"cpu": )" + std::string(request) + "}}}}");
    EXPECT_EQ(text(spec, "/domain/cpu/sockets"), "3") << request;
    EXPECT_EQ(text(spec, "/domain/cpu/cores"), "1");
    EXPECT_EQ(text(spec, "/domain/cpu/threads"), "1");
    EXPECT_EQ(text(spec, "/domain/cpu/model"), "EPYC");
  }
  EXPECT_EQ(text(defaulted(R"({"domain": {"resources": {"limits": {"cpu": "2200m"}}}})"), "/domain/cpu/sockets"), "3");
  // Limits come before requests.
  EXPECT_EQ(text(defaulted(R"({"domain": {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}}}})"),
                 "/domain/cpu/sockets"),
            "4");
  // A JSON number is a quantity too.
  EXPECT_EQ(text(defaulted(R"({"domain": {"resources": {"limits": {"cpu": 2}}}})"), "/domain/cpu/sockets"), "2");
}

TEST(DefaultsVmiSpec, AnyTopologyValueKeepsTheUsersTopology) {
  const json::Document spec = defaulted(R"({"domain": {"cpu": {"cores": 2}, "resources": {"limits": {"cpu": "4"}}}})");
  EXPECT_EQ(text(spec, "/domain/cpu"), R"({"cores":2})");
}

TEST(DefaultsVmiSpec, ContainerDiskPullPolicies) {
  // vmi-mutator_test.go "set the right ImagePullPolicy on a mixture of sources"
  const json::Document spec = defaulted(R"({"volumes": [
      {"name": "a", "containerDisk": {"image": "test:notlatest"}},
      {"name": "b", "containerDisk": {"image": "test:latest"}},
      {"name": "c", "containerDisk": {"image": "test:latest", "imagePullPolicy": "Never"}},
      {"name": "d", "containerDisk": {"image": "test", "imagePullPolicy": "IfNotPresent"}},
      {"name": "e", "containerDisk": {"image": "test"}},
      {"name": "f", "containerDisk": {"image": "test@sha256:9c2b78e11c25b3fd0b24b0ed684a112052dff03eee4ca4bdcc4f3168f9a14396"}},
      {"name": "g", "containerDisk": {"image": "registry:5000/test"}},
      {"name": "h", "cloudInitNoCloud": {"userData": "#cloud-config"}}]})");
  EXPECT_EQ(text(spec, "/volumes/0/containerDisk/imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(text(spec, "/volumes/1/containerDisk/imagePullPolicy"), "Always");
  EXPECT_EQ(text(spec, "/volumes/2/containerDisk/imagePullPolicy"), "Never");
  EXPECT_EQ(text(spec, "/volumes/3/containerDisk/imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(text(spec, "/volumes/4/containerDisk/imagePullPolicy"), "Always");
  EXPECT_EQ(text(spec, "/volumes/5/containerDisk/imagePullPolicy"), "IfNotPresent");
  // A registry port counts as a tag (strings.ContainsAny(image, ":@")), as in KubeVirt.
  EXPECT_EQ(text(spec, "/volumes/6/containerDisk/imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(text(spec, "/volumes/7"), R"({"name":"h","cloudInitNoCloud":{"userData":"#cloud-config"}})");
}

TEST(DefaultsVmiSpec, EvictionStrategy) {
  // vmi-mutator_test.go "evictionStrategy should match the ..."
  EXPECT_EQ(text(defaulted("{}"), "/evictionStrategy"), "None");
  ClusterConfig config;
  config.eviction_strategy = "LiveMigrate";
  EXPECT_EQ(text(defaulted("{}", config), "/evictionStrategy"), "LiveMigrate");
  EXPECT_EQ(text(defaulted(R"({"evictionStrategy": "None"})", config), "/evictionStrategy"), "None");
}

TEST(DefaultsVmiSpec, DefaultBridgeNetwork) {
  const json::Document spec = defaulted("{}");
  EXPECT_EQ(text(spec, "/domain/devices/interfaces"), R"([{"name":"default","bridge":{}}])");
  EXPECT_EQ(text(spec, "/networks"), R"([{"name":"default","pod":{}}])");
}

TEST(DefaultsVmiSpec, DefaultMasqueradeNetwork) {
  ClusterConfig config;
  config.default_network_interface = "masquerade";
  const json::Document spec = defaulted("{}", config);
  EXPECT_EQ(text(spec, "/domain/devices/interfaces"), R"([{"name":"default","masquerade":{}}])");
  EXPECT_EQ(text(spec, "/networks"), R"([{"name":"default","pod":{}}])");
}

TEST(DefaultsVmiSpec, SlirpIsRejected) {
  ClusterConfig config;
  config.default_network_interface = "slirp";
  json::Document spec = parse("{}");
  EXPECT_EQ(set_spec_defaults(spec, config, spec.GetAllocator()), "slirp interface is deprecated as of v1.3");
  json::Document direct = parse("{}");
  EXPECT_EQ(set_default_network_interface(direct, config, direct.GetAllocator()),
            "slirp interface is deprecated as of v1.3");
}

TEST(DefaultsVmiSpec, DefaultBridgeNeedsBridgeOnThePodNetworkPermitted) {
  // pkg/network/vmispec/defaults.go SetDefaultNetworkInterface.
  ClusterConfig config;
  config.permit_bridge_interface_on_pod_network = false;
  json::Document spec = parse("{}");
  EXPECT_EQ(set_default_network_interface(spec, config, spec.GetAllocator()),
            "bridge interface is not enabled in kubevirt-config");
  config.default_network_interface = "masquerade";
  EXPECT_EQ(set_default_network_interface(spec, config, spec.GetAllocator()), std::nullopt);
}

TEST(DefaultsVmiSpec, NoDefaultNetworkWhenTheUserChoseOne) {
  // vmi-mutator_test.go "should not add the default interfaces if"
  EXPECT_EQ(
      dump(defaulted(
          R"({"domain": {"devices": {"interfaces": [{"name": "a"}]}}, "networks": [{"name": "b"}]})")["networks"]),
      R"([{"name":"b"}])");
  const json::Document only_interfaces = defaulted(R"({"domain": {"devices": {"interfaces": [{"name": "a"}]}}})");
  EXPECT_EQ(text(only_interfaces, "/networks"), "<absent>");
  EXPECT_EQ(text(only_interfaces, "/domain/devices/interfaces"), R"([{"name":"a"}])");
  const json::Document only_networks = defaulted(R"({"networks": [{"name": "b"}]})");
  EXPECT_EQ(text(only_networks, "/domain/devices/interfaces"), "<absent>");
  // autoattachPodInterface: false, even with slirp configured: no error either.
  ClusterConfig slirp;
  slirp.default_network_interface = "slirp";
  const json::Document opted_out = defaulted(R"({"domain": {"devices": {"autoattachPodInterface": false}}})", slirp);
  EXPECT_EQ(text(opted_out, "/networks"), "<absent>");
  EXPECT_EQ(text(opted_out, "/domain/devices/interfaces"), "<absent>");
}

TEST(DefaultsVmiSpec, MissingVolumeDisksAreAppended) {
  // vmi-mutator_test.go "should add a missing volume disk"
  const json::Document spec = defaulted(R"({
      "domain": {"devices": {"disks": [{"name": "present-vol"}], "filesystems": [{"name": "shared", "virtiofs": {}}]}},
      "volumes": [{"name": "present-vol"}, {"name": "missing-vol"}, {"name": "shared"}]})");
  EXPECT_EQ(text(spec, "/domain/devices/disks"), R"([{"name":"present-vol"},{"name":"missing-vol"}])");
}

TEST(DefaultsVmiSpec, DuplicateVolumeNamesGetADiskEach) {
  // pkg/util SetDefaultVolumeDisk looks only at the disks present before; validation reports the rest.
  json::Document spec = parse(R"({"volumes": [{"name": "x"}, {"name": "x"}]})");
  set_default_volume_disks(spec, spec.GetAllocator());
  EXPECT_EQ(text(spec, "/domain/devices/disks"), R"([{"name":"x"},{"name":"x"}])");
}

TEST(DefaultsVmiSpec, NoVolumesNoDisks) {
  json::Document spec = parse(R"({"volumes": []})");
  set_default_volume_disks(spec, spec.GetAllocator());
  EXPECT_EQ(dump(spec), R"({"volumes":[]})");
}

TEST(DefaultsVmiSpec, DefaultingTwiceChangesNothing) {
  const json::Document once = defaulted(R"({"domain": {"resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
                                           "volumes": [{"name": "root", "containerDisk": {"image": "fedora"}}]})");
  json::Document twice;
  twice.CopyFrom(once, twice.GetAllocator());
  ASSERT_FALSE(set_spec_defaults(twice, ClusterConfig{}, twice.GetAllocator()).has_value());
  EXPECT_EQ(dump(twice), dump(once));
}

TEST(DefaultsVmiSpec, NonObjectSpecIsIgnored) {
  json::Document spec = parse("[]");
  EXPECT_FALSE(set_spec_defaults(spec, ClusterConfig{}, spec.GetAllocator()).has_value());
  EXPECT_EQ(dump(spec), "[]");
}

}  // namespace
}  // namespace vmgate::admission::defaults
