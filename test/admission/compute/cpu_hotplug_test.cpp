// Tests of vmi-create-admitter.go validateCPUHotplug.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

TEST(ValidationCpuHotplug, SocketsUpToMaxSockets) {
  const auto check = [](std::string_view cpu) {
    return describe(validate_cpu_hotplug(parse(R"({"domain": {"cpu": )" + std::string(cpu) + "}}"), FieldPath("spec")));
  };
  EXPECT_EQ(check(R"({"sockets": 2, "maxSockets": 2})"), "");
  EXPECT_EQ(check(R"({"sockets": 8})"), "");
  EXPECT_EQ(check(R"({"sockets": 3, "maxSockets": 2})"),
            "FieldValueInvalid spec.domain.cpu.sockets: Number of sockets in CPU topology is greater than the maximum "
            "sockets allowed\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
