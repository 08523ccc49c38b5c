// Tests of vmi-create-admitter.go validateServiceAccountName.
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
  return describe(validate_service_account_name(parse(spec), FieldPath("spec")));
}

TEST(ValidationServiceAccountName, MatchesTheServiceAccountVolume) {
  EXPECT_EQ(
      check(
          R"({"serviceAccountName": "sa", "volumes": [{"name": "v", "serviceAccount": {"serviceAccountName": "sa"}}]})"),
      "");
  EXPECT_EQ(check(R"({"volumes": [{"name": "v", "serviceAccount": {"serviceAccountName": "other"}}]})"), "");
  EXPECT_EQ(check(R"({"serviceAccountName": "sa", "volumes": [
                      {"name": "v", "serviceAccount": {"serviceAccountName": "one"}},
                      {"name": "w", "serviceAccount": {"serviceAccountName": "two"}}]})"),
            "FieldValueInvalid spec.serviceAccountName: spec.serviceAccountName \"sa\" and serviceAccount volume "
            "\"one\" must reference the same service account\n");
}

TEST(ValidationServiceAccountName, IsADnsSubdomain) {
  EXPECT_EQ(check(R"({"serviceAccountName": "Bad_Name"})"),
            "FieldValueInvalid spec.serviceAccountName: spec.serviceAccountName is not a valid service account name: "
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
