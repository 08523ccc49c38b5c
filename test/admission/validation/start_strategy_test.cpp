// Tests of vmi-create-admitter.go validateStartStrategy and validateVSOCK.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

TEST(ValidationStartStrategy, PausedOnlyAndWithoutLivenessProbe) {
  const auto check = [](std::string_view spec) {
    return describe(validate_start_strategy(parse(spec), FieldPath("spec")));
  };
  EXPECT_EQ(check(R"({"startStrategy": "Paused"})"), "");
  EXPECT_EQ(check("{}"), "");
  EXPECT_EQ(check(R"({"startStrategy": "Running"})"),
            "FieldValueInvalid spec.startStrategy: spec.startStrategy is set with an unrecognized option: Running\n");
  EXPECT_EQ(check(R"({"startStrategy": "Paused", "livenessProbe": {"exec": {}}})"),
            "FieldValueInvalid spec.startStrategy: either spec.startStrategy or spec.livenessProbe should be "
            "provided.Pausing VMI with LivenessProbe is not supported\n");
}

TEST(ValidationVsock, NeedsItsFeatureGate) {
  const json::Document spec = parse(R"({"domain": {"devices": {"autoattachVSOCK": true}}})");
  EXPECT_EQ(describe(validate_vsock(spec, FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.devices.autoattachVSOCK: VSOCK feature gate is not enabled in "
            "kubevirt-config\n");
  ClusterConfig gates;
  gates.feature_gates = {"VSOCK"};
  EXPECT_EQ(describe(validate_vsock(spec, FieldPath("spec"), gates)), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
