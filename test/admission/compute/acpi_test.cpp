// Tests of vmi-create-admitter.go validateFirmwareACPI (fields under "spec.acpi", as KubeVirt names them).
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view acpi, std::string_view volumes = "[]") {
  return describe(validate_firmware_acpi(parse(R"({"domain": {"firmware": {"acpi": )" + std::string(acpi) +
                                               R"(}}, "volumes": )" + std::string(volumes) + "}"),
                                         FieldPath("spec")));
}

TEST(ValidationAcpi, NeedsAReference) {
  EXPECT_EQ(describe(validate_firmware_acpi(parse(R"({"domain": {"firmware": {}}})"), FieldPath("spec"))), "");
  EXPECT_EQ(check("{}"), "FieldValueInvalid spec.acpi: ACPI was set but no SLIC nor MSDM volume reference was set\n");
}

TEST(ValidationAcpi, ReferencesNameSecretVolumes) {
  EXPECT_EQ(check(R"({"slicNameRef": "slic"})", R"([{"name": "slic", "secret": {"secretName": "s"}}])"), "");
  EXPECT_EQ(
      check(R"({"slicNameRef": "slic", "msdmNameRef": "msdm"})", R"([{"name": "slic", "configMap": {"name": "c"}}])"),
      "FieldValueInvalid spec.acpi.slicNameRef: spec.acpi refers to Volume of unsupported type.\n"
      "FieldValueInvalid spec.acpi.msdmNameRef: spec.acpi does not have a matching Volume.\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
