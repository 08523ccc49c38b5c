// Tests of admission/src/preference/scalars.cpp (KubeVirt pkg/instancetype/preference/apply/
// {subdomain,termination,architecture,launchsecurity,annotations}.go and their _test.go files).
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

using Applier = void (*)(const json::Value&, json::Value&, json::Allocator&);

json::Document applied(Applier applier, std::string_view preference, std::string_view target) {
  const json::Document preference_doc = parse(preference);
  json::Document out = parse(target);
  applier(preference_doc, out, out.GetAllocator());
  return out;
}

TEST(PreferenceScalars, SubdomainWhenEmpty) {
  EXPECT_TRUE(
      json_equals(applied(apply_subdomain, R"({"preferredSubdomain":"sub"})", R"({})"), R"({"subdomain":"sub"})"));
  EXPECT_TRUE(json_equals(applied(apply_subdomain, R"({"preferredSubdomain":"sub"})", R"({"subdomain":""})"),
                          R"({"subdomain":"sub"})"));
}

TEST(PreferenceScalars, SubdomainKeepsTheUsers) {
  EXPECT_TRUE(json_equals(applied(apply_subdomain, R"({"preferredSubdomain":"sub"})", R"({"subdomain":"mine"})"),
                          R"({"subdomain":"mine"})"));
  EXPECT_TRUE(json_equals(applied(apply_subdomain, R"({})", R"({})"), R"({})"));
}

TEST(PreferenceScalars, TerminationGracePeriodWhenNil) {
  EXPECT_TRUE(
      json_equals(applied(apply_termination_grace_period, R"({"preferredTerminationGracePeriodSeconds":180})", R"({})"),
                  R"({"terminationGracePeriodSeconds":180})"));
}

TEST(PreferenceScalars, TerminationGracePeriodKeepsTheUsersEvenZero) {
  EXPECT_TRUE(json_equals(applied(apply_termination_grace_period, R"({"preferredTerminationGracePeriodSeconds":180})",
                                  R"({"terminationGracePeriodSeconds":0})"),
                          R"({"terminationGracePeriodSeconds":0})"));
  EXPECT_TRUE(json_equals(applied(apply_termination_grace_period, R"({})", R"({})"), R"({})"));
}

// architecture_test.go.
TEST(PreferenceScalars, ArchitectureWhenNotSet) {
  EXPECT_TRUE(json_equals(applied(apply_architecture, R"({"preferredArchitecture":"arm64"})", R"({"domain":{}})"),
                          R"({"domain":{},"architecture":"arm64"})"));
}

TEST(PreferenceScalars, ArchitectureKeepsTheUsers) {
  EXPECT_TRUE(
      json_equals(applied(apply_architecture, R"({"preferredArchitecture":"arm64"})", R"({"architecture":"amd64"})"),
                  R"({"architecture":"amd64"})"));
}

TEST(PreferenceScalars, ArchitectureNotAppliedWhenNilOrEmpty) {
  for (std::string_view preference :
       {R"({})", R"({"preferredArchitecture":""})", R"({"preferredArchitecture":null})"}) {
    SCOPED_TRACE(preference);
    EXPECT_TRUE(json_equals(applied(apply_architecture, preference, R"({})"), R"({})"));
  }
}

// launchsecurity_test.go (preference-only rows; the instancetype rows are in instancetype/apply_test.cpp).
void launch_security_at_main(const json::Value& preference, json::Value& spec, json::Allocator& allocator) {
  apply_launch_security(preference, spec, allocator, Release::main);
}

TEST(PreferenceScalars, LaunchSecurityOnlyWhenNil) {
  EXPECT_TRUE(json_equals(applied(launch_security_at_main, R"({})", R"({"domain":{}})"), R"({"domain":{}})"));
  EXPECT_TRUE(json_equals(
      applied(launch_security_at_main, R"({"preferredLaunchSecurity":{"sev":{"policy":{}}}})", R"({"domain":{}})"),
      R"({"domain":{"launchSecurity":{"sev":{"policy":{}}}}})"));
  EXPECT_TRUE(json_equals(applied(launch_security_at_main, R"({})", R"({"domain":{"launchSecurity":{"sev":{}}}})"),
                          R"({"domain":{"launchSecurity":{"sev":{}}}})"));
  EXPECT_TRUE(json_equals(applied(launch_security_at_main, R"({"preferredLaunchSecurity":{"sev":{"policy":{}}}})",
                                  R"({"domain":{"launchSecurity":{"sev":{}}}})"),
                          R"({"domain":{"launchSecurity":{"sev":{}}}})"));
}

// v1.8 has no preferredLaunchSecurity (PR #17551 came after it).
TEST(PreferenceScalars, LaunchSecurityNotAtV18) {
  const auto at_v18 = [](const json::Value& preference, json::Value& spec, json::Allocator& allocator) {
    apply_launch_security(preference, spec, allocator, Release::v1_8);
  };
  EXPECT_TRUE(json_equals(applied(at_v18, R"({"preferredLaunchSecurity":{"sev":{"policy":{}}}})", R"({"domain":{}})"),
                          R"({"domain":{}})"));
}

// annotations.go: a key is added only when absent; never a conflict.
TEST(PreferenceScalars, AnnotationsAddedOnlyForAbsentKeys) {
  EXPECT_TRUE(
      json_equals(applied(apply_annotations, R"({"annotations":{"a":"1","b":"2"}})", R"({"annotations":{"b":"mine"}})"),
                  R"({"annotations":{"b":"mine","a":"1"}})"));
  EXPECT_TRUE(json_equals(applied(apply_annotations, R"({"annotations":{"a":"1"}})", R"({"labels":{"x":"y"}})"),
                          R"({"labels":{"x":"y"},"annotations":{"a":"1"}})"));
}

TEST(PreferenceScalars, NoAnnotationsLeaveTheMetadataAlone) {
  EXPECT_TRUE(json_equals(applied(apply_annotations, R"({})", R"({})"), R"({})"));
  EXPECT_TRUE(json_equals(applied(apply_annotations, R"({"annotations":{}})", R"({"name":"vm"})"), R"({"name":"vm"})"));
}

}  // namespace
}  // namespace vmgate::admission::preference
