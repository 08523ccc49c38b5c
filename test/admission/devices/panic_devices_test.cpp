// Tests of vmi-create-admitter.go validatePanicDevices.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

TEST(ValidationPanicDevices, Models) {
  const json::Document spec = parse(
      R"({"domain": {"devices": {"panicDevices": [{"model": "isa"}, {"model": "hyperv"}, {}, {"model": "pci"}]}}})");
  EXPECT_EQ(describe(validate_panic_devices(spec, FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.devices.panicDevices[3].model: invalid PanicDeviceModel(pci)\n");
}

TEST(ValidationPanicDevices, NoneOnS390x) {
  const json::Document spec = parse(R"({"architecture": "s390x", "domain": {"devices": {"panicDevices": [{}]}}})");
  EXPECT_EQ(describe(validate_panic_devices(spec, FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.devices.panicDevices: custom panic devices are not supported on s390x "
            "architecture\n");
  ClusterConfig s390x;
  s390x.default_architecture = "s390x";
  EXPECT_NE(describe(validate_panic_devices(parse(R"({"domain": {"devices": {"panicDevices": [{}]}}})"),
                                            FieldPath("spec"), s390x)),
            "");
  EXPECT_EQ(describe(validate_panic_devices(parse(R"({"domain": {"devices": {"panicDevices": []}}})"),
                                            FieldPath("spec"), s390x)),
            "");
}

// PanicDevices is Beta at v1.8: without the gate its cause alone, with it as at main.
TEST(ValidationPanicDevices, AtV18TheFeatureGateFirst) {
  ClusterConfig v18;
  v18.release = Release::v1_8;
  const json::Document spec = parse(R"({"domain": {"devices": {"panicDevices": [{"model": "pci"}]}}})");
  EXPECT_EQ(describe(validate_panic_devices(spec, FieldPath("spec"), v18)),
            "FieldValueInvalid spec.domain.devices.panicDevices: Panic Devices feature gate is not enabled in "
            "kubevirt-config\n");
  EXPECT_EQ(describe(validate_panic_devices(parse(R"({"domain": {"devices": {"panicDevices": []}}})"),
                                            FieldPath("spec"), v18)),
            "");
  v18.feature_gates = {"PanicDevices"};
  EXPECT_EQ(describe(validate_panic_devices(spec, FieldPath("spec"), v18)),
            "FieldValueInvalid spec.domain.devices.panicDevices[0].model: invalid PanicDeviceModel(pci)\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
