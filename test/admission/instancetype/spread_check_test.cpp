// Tests of admission/src/instancetype/spread_check.cpp: the spread divisibility check of the VM
// validating webhook (KubeVirt pkg/instancetype/preference/validation/cpu.go CheckSpreadCPUTopology,
// called from pkg/instancetype/webhooks/vm/admitter.go).
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::instancetype {
namespace {

using vmgate::testing::parse;

struct Case {
  std::string name;
  std::string_view instancetype;
  std::string_view preference;
  std::string message;  // "" = accepted
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class InstancetypeSpreadCheck : public ::testing::TestWithParam<Case> {};

TEST_P(InstancetypeSpreadCheck, Check) {
  const Case& c = GetParam();
  const json::Document instancetype = parse(c.instancetype);
  const json::Document preference = parse(c.preference);
  const ErrorList causes = check_spread(&instancetype, &preference);
  if (c.message.empty()) {
    EXPECT_TRUE(causes.empty()) << causes.front().message;
    return;
  }
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].type, CauseType::field_value_invalid);
  EXPECT_EQ(causes[0].field, "instancetype.spec.cpu.guest");
  EXPECT_EQ(causes[0].message, c.message);
}

constexpr std::string_view spread = R"({"cpu":{"preferredCPUTopology":"spread"}})";

std::string socket_cores(int vcpus, int ratio) {
  return std::to_string(vcpus) +
         " vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio or "
         "Spec.CPU.PreferSpreadOptions.Ratio of " +
         std::to_string(ratio) + " provided by the preference";
}

INSTANTIATE_TEST_SUITE_P(
    InstancetypeSpreadCheckCases, InstancetypeSpreadCheck,
    ::testing::Values(
        Case{"SocketsCoresDivisible", R"({"cpu":{"guest":4}})", spread, ""},
        Case{"SocketsCoresNotDivisible", R"({"cpu":{"guest":3}})", spread, socket_cores(3, 2)},
        // No special case for 1 vCPU: rejected with the default ratio, although apply would cope.
        Case{"OneVcpuRejected", R"({"cpu":{"guest":1}})", spread, socket_cores(1, 2)},
        Case{"OneVcpuPreferSpreadRejected", R"({"cpu":{"guest":1}})",
             R"({"cpu":{"preferredCPUTopology":"preferSpread"}})", socket_cores(1, 2)},
        Case{"Ratio3With9", R"({"cpu":{"guest":9}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":3}}})", ""},
        Case{"Ratio3With8", R"({"cpu":{"guest":8}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":3}}})", socket_cores(8, 3)},
        Case{"DeprecatedRatio4With6", R"({"cpu":{"guest":6}})",
             R"({"preferSpreadSocketToCoreRatio":4,"cpu":{"preferredCPUTopology":"spread"}})", socket_cores(6, 4)},
        Case{"CoresThreadsDivisible", R"({"cpu":{"guest":6}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"CoresThreads"}}})", ""},
        Case{"CoresThreadsNotDivisible", R"({"cpu":{"guest":5}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"CoresThreads"}}})",
             "5 vCPUs provided by the instance type are not divisible by the number of threads per core 2"},
        Case{"SocketsCoresThreads8", R"({"cpu":{"guest":8}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads"}}})", ""},
        Case{"SocketsCoresThreadsRatio3With12", R"({"cpu":{"guest":12}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads","ratio":3}}})",
             ""},
        Case{"SocketsCoresThreadsOdd", R"({"cpu":{"guest":6}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads"}}})",
             "6 vCPUs provided by the instance type are not divisible by the number of threads per core 2 and "
             "Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 2"},
        Case{"SocketsCoresThreadsOddGuest", R"({"cpu":{"guest":9}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads","ratio":3}}})",
             "9 vCPUs provided by the instance type are not divisible by the number of threads per core 2 and "
             "Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 3"},
        // Only spread topologies are checked.
        Case{"SocketsNotChecked", R"({"cpu":{"guest":3}})", R"({"cpu":{"preferredCPUTopology":"sockets"}})", ""},
        Case{"DefaultTopologyNotChecked", R"({"cpu":{"guest":3}})", R"({})", ""},
        Case{"UnknownAcrossNotChecked", R"({"cpu":{"guest":3}})",
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"Nowhere"}}})", ""}),
    [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

TEST(InstancetypeSpreadCheckInputs, NeedsBothAnInstancetypeAndAPreference) {
  const json::Document instancetype = parse(R"({"cpu":{"guest":3}})");
  const json::Document preference = parse(spread);
  EXPECT_TRUE(check_spread(nullptr, &preference).empty());
  EXPECT_TRUE(check_spread(&instancetype, nullptr).empty());
  EXPECT_TRUE(check_spread(nullptr, nullptr).empty());
}

// KubeVirt divides by the ratio and would panic on 0; vmgate rejects instead of crashing.
TEST(InstancetypeSpreadCheckInputs, RatioZeroIsRejectedNotACrash) {
  const json::Document instancetype = parse(R"({"cpu":{"guest":4}})");
  const json::Document preference = parse(R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":0}}})");
  const ErrorList causes = check_spread(&instancetype, &preference);
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].field, "instancetype.spec.cpu.guest");
  EXPECT_EQ(guest_topology(4, &preference), (Topology{1, 1, 1}));
}

// Only where KubeVirt's switch reaches a modulo by the ratio does 0 matter.
TEST(InstancetypeSpreadCheckInputs, RatioZeroOnlyWhereKubeVirtDividesByIt) {
  const auto check = [](int guest, std::string_view across) {
    const json::Document instancetype = parse(R"({"cpu":{"guest":)" + std::to_string(guest) + "}}");
    const json::Document preference =
        parse(R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":0,"across":")" + std::string(across) +
              R"("}}})");
    const ErrorList causes = check_spread(&instancetype, &preference);
    return causes.empty() ? std::string("admitted") : causes[0].message;
  };
  EXPECT_EQ(check(3, "SocketsCoresThreads"),
            "3 vCPUs provided by the instance type are not divisible by the number of threads per core 2 and "
            "Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 0");
  EXPECT_EQ(check(4, "SocketsCoresThreads"), "4 vCPUs provided by the instance type are not divisible by a ratio of 0");
  EXPECT_EQ(check(4, "CoresThreads"), "4 vCPUs provided by the instance type are not divisible by a ratio of 0");
  EXPECT_EQ(check(4, "Bogus"), "admitted");
}

}  // namespace
}  // namespace vmgate::admission::instancetype
