// Tests of validate-k8s-utils.go validateAffinity (paths start at the spec, without "affinity").
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view affinity) {
  return describe(validate_affinity(parse(R"({"affinity": )" + std::string(affinity) + "}"), FieldPath("spec")));
}

TEST(ValidationAffinity, ValidAffinityPasses) {
  EXPECT_EQ(check(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
                         "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
                      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": {
                        "matchExpressions": [{"key": "disk", "operator": "Exists"}]}}]},
                      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
                        "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                          "labelSelector": {"matchLabels": {"app": "web"}}}}]}})"),
            "");
}

TEST(ValidationAffinity, NodeSelectorRequirements) {
  const std::string term = "spec.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
  EXPECT_EQ(
      check(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}})"),
      "FieldValueInvalid " + term + ": " + term + ": Required value: must have at least one node selector term\n");
  EXPECT_EQ(check(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "b", "operator": "Exists", "values": ["x"]},
                                              {"key": "c", "operator": "Gt", "values": ["1", "2"]}, {"key": "d", "operator": "Near"}]}]}}})"),
            "FieldValueInvalid " + term + "[0].matchExpressions[0].values: " + term +
                "[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'\n"
                "FieldValueInvalid " +
                term + "[0].matchExpressions[1].values: " + term +
                "[0].matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or "
                "'DoesNotExist'\n"
                "FieldValueInvalid " +
                term + "[0].matchExpressions[2].values: " + term +
                "[0].matchExpressions[2].values: Required value: must be specified single value when `operator` is "
                "'Lt' or 'Gt'\n"
                "FieldValueInvalid " +
                term + "[0].matchExpressions[3].operator: " + term +
                "[0].matchExpressions[3].operator: Invalid value: \"Near\": not a valid selector operator\n");
  EXPECT_EQ(check(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["a", "b"]}]}]}}})"),
            "FieldValueInvalid " + term + "[0].matchFields[0].values: " + term +
                "[0].matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' "
                "for node field selector\n"
                "FieldValueInvalid " +
                term + "[0].matchFields[0].key: " + term +
                "[0].matchFields[0].key: Invalid value: \"metadata.uid\": not a valid field selector key\n");
}

TEST(ValidationAffinity, WeightsAndPodTerms) {
  const std::string preferred = "spec.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]";
  EXPECT_EQ(check(R"({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0,
                        "podAffinityTerm": {"topologyKey": "zone", "namespaces": ["Bad"]}}]}})"),
            "FieldValueInvalid " + preferred + ".weight: " + preferred +
                ".weight: Invalid value: 0: must be in the range 1-100\n"
                "FieldValueInvalid " +
                preferred + ".podAffinityTerm.namespace: " + preferred +
                ".podAffinityTerm.namespace: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower "
                "case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
                "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n");
  const std::string required = "spec.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
  EXPECT_EQ(check(R"({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": "", "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}]}})"),
            "FieldValueInvalid " + required + ".labelSelector.matchExpressions[0].values: " + required +
                ".labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' "
                "or 'NotIn'\n"
                "FieldValueInvalid " +
                required + ".topologyKey: " + required +
                ".topologyKey: Required value: can not be empty\n"
                "FieldValueInvalid " +
                required + ".topologyKey: " + required +
                ".topologyKey: Invalid value: \"\": name part must be non-empty\n"
                "FieldValueInvalid " +
                required + ".topologyKey: " + required +
                ".topologyKey: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
