// Tests of validate-k8s-utils.go validateTopologySpreadConstraints.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view constraints) {
  return describe(validate_topology_spread(parse(R"({"topologySpreadConstraints": )" + std::string(constraints) + "}"),
                                           FieldPath("spec")));
}

TEST(ValidationTopologySpread, ValidConstraintsPass) {
  EXPECT_EQ(check(R"([{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                       "labelSelector": {"matchLabels": {"kubevirt.io/vm": "a"}}},
                      {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}])"),
            "");
}

TEST(ValidationTopologySpread, EachFieldAndRepeats) {
  const std::string c0 = "spec.topologySpreadConstraints[0]";
  EXPECT_EQ(
      check(R"([{"maxSkew": 0, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"},
                      {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}])"),
      "FieldValueInvalid " + c0 + ".maxSkew: " + c0 +
          ".maxSkew: Invalid value: 0: must be greater than zero\n"
          "FieldValueInvalid " +
          c0 + ".{topologyKey, whenUnsatisfiable}: " + c0 +
          ".{topologyKey, whenUnsatisfiable}: Duplicate value: \"{topology.kubernetes.io/zone, DoNotSchedule}\"\n");
  EXPECT_EQ(check(R"([{"maxSkew": 1, "whenUnsatisfiable": "Sometimes",
                       "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["b"]}]}}])"),
            "FieldValueInvalid " + c0 + ".topologyKey: " + c0 +
                ".topologyKey: Required value: can not be empty\n"
                "FieldValueInvalid " +
                c0 + ".whenUnsatisfiable: " + c0 +
                ".whenUnsatisfiable: Unsupported value: \"Sometimes\": supported values: \"DoNotSchedule\", "
                "\"ScheduleAnyway\"\n"
                // KubeVirt's label-selector path has no index.
                "FieldValueInvalid spec.topologySpreadConstraints.labelSelector.matchExpressions[0].values: "
                "spec.topologySpreadConstraints.labelSelector.matchExpressions[0].values: Forbidden: may not be "
                "specified when `operator` is 'Exists' or 'DoesNotExist'\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
