// Tests of pkg/storage/admitters/disks.go ValidateContainerDisks / ValidatePath.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view disk_path) {
  return describe(
      validate_container_disks(parse(R"({"volumes": [{"name": "a", "containerDisk": {"image": "i", "path": ")" +
                                     std::string(disk_path) + "\"}}]}"),
                               FieldPath("spec")));
}

TEST(ValidationContainerDisks, AbsolutePathsWithoutRelativeComponents) {
  EXPECT_EQ(check("/disk/image.qcow2"), "");
  EXPECT_EQ(check("/disk/"), "");
  const std::string relative =
      "FieldValueInvalid spec.volumes[0].containerDisk: spec.volumes[0].containerDisk must be an absolute path to a "
      "file without relative components\n";
  for (const char* path : {"disk/image.qcow2", "/disk/../image", "/disk//image", "/disk/./image", "/disk//"}) {
    EXPECT_EQ(check(path), relative) << path;
  }
  EXPECT_EQ(check("/"),
            "FieldValueInvalid spec.volumes[0].containerDisk: spec.volumes[0].containerDisk must not "
            "point to root\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
