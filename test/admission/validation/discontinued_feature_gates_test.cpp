// Tests of pkg/virt-config/featuregate/validator.go ValidateFeatureGates.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

TEST(ValidationDiscontinuedFeatureGates, ListedGateWithItsApiInUse) {
  const json::Document spec =
      parse(R"({"domain": {"devices": {"interfaces": [{"name": "a", "passt": {}}, {"name": "b", "macvtap": {}}]}}})");
  ClusterConfig config;
  EXPECT_EQ(describe(validate_discontinued_feature_gates(spec, config)), "");
  config.feature_gates = {"Macvtap", "Snapshot", "Passt"};
  EXPECT_EQ(describe(validate_discontinued_feature_gates(spec, config)),
            "FieldValueNotSupported : Macvtap network binding is discontinued since v1.3. Please refer to Kubevirt "
            "user guide for alternatives.\n"
            "FieldValueNotSupported : Passt network binding is discontinued since v1.3. Please refer to Kubevirt user "
            "guide for alternatives.\n");
  EXPECT_EQ(describe(validate_discontinued_feature_gates(
                parse(R"({"domain": {"devices": {"interfaces": [{"name": "a", "masquerade": {}}]}}})"), config)),
            "");
}

}  // namespace
}  // namespace vmgate::admission::validation
