// Tests of vmi-create-admitter.go validateLaunchSecurity and webhooks/amd64.go
// ValidateLaunchSecurityAmd64 (WorkloadEncryptionSEV is Beta, so on; WorkloadEncryptionTDX is
// Alpha, so off unless listed).
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view spec, const ClusterConfig& config = {}) {
  return describe(validate_launch_security(parse(spec), FieldPath("spec"), config));
}

// KubeVirt names field.Child("launchSecurity") of the spec, not of its domain.
constexpr std::string_view field = "spec.launchSecurity: ";

std::string invalid(std::string_view message) {
  return "FieldValueInvalid " + std::string(field) + std::string(message) + "\n";
}

TEST(ValidationLaunchSecurity, SevWithUefiWithoutSecureBoot) {
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"sev": {}},
                      "firmware": {"bootloader": {"efi": {"secureBoot": false}}}}})"),
            "");
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"sev": {}}}})"),
            invalid("SEV requires OVMF (UEFI)"));
  // secureBoot is on unless set to false.
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"sev": {}},
                      "firmware": {"bootloader": {"efi": {}}}}})"),
            invalid("SEV does not work along with SecureBoot"));
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"snp": {}},
                      "firmware": {"bootloader": {"efi": {"secureBoot": false, "persistent": true}}}}})"),
            invalid("SNP does not work along with Persistent EFI variables"));
}

TEST(ValidationLaunchSecurity, OneTypeAndItsFeatureGate) {
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {}}})"),
            "FieldValueForbidden " + std::string(field) + "One and only one launchSecurity type can be set\n");
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"sev": {}, "tdx": {}}}})"),
            "FieldValueForbidden " + std::string(field) + "One and only one launchSecurity type can be set\n");
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"tdx": {}}}})"),
            invalid("WorkloadEncryptionTDX feature gate is not enabled in kubevirt-config"));
  ClusterConfig tdx;
  tdx.feature_gates.emplace_back("WorkloadEncryptionTDX");
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"tdx": {}}, "features": {"smm": {}},
                      "firmware": {"bootloader": {"efi": {}}}}})",
                  tdx),
            invalid("TDX does not work along with SMM"));
}

TEST(ValidationLaunchSecurity, AttestationAndBootableNics) {
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {"launchSecurity": {"sev": {"attestation": {}}},
                      "firmware": {"bootloader": {"efi": {"secureBoot": false}}},
                      "devices": {"interfaces": [{"name": "default", "bootOrder": 1}]}}})"),
            invalid("SEV attestation requires VMI StartStrategy 'Paused'") +
                invalid("SEV does not work with bootable NICs: default"));
  EXPECT_EQ(check(R"({"architecture": "amd64", "startStrategy": "Paused", "domain": {"launchSecurity": {"sev":
                      {"attestation": {}}}, "firmware": {"bootloader": {"efi": {"secureBoot": false}}}}})"),
            "");
}

TEST(ValidationLaunchSecurity, PerArchitecture) {
  EXPECT_EQ(check(R"({"architecture": "s390x", "domain": {"launchSecurity": {}}})"), "");
  EXPECT_EQ(check(R"({"architecture": "arm64", "domain": {"launchSecurity": {"sev": {}}}})"),
            "FieldValueInvalid spec.architecture: No launchSecurity support for architecture: arm64\n");
  EXPECT_EQ(check(R"({"architecture": "amd64", "domain": {}})"), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
