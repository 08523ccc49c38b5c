// Tests of pkg/virt-api/webhooks/hyperv.go ValidateVirtualMachineInstanceHyperv as the VMI create
// admitter calls it (its dependency messages carry a doubled path).
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view domain) {
  return describe(validate_hyperv(parse(R"({"domain": )" + std::string(domain) + "}")));
}

TEST(ValidationHyperv, RequirementsDisabledByTheUser) {
  EXPECT_EQ(check(R"({"features": {"hyperv": {"synic": {"enabled": true}, "vpindex": {"enabled": true}}}})"), "");
  EXPECT_EQ(check(R"({"features": {"hyperv": {"synic": {"enabled": true}, "vpindex": {"enabled": false}}}})"),
            "FieldValueInvalid spec.domain.features.hyperv.domain.features.hyperv.synic: "
            "'spec.domain.features.hyperv.domain.features.hyperv.synic' requires "
            "'spec.domain.features.hyperv.domain.features.hyperv.vpindex', which was disabled.\n");
  EXPECT_EQ(check(R"({"features": {"hyperv": {"synic": {"enabled": false}}}})"), "");
}

TEST(ValidationHyperv, EvmcsNeedsVmxRequired) {
  EXPECT_EQ(check(R"({"features": {"hyperv": {"evmcs": {"enabled": true}, "vapic": {"enabled": true}}}})"),
            "FieldValueRequired spec.domain.cpu.features: vmx cpu feature is required when evmcs is set\n");
  EXPECT_EQ(check(R"({"cpu": {"features": [{"name": "vmx", "policy": "optional"}]},
                      "features": {"hyperv": {"evmcs": {}, "vapic": {"enabled": true}}}})"),
            "FieldValueInvalid spec.domain.cpu.features[0].policy: vmx cpu feature has to be set to require policy\n");
  EXPECT_EQ(check(R"({"cpu": {"features": [{"name": "vmx", "policy": "require"}]},
                      "features": {"hyperv": {"evmcs": {}, "vapic": {"enabled": true}}}})"),
            "");
  EXPECT_EQ(check(R"({"features": {"hyperv": {"evmcs": {"enabled": false}}}})"), "");
}

TEST(ValidationHyperv, HypervOrPassthrough) {
  EXPECT_EQ(check(R"({"features": {"hyperv": {}, "hypervPassthrough": {"enabled": true}}})"),
            "FieldValueInvalid spec.domain.features.hyperv: Cannot explicitly set hyperV features if "
            "HypervPassthrough is being used. Please use either HyperV or HypervPassthrough.\n");
  EXPECT_EQ(check(R"({"features": {"hypervPassthrough": {"enabled": true}}})"), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
