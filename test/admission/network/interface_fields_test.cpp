// Tests of pkg/network/admitter/netiface.go validateInterfacesFields.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view interface, const ClusterConfig& config = ClusterConfig{}) {
  return describe(validate_interface_fields(
      parse(R"({"domain": {"devices": {"interfaces": [)" + std::string(interface) +
            R"(]}}, "networks": [{"name": "default", "pod": {}}, {"name": "blue", "multus": {"networkName": "b"}}]})"),
      FieldPath("spec"), config));
}

ClusterConfig port_ranges_enabled() {
  ClusterConfig config;
  config.feature_gates = {"PortRangesSpec"};
  return config;
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

// netiface.go at v1.8.2: the causes name the port item, and 65536 passes the range check.
TEST(ValidationInterfaceFields, ForwardedPortsAtV18) {
  ClusterConfig v18;
  v18.release = Release::v1_8;
  EXPECT_EQ(check(R"({"name": "default", "ports": [{"port": 0}, {"port": 70000}, {"port": 65536}]})", v18),
            "FieldValueRequired spec.domain.devices.interfaces[0].ports[0]: Port field is mandatory.\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].ports[1]: Port field must be in range 0 < x < "
            "65536.\n");
  EXPECT_EQ(check(R"({"name": "default", "ports": [{"port": 65536}]})"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].ports[0].port: Port field must be in range 0 < x < "
            "65536.\n");
}

TEST(ValidationInterfaceFields, PciAddress) {
  EXPECT_EQ(check(R"({"name": "default", "masquerade": {}, "pciAddress": "0000:81:00.1"})"), "");
  EXPECT_EQ(check(R"({"name": "default", "masquerade": {}, "pciAddress": "81:00.1"})"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].pciAddress: interface "
            "spec.domain.devices.interfaces[0].name has malformed PCI address (81:00.1).\n");
}

TEST(ValidationInterfaceFields, PortRangesNeedTheirGate) {
  const std::string_view iface =
      R"({"name": "default", "masquerade": {}, "portRanges": [{"protocol": "TCP", "start": 80, "end": 90}]})";
  EXPECT_EQ(check(iface),
            "FieldValueInvalid spec.domain.devices.interfaces[0].name: portRanges is specified on "
            "interface but the PortRangesSpec feature gate is not enabled\n");
  EXPECT_EQ(check(iface, port_ranges_enabled()), "");
  // Off the pod network the gate is all that is checked.
  EXPECT_EQ(check(R"({"name": "blue", "bridge": {}, "portRanges": [{"protocol": "SCTP"}]})", port_ranges_enabled()),
            "");
}

TEST(ValidationInterfaceFields, PortRangesOnThePodNetwork) {
  EXPECT_EQ(
      check(R"({"name": "default", "bridge": {}, "ports": [{"port": 80}], "portRanges": []})", port_ranges_enabled()),
      "FieldValueInvalid spec.domain.devices.interfaces[0].name: Cannot define both ports and portRanges on "
      "interface\n"
      "FieldValueInvalid spec.domain.devices.interfaces[0].name: portRanges are only supported on masquerade "
      "interfaces\n");
  EXPECT_EQ(check(R"({"name": "default", "masquerade": {}, "portRanges": [
                      {"protocol": "SCTP", "start": 1, "end": 2}, {"protocol": "TCP", "start": 0, "end": 2},
                      {"protocol": "TCP", "start": 1, "end": 65536}, {"protocol": "UDP", "start": 9, "end": 8},
                      {"protocol": "TCP", "start": 100, "end": 200}, {"protocol": "TCP", "start": 150, "end": 300},
                      {"protocol": "UDP", "start": 53, "end": 53}, {"protocol": "UDP", "start": 53, "end": 60}]})",
                  port_ranges_enabled()),
            "FieldValueInvalid spec.domain.devices.interfaces[0].portRanges[0].protocol: Unknown protocol, only TCP or "
            "UDP allowed\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].portRanges[1].start: Start must be a valid port "
            "number, 0 < x < 65536\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].portRanges[2].end: End must be a valid port number, "
            "0 < x < 65536\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].portRanges[3].start: Start must be less than or equal "
            "to end\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].portRanges: TCP portRanges [100-200] and [150-300] "
            "overlap\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].portRanges: UDP portRanges [53-53] and [53-60] "
            "overlap\n");
  std::string eleven;
  for (int i = 0; i < 11; ++i) {
    eleven += std::string(i == 0 ? "" : ", ") + R"({"protocol": "TCP", "start": )" + std::to_string(1000 + i) +
              R"(, "end": )" + std::to_string(1000 + i) + "}";
  }
  EXPECT_EQ(check(R"({"name": "default", "masquerade": {}, "portRanges": [)" + eleven + "]}", port_ranges_enabled()),
            "FieldValueInvalid spec.domain.devices.interfaces[0].portRanges: No more than 10 portRanges are allowed\n");
}

TEST(ValidationInterfaceFields, DhcpOptions) {
  EXPECT_EQ(
      check(R"({"name": "default", "masquerade": {}, "dhcpOptions": {"ntpServers": ["192.0.2.1", "::ffff:192.0.2.2"],
                      "privateOptions": [{"option": 240, "value": "x"}, {"option": 241, "value": "y"}]}})"),
      "");
  EXPECT_EQ(check(R"({"name": "default", "masquerade": {}, "dhcpOptions": {"ntpServers": ["2001:db8::1", "ntp.example"],
                      "privateOptions": [{"option": 240, "value": "x"}, {"option": 240, "value": "y"}, {"option": 12, "value": "z"}]}})"),
            "FieldValueInvalid spec: Found Duplicates: you have provided duplicate DHCPPrivateOptions\n"
            "FieldValueInvalid spec: provided DHCPPrivateOptions are out of range, must be in range 224 to 254\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].dhcpOptions.ntpServers[0]: NTP servers must be a list "
            "of valid IPv4 addresses.\n"
            "FieldValueInvalid spec.domain.devices.interfaces[0].dhcpOptions.ntpServers[1]: NTP servers must be a list "
            "of valid IPv4 addresses.\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
