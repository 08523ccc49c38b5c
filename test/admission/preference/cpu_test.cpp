// Tests of admission/src/preference/cpu.cpp: preferredCPUFeatures
// (KubeVirt pkg/instancetype/preference/apply/cpu.go, cases from pkg/instancetype/apply/cpu_test.go).
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
  return testing::applied_rule(apply_cpu, preference, vmi_spec);
}

// cpu_test.go "should apply PreferredCPUFeatures": the user's feature of the same name wins, whatever
// its policy, and the preferred ones follow the user's.
TEST(PreferenceCpu, AppendsPreferredFeaturesWhoseNameIsNotUsed) {
  const json::Document spec =
      applied(R"({"cpu":{"preferredCPUFeatures":[{"name":"foo","policy":"require"},{"name":"bar","policy":"force"}]}})",
              R"({"domain":{"cpu":{"features":[{"name":"bar","policy":"optional"}]}}})");
  EXPECT_TRUE(json_equals(
      spec,
      R"({"domain":{"cpu":{"features":[{"name":"bar","policy":"optional"},{"name":"foo","policy":"require"}]}}})"));
}

TEST(PreferenceCpu, AddsFeaturesListToExistingCpu) {
  const json::Document spec =
      applied(R"({"cpu":{"preferredCPUFeatures":[{"name":"vmx"}]}})", R"({"domain":{"cpu":{"sockets":2}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"cpu":{"sockets":2,"features":[{"name":"vmx"}]}}})"));
}

// KubeVirt's preferredCPUFeatures code dereferences a nil domain.cpu here (a VM with neither an
// instancetype nor a cpu; the webhook request fails); vmgate creates it.
TEST(PreferenceCpu, CreatesCpuWhenTheVmHasNone) {
  const json::Document spec = applied(R"({"cpu":{"preferredCPUFeatures":[{"name":"vmx","policy":"require"}]}})",
                                      R"({"domain":{"devices":{}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{},"cpu":{"features":[{"name":"vmx","policy":"require"}]}}})"));
}

TEST(PreferenceCpu, KeepsEveryUserFeatureWhenAllNamesAreTaken) {
  const json::Document spec = applied(R"({"cpu":{"preferredCPUFeatures":[{"name":"vmx","policy":"require"}]}})",
                                      R"({"domain":{"cpu":{"features":[{"name":"vmx","policy":"disable"}]}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"cpu":{"features":[{"name":"vmx","policy":"disable"}]}}})"));
}

// The set of taken names is the user's only, so a name repeated in the preference is appended twice.
TEST(PreferenceCpu, RepeatedPreferredNameIsAppendedAsKubeVirtDoes) {
  const json::Document spec =
      applied(R"({"cpu":{"preferredCPUFeatures":[{"name":"a"},{"name":"a"}]}})", R"({"domain":{"cpu":{}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"cpu":{"features":[{"name":"a"},{"name":"a"}]}}})"));
}

TEST(PreferenceCpu, NothingPreferredLeavesTheSpecAlone) {
  for (std::string_view preference : {R"({})", R"({"cpu":{}})", R"({"cpu":{"preferredCPUFeatures":[]}})",
                                      R"({"cpu":{"preferredCPUTopology":"cores"}})"}) {
    SCOPED_TRACE(preference);
    const json::Document spec = applied(preference, R"({"domain":{"devices":{}}})");
    EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{}}})"));
  }
}

// Without an instancetype the preferred topology never rewrites the VM's own CPU counts (doc 1.2).
TEST(PreferenceCpu, TopologyAloneDoesNotTouchTheVmCpu) {
  const json::Document spec = applied(R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":4}}})",
                                      R"({"domain":{"cpu":{"sockets":2,"cores":1,"threads":1}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"cpu":{"sockets":2,"cores":1,"threads":1}}})"));
}

}  // namespace
}  // namespace vmgate::admission::preference
