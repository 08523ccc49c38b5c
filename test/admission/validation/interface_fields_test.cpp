// Tests of pkg/network/admitter/netiface.go validateInterfacesFields.
#include <gtest/gtest.h>

#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view interface) {
  return describe(
      validate_interface_fields(parse(R"({"domain": {"devices": {"interfaces": [)" + std::string(interface) +
                                      R"(]}}, "networks": [{"name": "default", "pod": {}}]})"),
                                FieldPath("spec")));
}

TEST(ValidationInterfaceFields, NameAndModel) {
  EXPECT_EQ(check(R"({"name": "default", "model": "e1000e"})"), "");
  EXPECT_EQ(check(R"({"name": "eth0.100", "model": "virtio-net"})"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: Network interface name can only contain "
            "alphabetical characters, numbers, dashes (-) or underscores (_)\n"
            "FieldValueNotSupported spec.domain.devices.interfaces[0].model: interface "
            "spec.domain.devices.interfaces[0].name uses model virtio-net that is not supported.\n");
}

TEST(ValidationInterfaceFields, MacAddressAsGoParsesIt) {
  for (const char* mac : {"de:ad:00:00:be:af", "DE-AD-00-00-BE-AF", "dead.0000.beaf"}) {
    EXPECT_EQ(check(std::string(R"({"name": "default", "macAddress": ")") + mac + "\"}"), "") << mac;
  }
  EXPECT_EQ(check(R"({"name": "default", "macAddress": "de:ad:00:00:be:af:00"})"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].macAddress: interface "
            "spec.domain.devices.interfaces[0].name has malformed MAC address (de:ad:00:00:be:af:00).\n");
  EXPECT_EQ(check(R"({"name": "default", "macAddress": "02:00:5e:10:00:00:00:01"})"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].macAddress: interface "
            "spec.domain.devices.interfaces[0].name has too long MAC address (02:00:5e:10:00:00:00:01).\n");
  EXPECT_EQ(check(R"({"name": "default", "macAddress": "de:ad-00:00:be:af"})").empty(), false);
}

TEST(ValidationInterfaceFields, ForwardedPortsOnThePodNetwork) {
  EXPECT_EQ(check(R"({"name": "default", "ports": [{"name": "http", "port": 80}, {"port": 53, "protocol": "UDP"}]})"),
            "");
  EXPECT_EQ(check(R"({"name": "default", "ports": [{"name": "http", "port": 0}, {"name": "http", "port": 70000},
                      {"name": "HTTP_PORT", "port": 8080, "protocol": "tcp"}]})"),
            "FieldValueDuplicate spec.domain.devices.interfaces[0].ports[1].name: Duplicate name of the port: http\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].ports[2].name: Invalid name of the port: HTTP_PORT\n"
            "FieldValueRequired spec.domain.devices.interfaces[0].ports[0].port: Port field is mandatory.\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].ports[1].port: Port field must be in range 0 < x < "
            "65536.\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].ports[2].protocol: Unknown protocol, only TCP or UDP "
            "allowed\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
