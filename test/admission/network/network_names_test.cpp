// Tests of the interface ↔ network name rules (pkg/network/admitter/netiface.go), in the order of
// validator.go: unique networks, networks → interfaces, unique interfaces, interfaces → networks.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view interfaces, std::string_view networks, std::string_view path = "spec") {
  return describe(validate_network_names(parse(R"({"domain": {"devices": {"interfaces": )" + std::string(interfaces) +
                                               R"(}}, "networks": )" + std::string(networks) + "}"),
                                         FieldPath(std::string(path))));
}

TEST(ValidationNetworkNames, MatchingNamesPass) {
  EXPECT_EQ(check(R"([{"name": "default", "masquerade": {}}, {"name": "br1", "bridge": {}}])",
                  R"([{"name": "br1", "multus": {"networkName": "br"}}, {"name": "default", "pod": {}}])"),
            "");
  EXPECT_EQ(check("[]", "[]"), "");
  EXPECT_TRUE(validate_network_names(parse("{}"), FieldPath("spec")).empty());
}

TEST(ValidationNetworkNames, NetworkWithoutInterface) {
  EXPECT_EQ(check(R"([{"name": "default"}])", R"([{"name": "default", "pod": {}}, {"name": "x", "pod": {}}])"),
            "FieldValueRequired spec.networks[1].name: spec.networks[1].name 'x' not found.\n");
}

TEST(ValidationNetworkNames, InterfaceWithoutNetwork) {
  EXPECT_EQ(check(R"([{"name": "x"}])", "[]", "spec.template.spec"),
            "FieldValueInvalid spec.template.spec.domain.devices.interfaces[0].name: "
            "spec.template.spec.domain.devices.interfaces[0].name 'x' not found.\n");
  // No networks member at all is the same as an empty list.
  EXPECT_EQ(describe(validate_network_names(parse(R"({"domain": {"devices": {"interfaces": [{"name": "x"}]}}})"),
                                            FieldPath("spec"))),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: spec.domain.devices.interfaces[0].name 'x' not "
            "found.\n");
}

TEST(ValidationNetworkNames, DuplicateNetworks) {
  EXPECT_EQ(
      check(R"([{"name": "a"}])", R"([{"name": "a", "pod": {}}, {"name": "a", "pod": {}}])"),
      "FieldValueDuplicate spec.networks[1].name: Network with name \"a\" already exists, every network must have a "
      "unique name\n");
}

TEST(ValidationNetworkNames, DuplicateInterfaces) {
  EXPECT_EQ(check(R"([{"name": "a"}, {"name": "a"}])", R"([{"name": "a", "pod": {}}])"),
            "FieldValueDuplicate spec.domain.devices.interfaces[1].name: Only one interface can be connected to one "
            "specific network\n");
}

TEST(ValidationNetworkNames, KubeVirtOrderAcrossAllRules) {
  EXPECT_EQ(
      check(R"([{"name": "i"}, {"name": "i"}])", R"([{"name": "n"}, {"name": "n"}])"),
      "FieldValueDuplicate spec.networks[1].name: Network with name \"n\" already exists, every network must have a "
      "unique name\n"
      "FieldValueRequired spec.networks[0].name: spec.networks[0].name 'n' not found.\n"
      "FieldValueRequired spec.networks[1].name: spec.networks[1].name 'n' not found.\n"
      "FieldValueDuplicate spec.domain.devices.interfaces[1].name: Only one interface can be connected to one "
      "specific network\n"
      "FieldValueInvalid spec.domain.devices.interfaces[0].name: spec.domain.devices.interfaces[0].name 'i' not "
      "found.\n"
      "FieldValueInvalid spec.domain.devices.interfaces[1].name: spec.domain.devices.interfaces[1].name 'i' not "
      "found.\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
