// Tests of pkg/network/admitter/netsource.go.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view networks) {
  return describe(validate_network_sources(parse(R"({"networks": )" + std::string(networks) + "}"), FieldPath("spec")));
}

TEST(ValidationNetworkSources, OnePodNetworkAndOneTypeEach) {
  EXPECT_EQ(check(R"([{"name": "a", "pod": {}}, {"name": "b", "multus": {"networkName": "n"}}])"), "");
  EXPECT_EQ(check(R"([{"name": "a", "pod": {}}, {"name": "b", "pod": {}}])"),
            "FieldValueDuplicate spec.interfaces: more than one interface is connected to a pod network in "
            "spec.interfaces\n");
  EXPECT_EQ(check(R"([{"name": "a"}, {"name": "b", "pod": {}, "multus": {"networkName": "n"}}])"),
            "FieldValueRequired spec.networks[0]: should have a network type\n"
            "FieldValueRequired spec.networks[1]: should have only one network type\n");
}

TEST(ValidationNetworkSources, MultusDefaultsAndNames) {
  EXPECT_EQ(check(R"([{"name": "a", "pod": {}}, {"name": "b", "multus": {"networkName": "n", "default": true}},
                      {"name": "c", "multus": {"networkName": "m", "default": true}}, {"name": "d", "multus": {}}])"),
            "FieldValueInvalid spec.networks: Multus CNI should only have one default network\n"
            "FieldValueInvalid spec.networks: Pod network cannot be defined when Multus default network is defined\n"
            "FieldValueRequired spec.networks[3]: CNI delegating plugin must have a networkName\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
