// Tests of vmi-create-admitter.go validateKernelBoot.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view kernel_boot) {
  return describe(validate_kernel_boot(
      parse(R"({"domain": {"firmware": {"kernelBoot": )" + std::string(kernel_boot) + "}}}"), FieldPath("spec")));
}

TEST(ValidationKernelBoot, ArgumentsNeedAContainer) {
  EXPECT_EQ(check(R"({})"), "");
  EXPECT_EQ(check(R"({"kernelArgs": "console=ttyS0"})"),
            "FieldValueInvalid spec.domain.firmware.kernelBoot.kernelArgs: kernel arguments cannot be provided "
            "without an external kernel\n");
}

TEST(ValidationKernelBoot, ContainerImageAndPaths) {
  EXPECT_EQ(check(R"({"kernelArgs": "console=ttyS0", "container": {"image": "k", "kernelPath": "/boot/vmlinuz"}})"),
            "");
  EXPECT_EQ(check(R"({"container": {"initrdPath": "/boot/initrd"}})"),
            "FieldValueRequired spec.domain.firmware.kernelBoot.container.image: "
            "spec.domain.firmware.kernelBoot.container must be defined with an image\n");
  EXPECT_EQ(check(R"({"container": {"image": "k"}})"),
            "FieldValueRequired spec.domain.firmware.kernelBoot.container: spec.domain.firmware.kernelBoot.container "
            "must be defined with at least one of the following: kernelPath, initrdPath\n");
  EXPECT_EQ(check(R"({"container": {"image": "k", "kernelPath": "boot/vmlinuz", "initrdPath": "/"}})"),
            "FieldValueInvalid spec.domain.firmware.kernelBoot.container.kernelPath: "
            "spec.domain.firmware.kernelBoot.container.kernelPath must be an absolute path to a file without "
            "relative components\n"
            "FieldValueInvalid spec.domain.firmware.kernelBoot.container.initrdPath: "
            "spec.domain.firmware.kernelBoot.container.initrdPath must not point to root\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
