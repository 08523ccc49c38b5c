// Tests of admission/src/preference/clock.cpp (KubeVirt pkg/instancetype/preference/apply/
// clock.go; cases from clock_test.go).
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
  return testing::applied_rule(apply_clock, preference, vmi_spec);
}

// clock_test.go "should apply to VMI": ClockOffset is inlined, so utc/timezone sit under clock.
TEST(PreferenceClock, AppliesOffsetAndTimer) {
  EXPECT_TRUE(json_equals(
      applied(
          R"({"clock":{"preferredClockOffset":{"utc":{"offsetSeconds":30}},"preferredTimer":{"hpet":{"present":true}}}})",
          R"({"domain":{}})"),
      R"({"domain":{"clock":{"utc":{"offsetSeconds":30},"timer":{"hpet":{"present":true}}}}})"));
}

TEST(PreferenceClock, AppliesTimezoneOffset) {
  EXPECT_TRUE(json_equals(
      applied(R"({"clock":{"preferredClockOffset":{"timezone":"Europe/Prague"}}})", R"({"domain":{"clock":{}}})"),
      R"({"domain":{"clock":{"timezone":"Europe/Prague"}}})"));
}

// No partial overwrite: a user utc or timezone keeps the whole preferred offset out.
TEST(PreferenceClock, OffsetOnlyWhenNeitherUtcNorTimezoneIsSet) {
  EXPECT_TRUE(json_equals(applied(R"({"clock":{"preferredClockOffset":{"timezone":"Europe/Prague"}}})",
                                  R"({"domain":{"clock":{"utc":{}}}})"),
                          R"({"domain":{"clock":{"utc":{}}}})"));
  EXPECT_TRUE(json_equals(applied(R"({"clock":{"preferredClockOffset":{"utc":{"offsetSeconds":30}}}})",
                                  R"({"domain":{"clock":{"timezone":"UTC"}}})"),
                          R"({"domain":{"clock":{"timezone":"UTC"}}})"));
}

TEST(PreferenceClock, UserTimerIsKept) {
  EXPECT_TRUE(json_equals(applied(R"({"clock":{"preferredTimer":{"hpet":{"present":true}}}})",
                                  R"({"domain":{"clock":{"utc":{},"timer":{"rtc":{}}}}})"),
                          R"({"domain":{"clock":{"utc":{},"timer":{"rtc":{}}}}})"));
}

TEST(PreferenceClock, TimerAppliedEvenWhenOffsetIsTheUsers) {
  EXPECT_TRUE(json_equals(applied(R"({"clock":{"preferredClockOffset":{"timezone":"X"},"preferredTimer":{"kvm":{}}}})",
                                  R"({"domain":{"clock":{"utc":{}}}})"),
                          R"({"domain":{"clock":{"utc":{},"timer":{"kvm":{}}}}})"));
}

TEST(PreferenceClock, ClockPreferencesCreateTheClock) {
  EXPECT_TRUE(json_equals(applied(R"({"clock":{}})", R"({"domain":{}})"), R"({"domain":{"clock":{}}})"));
}

TEST(PreferenceClock, NoClockPreferencesLeaveTheSpecAlone) {
  EXPECT_TRUE(json_equals(applied(R"({"machine":{}})", R"({"domain":{}})"), R"({"domain":{}})"));
}

}  // namespace
}  // namespace vmgate::admission::preference
