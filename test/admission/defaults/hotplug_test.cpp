// Tests of the LiveUpdate hotplug defaults (pkg/defaults/defaults.go setupHotplug and
// pkg/liveupdate/memory ValidateLiveUpdateMemory), with the cases of vmi-mutator_test.go
// "when vmRolloutStrategy LiveUpdate is enabled".
#include <gtest/gtest.h>

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

// A spec after SetDefaultVirtualMachineInstanceSpec: architecture and topology are set.
std::string spec_with(std::string_view arch, std::string_view cpu, std::string_view memory = "{}") {
  return R"({"architecture": ")" + std::string(arch) + R"(", "domain": {"cpu": )" + std::string(cpu) +
         R"(, "memory": )" + std::string(memory) + "}}";
}

json::Document hotplugged(const std::string& spec_text, const ClusterConfig& config = ClusterConfig{}) {
  json::Document spec = parse(spec_text);
  set_hotplug_defaults(spec, config, spec.GetAllocator());
  return spec;
}

constexpr std::string_view one_socket = R"({"sockets": 1, "cores": 1, "threads": 1})";

class DefaultsHotplugCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(DefaultsHotplugCpu, ClusterMaxCpuSockets) {
  ClusterConfig config;
  config.max_cpu_sockets = 10;
  EXPECT_EQ(text(hotplugged(spec_with(GetParam(), one_socket), config), "/domain/cpu/maxSockets"), "10");
}

TEST_P(DefaultsHotplugCpu, ClusterMaxCpuSocketsBeatsTheHotplugRatio) {
  ClusterConfig config;
  config.max_cpu_sockets = 10;
  config.max_hotplug_ratio = 2;
  const json::Document spec = hotplugged(spec_with(GetParam(), R"({"sockets": 2, "cores": 1, "threads": 1})"), config);
  EXPECT_EQ(text(spec, "/domain/cpu/sockets"), "2");
  EXPECT_EQ(text(spec, "/domain/cpu/maxSockets"), "10");
}

TEST_P(DefaultsHotplugCpu, VmiMaxSocketsIsKept) {
  const json::Document spec = hotplugged(spec_with(GetParam(), R"({"sockets": 2, "maxSockets": 16})"));
  EXPECT_EQ(text(spec, "/domain/cpu/maxSockets"), "16");
}

TEST_P(DefaultsHotplugCpu, ClusterHotplugRatio) {
  ClusterConfig config;
  config.max_hotplug_ratio = 2;
  EXPECT_EQ(text(hotplugged(spec_with(GetParam(), one_socket), config), "/domain/cpu/maxSockets"), "2");
}

TEST_P(DefaultsHotplugCpu, FourTimesTheSockets) {
  EXPECT_EQ(text(hotplugged(spec_with(GetParam(), one_socket)), "/domain/cpu/maxSockets"), "4");
  EXPECT_EQ(
      text(hotplugged(spec_with(GetParam(), R"({"sockets": 2, "cores": 1, "threads": 1})")), "/domain/cpu/maxSockets"),
      "8");
}

TEST_P(DefaultsHotplugCpu, CappedAt512VCpus) {
  // 32 sockets × 2 cores × 3 threads: 4 × 32 = 128 sockets would be 768 vCPUs; 512 / 6 = 85.
  EXPECT_EQ(
      text(hotplugged(spec_with(GetParam(), R"({"sockets": 32, "cores": 2, "threads": 3})")), "/domain/cpu/maxSockets"),
      "85");
  // The cap never goes below the current sockets.
  EXPECT_EQ(text(hotplugged(spec_with(GetParam(), R"({"sockets": 200, "cores": 2, "threads": 2})")),
                 "/domain/cpu/maxSockets"),
            "200");
}

TEST_P(DefaultsHotplugCpu, UnsetCoresAndThreadsAreNotCapped) {
  // Go computes maxSockets × cores × threads with the raw values: 0 cores give 0 vCPUs, no cap.
  EXPECT_EQ(text(hotplugged(spec_with(GetParam(), R"({"sockets": 200})")), "/domain/cpu/maxSockets"), "800");
}

TEST_P(DefaultsHotplugCpu, LowerClusterMaximumRaisedToTheSockets) {
  ClusterConfig config;
  config.max_cpu_sockets = 2;
  EXPECT_EQ(text(hotplugged(spec_with(GetParam(), R"({"sockets": 3, "cores": 1, "threads": 1})"), config),
                 "/domain/cpu/maxSockets"),
            "3");
}

INSTANTIATE_TEST_SUITE_P(DefaultsSupportedArchitectures, DefaultsHotplugCpu, ::testing::Values("amd64", "s390x"));

TEST(DefaultsHotplug, NothingOnArm64) {
  ClusterConfig config;
  config.max_cpu_sockets = 10;
  config.max_guest = "512Mi";
  const std::string spec = spec_with("arm64", one_socket, R"({"guest": "1Gi"})");
  EXPECT_EQ(dump(hotplugged(spec, config)), dump(parse(spec)));
}

TEST(DefaultsHotplug, NothingWithoutLiveUpdate) {
  ClusterConfig config;
  config.vm_rollout_strategy = "Stage";
  const std::string spec = spec_with("amd64", one_socket, R"({"guest": "1Gi"})");
  EXPECT_EQ(dump(hotplugged(spec, config)), dump(parse(spec)));
}

TEST(DefaultsHotplug, MaxGuestProvidedIsKept) {
  const json::Document spec = hotplugged(spec_with("amd64", one_socket, R"({"guest": "2Gi", "maxGuest": "6Gi"})"));
  EXPECT_EQ(text(spec, "/domain/memory"), R"({"guest":"2Gi","maxGuest":"6Gi"})");
}

TEST(DefaultsHotplug, MaxGuestFromTheCluster) {
  ClusterConfig config;
  config.max_guest = "10Gi";
  config.max_hotplug_ratio = 2;  // the cluster maxGuest wins over the ratio
  const json::Document spec = hotplugged(spec_with("amd64", one_socket, R"({"guest": "1Gi"})"), config);
  EXPECT_EQ(text(spec, "/domain/memory"), R"({"guest":"1Gi","maxGuest":"10Gi"})");
}

TEST(DefaultsHotplug, MaxGuestIsTheRatioTimesTheGuest) {
  EXPECT_EQ(text(hotplugged(spec_with("amd64", one_socket, R"({"guest": "1Gi"})")), "/domain/memory/maxGuest"), "4Gi");
  ClusterConfig config;
  config.max_hotplug_ratio = 2;
  EXPECT_EQ(text(hotplugged(spec_with("amd64", one_socket, R"({"guest": "1Gi"})"), config), "/domain/memory/maxGuest"),
            "2Gi");
  EXPECT_EQ(text(hotplugged(spec_with("amd64", one_socket, R"({"guest": "1536Mi"})")), "/domain/memory/maxGuest"),
            "6Gi");
}

TEST(DefaultsHotplug, NoMaxGuestWhenMemoryHotplugCannotWork) {
  // vmi-mutator_test.go "should leave MaxGuest empty when memory hotplug is incompatible"
  const std::string incompatible[] = {
      // realtime
      R"({"architecture": "amd64", "domain": {"cpu": {"sockets": 1, "dedicatedCpuPlacement": true, "realtime": {},
          "numa": {"guestMappingPassthrough": {}}}, "memory": {"guest": "1Gi", "hugepages": {"pageSize": "2Mi"}}}})",
      // launchSecurity
      R"({"architecture": "amd64", "domain": {"cpu": {"sockets": 1}, "launchSecurity": {}, "memory": {"guest": "1Gi"}}})",
      // guest mapping passthrough
      R"({"architecture": "amd64", "domain": {"cpu": {"sockets": 1, "dedicatedCpuPlacement": true,
          "numa": {"guestMappingPassthrough": {}}}, "memory": {"guest": "1Gi", "hugepages": {"pageSize": "2Mi"}}}})",
      // no guest memory
      spec_with("amd64", one_socket),
      // not 2Mi aligned
      spec_with("amd64", one_socket, R"({"guest": "123"})"),
      spec_with("amd64", one_socket, R"({"guest": "1025Mi"})"),
      // less than 1Gi
      spec_with("amd64", one_socket, R"({"guest": "512Mi"})"),
      // 1Gi pages need 1Gi alignment
      spec_with("amd64", one_socket, R"({"guest": "1536Mi", "hugepages": {"pageSize": "1Gi"}})"),
      // s390x has no memory hotplug
      spec_with("s390x", one_socket, R"({"guest": "1Gi"})"),
  };
  for (const std::string& spec : incompatible) {
    EXPECT_EQ(text(hotplugged(spec), "/domain/memory/maxGuest"), "<absent>") << spec;
  }
}

TEST(DefaultsHotplug, ClusterMaxGuestBelowTheGuestOrUnalignedDisablesMemoryHotplug) {
  ClusterConfig config;
  config.max_guest = "512Mi";
  EXPECT_EQ(text(hotplugged(spec_with("amd64", one_socket, R"({"guest": "1Gi"})"), config), "/domain/memory/maxGuest"),
            "<absent>");
  config.max_guest = "4097Mi";
  EXPECT_EQ(text(hotplugged(spec_with("amd64", one_socket, R"({"guest": "1Gi"})"), config), "/domain/memory/maxGuest"),
            "<absent>");
}

TEST(DefaultsHotplug, AlignedHugepagesKeepMemoryHotplug) {
  EXPECT_EQ(text(hotplugged(spec_with("amd64", one_socket, R"({"guest": "1536Mi", "hugepages": {"pageSize": "2Mi"}})")),
                 "/domain/memory/maxGuest"),
            "6Gi");
  EXPECT_EQ(text(hotplugged(spec_with("amd64", one_socket, R"({"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}})")),
                 "/domain/memory/maxGuest"),
            "8Gi");
}

}  // namespace
}  // namespace vmgate::admission::defaults
