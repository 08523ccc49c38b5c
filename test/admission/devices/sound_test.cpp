// Tests of vmi-create-admitter.go validateSoundDevices (its causes name the field "Sound").
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view sound) {
  return describe(
      validate_sound(parse(R"({"domain": {"devices": {"sound": )" + std::string(sound) + "}}}"), FieldPath("spec")));
}

TEST(ValidationSound, ModelAndName) {
  EXPECT_EQ(check(R"({"name": "audio"})"), "");
  EXPECT_EQ(check(R"({"name": "audio", "model": "ac97"})"), "");
  EXPECT_EQ(check(R"({"name": "audio", "model": "sb16"})"),
            "FieldValueInvalid spec.Sound: Sound device type is not supported. Options: 'ich9' or 'ac97'\n");
  EXPECT_EQ(check(R"({"model": "ich9"})"), "FieldValueInvalid spec.Sound: Sound device requires a name field.\n");
  EXPECT_EQ(describe(validate_sound(parse(R"({"domain": {"devices": {}}})"), FieldPath("spec"))), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
