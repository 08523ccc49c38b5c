// Tests of admission/src/preference/machine.cpp (KubeVirt pkg/instancetype/preference/apply/
// machine.go; cases from machine_test.go).
#include <gtest/gtest.h>

#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/admission/preference/apply.hpp"

namespace vmgate::admission::preference {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::json_equals;

json::Document applied(std::string_view preference, std::string_view vmi_spec) {
  return testing::applied_rule(apply_machine, preference, vmi_spec);
}

TEST(PreferenceMachine, AppliesPreferredMachineTypeWhenNoMachine) {
  EXPECT_TRUE(json_equals(applied(R"({"machine":{"preferredMachineType":"q35-rhel-8.0"}})", R"({"domain":{}})"),
                          R"({"domain":{"machine":{"type":"q35-rhel-8.0"}}})"));
}

TEST(PreferenceMachine, AppliesPreferredMachineTypeWhenTypeEmpty) {
  EXPECT_TRUE(json_equals(
      applied(R"({"machine":{"preferredMachineType":"pc-q35-rhel8.6.0"}})", R"({"domain":{"machine":{"type":""}}})"),
      R"({"domain":{"machine":{"type":"pc-q35-rhel8.6.0"}}})"));
}

TEST(PreferenceMachine, UserMachineTypeIsKept) {
  EXPECT_TRUE(json_equals(
      applied(R"({"machine":{"preferredMachineType":"pc-q35-rhel8.6.0"}})", R"({"domain":{"machine":{"type":"q35"}}})"),
      R"({"domain":{"machine":{"type":"q35"}}})"));
}

TEST(PreferenceMachine, EmptyOrMissingPreferenceCreatesNothing) {
  for (std::string_view preference : {R"({})", R"({"machine":{}})", R"({"machine":{"preferredMachineType":""}})"}) {
    SCOPED_TRACE(preference);
    EXPECT_TRUE(json_equals(applied(preference, R"({"domain":{}})"), R"({"domain":{}})"));
  }
}

}  // namespace
}  // namespace vmgate::admission::preference
