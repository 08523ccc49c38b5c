// Tests of vmi-create-admitter.go validateMDEVRamFB (field "spec.GPUs", message with KubeVirt's trailing space).
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view gpus) {
  return describe(validate_gpu_displays(parse(R"({"domain": {"devices": {"gpus": )" + std::string(gpus) + "}}}"),
                                        FieldPath("spec")));
}

TEST(ValidationGpuDisplays, AtMostOneRamfbDisplay) {
  const std::string display = R"({"name": "g", "deviceName": "d", "virtualGPUOptions": {"display": {}}})";
  EXPECT_EQ(check("[" + display + "]"), "");
  EXPECT_EQ(check("[" + display + ", " + display + "]"),
            "FieldValueInvalid spec.GPUs: configuring multiple displays with ramfb is not valid \n");
  EXPECT_EQ(
      check("[" + display +
            R"(, {"name": "h", "deviceName": "d", "virtualGPUOptions": {"display": {"ramFB": {"enabled": false}}}},
                      {"name": "i", "deviceName": "d", "virtualGPUOptions": {"display": {"enabled": false}}},
                      {"name": "j", "deviceName": "d"}])"),
      "");
}

}  // namespace
}  // namespace vmgate::admission::validation
