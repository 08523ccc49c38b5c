// Tests of the CPU feature policy rule (vmi-create-admitter.go validateCPUFeaturePolicies): the
// valid policies are "", force, require, optional, disable and forbid; anything else is
// FieldValueNotSupported at ...cpu.features[i].policy.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/compute/cpu_model.hpp"

namespace vmgate::admission::cpu {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

ErrorList validate_features(std::string_view features_json, std::string_view path = "spec") {
  return validate_feature_policies(parse(R"({"domain": {"cpu": {"features": )" + std::string(features_json) + "}}}"),
                                   FieldPath(std::string(path)));
}

class CpuFeaturePolicyValid : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuFeaturePolicyValid, IsAccepted) {
  EXPECT_EQ(describe(validate_features(R"([{"name": "vmx", "policy": ")" + GetParam() + "\"}]")), "");
}

INSTANTIATE_TEST_SUITE_P(CpuFeaturePolicies, CpuFeaturePolicyValid,
                         ::testing::Values("", "force", "require", "optional", "disable", "forbid"));

TEST(CpuFeaturePolicy, MissingPolicyIsAccepted) {
  EXPECT_EQ(describe(validate_features(R"([{"name": "vmx"}])")), "");
}

TEST(CpuFeaturePolicy, UnknownPolicyIsNotSupported) {
  EXPECT_EQ(
      describe(validate_features(R"([{"name": "vmx", "policy": "require"}, {"name": "pcid", "policy": "invalid"}])")),
      "FieldValueNotSupported spec.domain.cpu.features[1].policy: CPU feature pcid uses policy invalid that is not "
      "supported.\n");
}

TEST(CpuFeaturePolicy, PoliciesAreCaseSensitive) {
  EXPECT_EQ(
      describe(validate_features(R"([{"name": "vmx", "policy": "Require"}])")),
      "FieldValueNotSupported spec.domain.cpu.features[0].policy: CPU feature vmx uses policy Require that is not "
      "supported.\n");
}

TEST(CpuFeaturePolicy, EveryBadFeatureIsReportedWithTheVmPath) {
  EXPECT_EQ(
      describe(validate_features(
          R"([{"name": "a", "policy": "x"}, {"name": "b", "policy": "forbid"}, {"name": "c", "policy": "y"}])",
          "spec.template.spec")),
      "FieldValueNotSupported spec.template.spec.domain.cpu.features[0].policy: CPU feature a uses policy x that is "
      "not supported.\n"
      "FieldValueNotSupported spec.template.spec.domain.cpu.features[2].policy: CPU feature c uses policy y that is "
      "not supported.\n");
}

TEST(CpuFeaturePolicy, NoFeaturesNoCauses) {
  EXPECT_TRUE(validate_feature_policies(parse("{}"), FieldPath("spec")).empty());
  EXPECT_TRUE(validate_feature_policies(parse(R"({"domain": {"cpu": {}}})"), FieldPath("spec")).empty());
  EXPECT_TRUE(validate_features("[]").empty());
}

}  // namespace
}  // namespace vmgate::admission::cpu
