// Tests of pkg/network/admitter/binding.go validateInterfaceBinding and passt.go.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view interfaces, std::string_view networks, const ClusterConfig& config = {}) {
  return describe(
      validate_interface_bindings(parse(R"({"domain": {"devices": {"interfaces": )" + std::string(interfaces) +
                                        R"(}}, "networks": )" + std::string(networks) + "}"),
                                  FieldPath("spec"), config));
}

constexpr std::string_view pod = R"([{"name": "default", "pod": {}}])";
constexpr std::string_view multus = R"([{"name": "default", "multus": {"networkName": "n"}}])";

TEST(ValidationInterfaceBindings, ExactlyOneBinding) {
  EXPECT_EQ(check(R"([{"name": "default", "masquerade": {}}])", pod), "");
  EXPECT_EQ(check(R"([{"name": "default", "binding": {"name": "plugin"}}])", pod), "");
  EXPECT_EQ(check(R"([{"name": "default"}])", pod),
            "FieldValueInvalid spec.domain.devices.interfaces[0]: logical default interface must have exactly one "
            "binding method or binding plugin\n");
  EXPECT_EQ(check(R"([{"name": "default", "bridge": {}, "masquerade": {}}])", pod),
            "FieldValueInvalid spec.domain.devices.interfaces[0]: logical default interface must have exactly one "
            "binding method or binding plugin\n");
}

TEST(ValidationInterfaceBindings, MasqueradeAndPasstOnThePodNetworkOnly) {
  EXPECT_EQ(check(R"([{"name": "default", "masquerade": {}, "macAddress": "02:00:00:00:00:00"}])", multus),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: Masquerade interface only implemented with pod "
            "network\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].macAddress: The requested MAC address is reserved for "
            "the in-pod bridge. Please choose another one.\n");
  EXPECT_EQ(check(R"([{"name": "default", "passtBinding": {}}])", pod), "");  // PasstBinding is Beta
  EXPECT_EQ(check(R"([{"name": "default", "passtBinding": {}}])", multus),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: PasstBinding interface only implemented with "
            "pod network\n");
}

// v1.7.0's passt.go and macvtap.go: binding methods behind the Passt and Macvtap gates
// (discontinued, but a gate the CR lists is on), passt on the pod network, macvtap on Multus.
TEST(ValidationInterfaceBindings, AtV17PasstAndMacvtapAreGatedBindingMethods) {
  ClusterConfig v17;
  v17.release = Release::v1_7;
  EXPECT_EQ(check(R"([{"name": "default", "passt": {}}])", multus, v17),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: Passt feature gate is not enabled\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: Passt interface only implemented with pod "
            "network\n");
  EXPECT_EQ(check(R"([{"name": "default", "macvtap": {}}])", pod, v17),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: Macvtap feature gate is not enabled\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: Macvtap interface only implemented with Multus "
            "network\n");
  v17.feature_gates = {"Passt", "Macvtap"};
  EXPECT_EQ(check(R"([{"name": "default", "passt": {}}])", pod, v17), "");
  EXPECT_EQ(check(R"([{"name": "default", "macvtap": {}}])", multus, v17), "");
  // A binding method: no "exactly one" cause at v1.7, but one beside a plugin is refused.
  EXPECT_EQ(check(R"([{"name": "default", "passt": {}, "binding": {"name": "p"}}])", pod, v17),
            "FieldValueInvalid spec.domain.devices.interfaces[0].binding: logical default interface cannot have both "
            "binding plugin and interface binding method\n");
}

TEST(ValidationInterfaceBindings, BridgeOnThePodNetworkWhenPermitted) {
  EXPECT_EQ(check(R"([{"name": "default", "bridge": {}}])", pod), "");
  ClusterConfig refused;
  refused.permit_bridge_interface_on_pod_network = false;
  EXPECT_EQ(check(R"([{"name": "default", "bridge": {}}])", pod, refused),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: Bridge on pod network configuration is not "
            "enabled under kubevirt-config\n");
  EXPECT_EQ(check(R"([{"name": "default", "bridge": {}}])", multus, refused), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
