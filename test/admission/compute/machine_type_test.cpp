// Tests of validateEmulatedMachine (vmi-create-admitter.go): the machine type must match one of the
// architecture's emulated-machine globs (filepath.Match), else
// "<path>.domain.machine.type is not supported: %s (allowed values: %v)".
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view arch, std::string_view machine, const ClusterConfig& config = ClusterConfig{},
                  std::string_view path = "spec") {
  return describe(
      validate_machine_type(parse(R"({"architecture": ")" + std::string(arch) +
                                  R"(", "domain": {"machine": {"type": ")" + std::string(machine) + "\"}}}"),
                            FieldPath(std::string(path)), config));
}

TEST(ValidationMachineType, Amd64AcceptsQ35Variants) {
  for (std::string_view machine : {"q35", "pc-q35-rhel8.6.0", "pc-q35-3.0", "q35-anything"}) {
    EXPECT_EQ(check("amd64", machine), "") << machine;
  }
  EXPECT_EQ(check("", "q35"), "");
}

TEST(ValidationMachineType, Amd64RejectsI440fx) {
  EXPECT_EQ(check("amd64", "pc-i440fx-2.12"),
            "FieldValueInvalid spec.domain.machine.type: spec.domain.machine.type is not supported: pc-i440fx-2.12 "
            "(allowed values: [q35* pc-q35*])\n");
  EXPECT_EQ(check("amd64", "pc", ClusterConfig{}, "spec.template.spec"),
            "FieldValueInvalid spec.template.spec.domain.machine.type: spec.template.spec.domain.machine.type is not "
            "supported: pc (allowed values: [q35* pc-q35*])\n");
}

TEST(ValidationMachineType, OtherArchitectures) {
  EXPECT_EQ(check("arm64", "virt"), "");
  EXPECT_EQ(check("arm64", "virt-rhel9.2.0"), "");
  EXPECT_EQ(
      check("arm64", "q35"),
      "FieldValueInvalid spec.domain.machine.type: spec.domain.machine.type is not supported: q35 (allowed values: "
      "[virt*])\n");
  EXPECT_EQ(check("s390x", "s390-ccw-virtio-rhel9.4.0"), "");
  EXPECT_EQ(
      check("s390x", "virt"),
      "FieldValueInvalid spec.domain.machine.type: spec.domain.machine.type is not supported: virt (allowed values: "
      "[s390-ccw-virtio*])\n");
  // Architectures other than arm64 and s390x read the amd64 list.
  EXPECT_EQ(check("ppc64le", "q35"), "");
}

TEST(ValidationMachineType, ClusterEmulatedMachines) {
  ClusterConfig config;
  config.arch_emulated_machines["amd64"] = {"pc-i440fx*", "q35"};
  EXPECT_EQ(check("amd64", "pc-i440fx-2.12", config), "");
  EXPECT_EQ(check("", "pc-i440fx-2.12", config), "");
  EXPECT_EQ(
      check("amd64", "pc-q35-3.0", config),
      "FieldValueInvalid spec.domain.machine.type: spec.domain.machine.type is not supported: pc-q35-3.0 (allowed "
      "values: [pc-i440fx* q35])\n");
  config.arch_emulated_machines["amd64"] = {};
  EXPECT_EQ(
      check("amd64", "q35", config),
      "FieldValueInvalid spec.domain.machine.type: spec.domain.machine.type is not supported: q35 (allowed values: "
      "[])\n");
}

TEST(ValidationMachineType, GlobsFollowFilepathMatch) {
  ClusterConfig config;
  config.arch_emulated_machines["amd64"] = {"pc-q35-?.0", "q35-[0-9]*"};
  EXPECT_EQ(check("amd64", "pc-q35-3.0", config), "");
  EXPECT_EQ(check("amd64", "q35-9.2", config), "");
  EXPECT_NE(check("amd64", "pc-q35-10.0", config), "");
}

TEST(ValidationMachineType, NoMachineTypeNothingToCheck) {
  EXPECT_TRUE(validate_machine_type(parse("{}"), FieldPath("spec"), ClusterConfig{}).empty());
  EXPECT_EQ(check("amd64", ""), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
