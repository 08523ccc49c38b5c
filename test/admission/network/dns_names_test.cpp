// Tests of the hostname and subdomain rules (vmi-create-admitter.go, apimachinery IsDNS1123Label and
// IsDNS1123Subdomain as vendored by KubeVirt): all errors listed, joined by ", ".
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view field, const std::string& value, std::string_view path = "spec") {
  return describe(
      validate_dns_names(parse("{\"" + std::string(field) + "\": \"" + value + "\"}"), FieldPath(std::string(path))));
}

constexpr std::string_view label_regex_error =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr std::string_view subdomain_regex_error =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

TEST(ValidationDnsNames, ValidNamesPass) {
  EXPECT_EQ(check("hostname", "my-vm-1"), "");
  EXPECT_EQ(check("hostname", "1"), "");
  EXPECT_EQ(check("hostname", std::string(63, 'a')), "");
  EXPECT_EQ(check("subdomain", "my.sub-domain.example"), "");
  EXPECT_EQ(check("subdomain", "a"), "");
  EXPECT_EQ(check("hostname", ""), "");
  EXPECT_TRUE(validate_dns_names(parse("{}"), FieldPath("spec")).empty());
}

TEST(ValidationDnsNames, HostnameWithUpperCase) {
  EXPECT_EQ(check("hostname", "My-VM"),
            "FieldValueInvalid spec.hostname: spec.hostname does not conform to the kubernetes DNS_LABEL rules : " +
                std::string(label_regex_error) + "\n");
}

TEST(ValidationDnsNames, HostnameWithDotsSaysSo) {
  // IsDNS1123Label: a valid subdomain that is not a label "must not contain dots".
  EXPECT_EQ(check("hostname", "my.vm", "spec.template.spec"),
            "FieldValueInvalid spec.template.spec.hostname: spec.template.spec.hostname does not conform to the "
            "kubernetes DNS_LABEL rules : must not contain dots\n");
}

TEST(ValidationDnsNames, LongHostnameListsEveryError) {
  EXPECT_EQ(
      check("hostname", std::string(64, 'a')),
      "FieldValueInvalid spec.hostname: spec.hostname does not conform to the kubernetes DNS_LABEL rules : must be "
      "no more than 63 characters\n");
  EXPECT_EQ(
      check("hostname", std::string(64, 'a') + "-"),
      "FieldValueInvalid spec.hostname: spec.hostname does not conform to the kubernetes DNS_LABEL rules : must be "
      "no more than 63 characters, " +
          std::string(label_regex_error) + "\n");
}

TEST(ValidationDnsNames, Subdomain) {
  EXPECT_EQ(
      check("subdomain", "-bad.example"),
      "FieldValueInvalid spec.subdomain: spec.subdomain does not conform to the kubernetes DNS_SUBDOMAIN rules : " +
          std::string(subdomain_regex_error) + "\n");
  EXPECT_EQ(
      check("subdomain", "a..b"),
      "FieldValueInvalid spec.subdomain: spec.subdomain does not conform to the kubernetes DNS_SUBDOMAIN rules : " +
          std::string(subdomain_regex_error) + "\n");
}

TEST(ValidationDnsNames, SubdomainLabelsHaveNoLengthLimitOfTheirOwn) {
  // The subdomain regexp has no per-label limit; only the 253-character total counts.
  EXPECT_EQ(check("subdomain", std::string(70, 'a') + ".example"), "");
  const std::string long_name = std::string(251, 'a') + ".bc";
  EXPECT_EQ(check("subdomain", long_name),
            "FieldValueInvalid spec.subdomain: spec.subdomain does not conform to the kubernetes DNS_SUBDOMAIN rules : "
            "must be no more than 253 characters\n");
}

TEST(ValidationDnsNames, BothFieldsAreChecked) {
  EXPECT_EQ(
      describe(validate_dns_names(parse(R"({"hostname": "a_b", "subdomain": "B"})"), FieldPath("spec"))),
      "FieldValueInvalid spec.hostname: spec.hostname does not conform to the kubernetes DNS_LABEL rules : " +
          std::string(label_regex_error) + "\n" +
          "FieldValueInvalid spec.subdomain: spec.subdomain does not conform to the kubernetes DNS_SUBDOMAIN rules "
          ": " +
          std::string(subdomain_regex_error) + "\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
