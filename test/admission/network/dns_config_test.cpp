// Tests of vmi-create-admitter.go validateDNSPolicy and validatePodDNSConfig (bare field names
// "nameservers", "searchDomains", "options", as KubeVirt reports them).
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view spec) {
  return describe(validate_dns(parse(spec), FieldPath("spec")));
}

TEST(ValidationDns, Policy) {
  EXPECT_EQ(check(R"({"dnsPolicy": "ClusterFirst"})"), "");
  EXPECT_EQ(check(R"({"dnsPolicy": "Sometimes"})"),
            "FieldValueNotSupported spec.dnsPolicy: DNSPolicy: Sometimes is not supported, valid values: "
            "[ClusterFirstWithHostNet ClusterFirst Default None ]\n");
}

TEST(ValidationDns, PolicyNoneNeedsNameservers) {
  EXPECT_EQ(check(R"({"dnsPolicy": "None"})"),
            "FieldValueRequired spec.dnsConfig: must provide `dnsConfig` when `dnsPolicy` is None\n");
  EXPECT_EQ(check(R"({"dnsPolicy": "None", "dnsConfig": {}})"),
            "FieldValueRequired nameservers: must provide at least one DNS nameserver when `dnsPolicy` is None\n");
  EXPECT_EQ(check(R"({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1", "2001:db8::1"]}})"), "");
}

TEST(ValidationDns, Nameservers) {
  EXPECT_EQ(check(R"({"dnsConfig": {"nameservers": ["1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4"]}})"),
            "FieldValueInvalid nameservers: must not have more than 3 nameservers: [1.1.1.1 1.1.1.2 1.1.1.3 "
            "1.1.1.4]\n");
  EXPECT_EQ(check(R"({"dnsConfig": {"nameservers": ["dns.example", "010.1.1.1", "::ffff:10.0.0.1"]}})"),
            "FieldValueInvalid nameservers: must be valid IP address: dns.example\n"
            "FieldValueInvalid nameservers: must be valid IP address: 010.1.1.1\n");
}

TEST(ValidationDns, SearchesAndOptions) {
  EXPECT_EQ(check(R"({"dnsConfig": {"searches": ["a", "b", "c", "d", "e", "f", "g"]}})"),
            "FieldValueInvalid searchDomains: must not have more than 6 search paths\n");
  const std::string long_domain(130, 'a');
  EXPECT_EQ(check(R"({"dnsConfig": {"searches": [")" + long_domain + "." + std::string(60, 'b') + R"(", ")" +
                  long_domain + R"("]}})"),
            "FieldValueInvalid searchDomains: must not have more than 256 characters (including spaces) in the "
            "search list\n");  // labels of 130 characters: the subdomain rule limits only the whole name
  EXPECT_EQ(check(R"({"dnsConfig": {"searches": ["Example.com"]}})"),
            "FieldValueInvalid searchDomains: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
            "regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n");
  EXPECT_EQ(check(R"({"dnsConfig": {"options": [{"name": "ndots", "value": "2"}, {"value": "1"}]}})"),
            "FieldValueInvalid options: Option.Name must not be empty\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
