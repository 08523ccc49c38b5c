// Tests of pkg/network/admitter/admit.go validateInterfaceStateValue.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view interfaces,
                  std::string_view networks =
                      R"([{"name": "default", "pod": {}}, {"name": "blue", "multus": {"networkName": "b"}}])") {
  return describe(
      validate_interface_states(parse(R"({"domain": {"devices": {"interfaces": )" + std::string(interfaces) +
                                      R"(}}, "networks": )" + std::string(networks) + "}"),
                                FieldPath("spec")));
}

TEST(ValidationInterfaceStates, KnownValues) {
  EXPECT_EQ(
      check(
          R"([{"name": "default", "masquerade": {}, "state": "up"}, {"name": "blue", "bridge": {}, "state": "absent"}])"),
      "");
  EXPECT_EQ(check(R"([{"name": "default", "masquerade": {}, "state": "Down"}])"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].state: logical default interface state value is "
            "unsupported: Down\n");
}

TEST(ValidationInterfaceStates, LinkStatesNotOnSriov) {
  EXPECT_EQ(check(R"([{"name": "blue", "sriov": {}, "state": "down"}])"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].state: \"blue\" interface's state \"down\" is not "
            "supported for SR-IOV NICs\n");
}

TEST(ValidationInterfaceStates, AbsentOnlyWithBridgeAndNotOnTheDefaultNetwork) {
  EXPECT_EQ(
      check(R"([{"name": "default", "masquerade": {}, "state": "absent"}])"),
      "FieldValueInvalid spec.domain.devices.interfaces[0].state: \"default\" interface's state \"absent\" is "
      "supported only for bridge binding\n"
      "FieldValueInvalid spec.domain.devices.interfaces[0].state: \"default\" interface's state \"absent\" is not "
      "supported on default networks\n");
  EXPECT_EQ(check(R"([{"name": "main", "bridge": {}, "state": "absent"}])",
                  R"([{"name": "main", "multus": {"networkName": "m", "default": true}}])"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].state: \"main\" interface's state \"absent\" is not "
            "supported on default networks\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
