// Tests of admission/src/instancetype/topology.cpp: vCPUs → sockets/cores/threads
// (KubeVirt pkg/instancetype/apply/cpu.go applyGuestCPUTopology, cases from cpu_test.go) and the
// preference getters (pkg/instancetype/preference/apply/cpu.go GetPreferredTopology, GetSpreadOptions).
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::instancetype {

void PrintTo(const Topology& t, std::ostream* out) {
  *out << "{sockets " << t.sockets << ", cores " << t.cores << ", threads " << t.threads << "}";
}

namespace {

using vmgate::testing::parse;

struct Case {
  std::string name;
  std::uint64_t vcpus;
  std::string_view preference;  // "" = no preference at all
  Topology expected;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class InstancetypeTopology : public ::testing::TestWithParam<Case> {};

TEST_P(InstancetypeTopology, GuestTopology) {
  const Case& c = GetParam();
  if (c.preference.empty()) {
    EXPECT_EQ(guest_topology(c.vcpus, nullptr), c.expected);
    return;
  }
  const json::Document preference = parse(c.preference);
  EXPECT_EQ(guest_topology(c.vcpus, &preference), c.expected);
}

std::string topology(std::string_view name) {
  return R"({"cpu":{"preferredCPUTopology":")" + std::string(name) + R"("}})";
}

// Storage for the preferences built at run time: string_views in Case point here.
const std::string sockets = topology("sockets");
const std::string cores = topology("cores");
const std::string threads = topology("threads");
const std::string any = topology("any");
const std::string prefer_sockets = topology("preferSockets");
const std::string prefer_cores = topology("preferCores");
const std::string prefer_threads = topology("preferThreads");
const std::string prefer_any = topology("preferAny");
const std::string spread = topology("spread");
const std::string prefer_spread = topology("preferSpread");

INSTANTIATE_TEST_SUITE_P(
    InstancetypeTopologyNamed, InstancetypeTopology,
    ::testing::Values(
        // cpu_test.go: "should default to PreferSockets", "...PreferAny", "PreferCores", "PreferThreads".
        Case{"NoPreferenceIsSockets", 2, "", {2, 1, 1}},
        Case{"NoCpuPreferenceIsSockets", 2, R"({"cpu":{}})", {2, 1, 1}}, Case{"Sockets", 4, sockets, {4, 1, 1}},
        Case{"Cores", 4, cores, {1, 4, 1}}, Case{"Threads", 4, threads, {1, 1, 4}},
        Case{"AnyIsSockets", 4, any, {4, 1, 1}}, Case{"PreferSockets", 4, prefer_sockets, {4, 1, 1}},
        Case{"PreferCores", 4, prefer_cores, {1, 4, 1}}, Case{"PreferThreads", 4, prefer_threads, {1, 1, 4}},
        Case{"PreferAnyIsSockets", 4, prefer_any, {4, 1, 1}},
        // Guest 1 stops at 1/1/1 whatever the topology.
        Case{"OneVcpuCores", 1, cores, {1, 1, 1}}, Case{"OneVcpuThreads", 1, threads, {1, 1, 1}},
        Case{"OneVcpuSpreadSocketsCoresThreads",
             1,
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads"}}})",
             {1, 1, 1}},
        // An unknown topology keeps 1/1/1 (apply has no case for it).
        Case{"UnknownTopology", 4, R"({"cpu":{"preferredCPUTopology":"diagonal"}})", {1, 1, 1}}),
    [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

constexpr std::string_view ratio3 = R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":3}}})";
constexpr std::string_view ratio4 = R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":4}}})";
constexpr std::string_view sct =
    R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads"}}})";
constexpr std::string_view sct3 =
    R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads","ratio":3}}})";
constexpr std::string_view sct4 =
    R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads","ratio":4}}})";
constexpr std::string_view ct =
    R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"CoresThreads"}}})";

// cpu_test.go "with PreferSpread ... should spread".
INSTANTIATE_TEST_SUITE_P(
    InstancetypeTopologySpread, InstancetypeTopology,
    ::testing::Values(
        Case{"SocketsCores1", 1, spread, {1, 1, 1}}, Case{"SocketsCores2", 2, spread, {1, 2, 1}},
        Case{"SocketsCores4", 4, spread, {2, 2, 1}}, Case{"SocketsCores6", 6, spread, {3, 2, 1}},
        Case{"SocketsCores8", 8, spread, {4, 2, 1}}, Case{"PreferSpread6", 6, prefer_spread, {3, 2, 1}},
        Case{"SocketsCoresRatio3With3", 3, ratio3, {1, 3, 1}}, Case{"SocketsCoresRatio3With6", 6, ratio3, {2, 3, 1}},
        Case{"SocketsCoresRatio3With9", 9, ratio3, {3, 3, 1}}, Case{"SocketsCoresRatio3With12", 12, ratio3, {4, 3, 1}},
        Case{"SocketsCoresRatio4With4", 4, ratio4, {1, 4, 1}}, Case{"SocketsCoresRatio4With8", 8, ratio4, {2, 4, 1}},
        Case{"SocketsCoresRatio4With12", 12, ratio4, {3, 4, 1}},
        Case{"SocketsCoresRatio4With16", 16, ratio4, {4, 4, 1}}, Case{"SocketsCoresThreads4", 4, sct, {1, 2, 2}},
        Case{"SocketsCoresThreads8", 8, sct, {2, 2, 2}}, Case{"SocketsCoresThreads12", 12, sct, {3, 2, 2}},
        Case{"SocketsCoresThreads16", 16, sct, {4, 2, 2}}, Case{"SocketsCoresThreadsRatio3With6", 6, sct3, {1, 3, 2}},
        Case{"SocketsCoresThreadsRatio3With12", 12, sct3, {2, 3, 2}},
        Case{"SocketsCoresThreadsRatio3With18", 18, sct3, {3, 3, 2}},
        Case{"SocketsCoresThreadsRatio3With24", 24, sct3, {4, 3, 2}},
        Case{"SocketsCoresThreadsRatio4With8", 8, sct4, {1, 4, 2}},
        Case{"SocketsCoresThreadsRatio4With16", 16, sct4, {2, 4, 2}},
        Case{"SocketsCoresThreadsRatio4With24", 24, sct4, {3, 4, 2}},
        Case{"SocketsCoresThreadsRatio4With36", 36, sct4, {4, 4, 2}}, Case{"CoresThreads2", 2, ct, {1, 1, 2}},
        Case{"CoresThreads4", 4, ct, {1, 2, 2}}, Case{"CoresThreads6", 6, ct, {1, 3, 2}},
        Case{"CoresThreads8", 8, ct, {1, 4, 2}},
        // The deprecated ratio, and spreadOptions.ratio over it.
        Case{"DeprecatedRatio3With9",
             9,
             R"({"preferSpreadSocketToCoreRatio":3,"cpu":{"preferredCPUTopology":"spread"}})",
             {3, 3, 1}},
        Case{
            "SpreadOptionsRatioBeatsDeprecated",
            8,
            R"({"preferSpreadSocketToCoreRatio":3,"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":4}}})",
            {2, 4, 1}},
        // An across value KubeVirt does not know keeps 1/1/1.
        Case{"UnknownAcross",
             8,
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"Nowhere"}}})",
             {1, 1, 1}}),
    [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

TEST(InstancetypeTopologyGetters, PreferredTopologyDefaultsToSockets) {
  EXPECT_EQ(preferred_topology(nullptr), "sockets");
  for (std::string_view text : {R"({})", R"({"cpu":{}})", R"({"cpu":{"preferredCPUTopology":null}})"}) {
    SCOPED_TRACE(text);
    const json::Document preference = parse(text);
    EXPECT_EQ(preferred_topology(&preference), "sockets");
  }
  const json::Document preference = parse(R"({"cpu":{"preferredCPUTopology":"preferSpread"}})");
  EXPECT_EQ(preferred_topology(&preference), "preferSpread");
}

TEST(InstancetypeTopologyGetters, SpreadOptionsDefaultsAndOverrides) {
  const SpreadOptions defaults = spread_options(nullptr);
  EXPECT_EQ(defaults.ratio, 2U);
  EXPECT_EQ(defaults.across, "SocketsCores");

  const json::Document deprecated = parse(R"({"preferSpreadSocketToCoreRatio":3})");
  EXPECT_EQ(spread_options(&deprecated).ratio, 3U);

  const json::Document zero_deprecated = parse(R"({"preferSpreadSocketToCoreRatio":0})");
  EXPECT_EQ(spread_options(&zero_deprecated).ratio, 2U);

  const json::Document both =
      parse(R"({"preferSpreadSocketToCoreRatio":3,"cpu":{"spreadOptions":{"ratio":5,"across":"CoresThreads"}}})");
  EXPECT_EQ(spread_options(&both).ratio, 5U);
  EXPECT_EQ(spread_options(&both).across, "CoresThreads");

  const json::Document only_across =
      parse(R"({"preferSpreadSocketToCoreRatio":3,"cpu":{"spreadOptions":{"across":"SocketsCoresThreads"}}})");
  EXPECT_EQ(spread_options(&only_across).ratio, 3U);
  EXPECT_EQ(spread_options(&only_across).across, "SocketsCoresThreads");
}

}  // namespace
}  // namespace vmgate::admission::instancetype
