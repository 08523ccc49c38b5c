// Tests of vmi-create-admitter.go validateRealtime: cpu.realtime needs dedicatedCpuPlacement and
// numa.guestMappingPassthrough.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view cpu, std::string_view path = "spec") {
  return describe(
      validate_realtime(parse(R"({"domain": {"cpu": )" + std::string(cpu) + "}}"), FieldPath(std::string(path))));
}

TEST(ValidationRealtime, NothingToCheckWithoutRealtime) {
  EXPECT_EQ(check(R"({"dedicatedCpuPlacement": false})"), "");
  EXPECT_EQ(describe(validate_realtime(parse("{}"), FieldPath("spec"))), "");
}

TEST(ValidationRealtime, DedicatedCpusAndGuestMappingPassthrough) {
  EXPECT_EQ(check(R"({"realtime": {}, "dedicatedCpuPlacement": true, "numa": {"guestMappingPassthrough": {}}})"), "");
  EXPECT_EQ(check(R"({"realtime": {}})", "spec.template.spec"),
            "FieldValueRequired spec.template.spec.domain.cpu.dedicatedCpuPlacement: "
            "spec.template.spec.domain.cpu.dedicatedCpuPlacement must be set to true when "
            "spec.template.spec.domain.cpu.realtime is used\n"
            "FieldValueRequired spec.template.spec.domain.cpu.numa.guestMappingPassthrough: "
            "spec.template.spec.domain.cpu.numa.guestMappingPassthrough must be defined when "
            "spec.template.spec.domain.cpu.realtime is used\n");
  EXPECT_EQ(check(R"({"realtime": {"mask": "0"}, "dedicatedCpuPlacement": true, "numa": {}})"),
            "FieldValueRequired spec.domain.cpu.numa.guestMappingPassthrough: spec.domain.cpu.numa."
            "guestMappingPassthrough must be defined when spec.domain.cpu.realtime is used\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
