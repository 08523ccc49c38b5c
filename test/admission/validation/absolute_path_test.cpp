// Tests of pkg/storage/admitters/disks.go ValidatePath.
#include "vmgate/admission/validation/absolute_path.hpp"

#include <gtest/gtest.h>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;

std::string check(std::string_view value) {
  return describe(validate_absolute_path(FieldPath("spec.x"), value));
}

TEST(ValidationAbsolutePath, AbsoluteWithoutRelativeComponents) {
  EXPECT_EQ(check("/boot/vmlinuz"), "");
  EXPECT_EQ(check("/boot/"), "");  // one trailing slash is trimmed
  EXPECT_EQ(check("/"), "FieldValueInvalid spec.x: spec.x must not point to root\n");
  const std::string relative =
      "FieldValueInvalid spec.x: spec.x must be an absolute path to a file without relative components\n";
  EXPECT_EQ(check("boot/vmlinuz"), relative);
  EXPECT_EQ(check("/boot/../vmlinuz"), relative);
  EXPECT_EQ(check("/boot/./vmlinuz"), relative);
  EXPECT_EQ(check("/boot//vmlinuz"), relative);
  EXPECT_EQ(check("/boot//"), relative);
}

}  // namespace
}  // namespace vmgate::admission::validation
