// Tests of validate_quantities: a quantity the apiserver could not decode is a cause naming its
// field (in apimachinery's words), never a silent default.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view domain, std::string_view path = "spec") {
  return describe(
      validate_quantities(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath(std::string(path))));
}

TEST(ValidationQuantities, WellFormedQuantitiesPass) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "1Gi", "cpu": "500m", "ephemeral-storage": "1e3"},
                                    "limits": {"memory": 1073741824, "cpu": 2.5}},
                      "memory": {"guest": "1024Mi", "maxGuest": "+4Gi"}})"),
            "");
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": null}}, "memory": {"guest": null}})"), "");
  EXPECT_EQ(check("{}"), "");
}

TEST(ValidationQuantities, BadSyntaxNamesTheField) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "1Gb"}}})"),
            "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '1Gb': "
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n");
  EXPECT_EQ(
      check(R"({"resources": {"limits": {"cpu": "1mi"}}})", "spec.template.spec"),
      "FieldValueInvalid spec.template.spec.domain.resources.limits.cpu: spec.template.spec.domain.resources.limits."
      "cpu '1mi': unable to parse quantity's suffix\n");
}

TEST(ValidationQuantities, EveryBadFieldIsReported) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "lots"}, "limits": {"memory": true}},
                      "memory": {"guest": "1 Gi", "maxGuest": "."}})"),
            "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory 'lots': "
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"
            "FieldValueInvalid spec.domain.resources.limits.memory: spec.domain.resources.limits.memory 'true': "
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"
            "FieldValueInvalid spec.domain.memory.guest: spec.domain.memory.guest '1 Gi': quantities must match the "
            "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"
            "FieldValueInvalid spec.domain.memory.maxGuest: spec.domain.memory.maxGuest '.': unable to parse numeric "
            "part of quantity\n");
}

TEST(ValidationQuantities, HugepagesPageSizeIsLeftToTheHugepagesRule) {
  EXPECT_EQ(check(R"({"memory": {"hugepages": {"pageSize": "2ab"}}})"), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
