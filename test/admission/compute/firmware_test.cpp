// Tests of the bootloader and Secure Boot rules (vmi-create-admitter.go validateBootloader and
// validateDomainSpec): EFI and BIOS are exclusive; EFI Secure Boot (on unless secureBoot: false)
// needs SMM enabled, unless the VM uses TDX.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view domain, std::string_view path = "spec") {
  return describe(validate_firmware(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath(std::string(path))));
}

constexpr std::string_view smm_required =
    "FieldValueInvalid spec.domain: spec.domain has EFI SecureBoot enabled. SecureBoot requires SMM, which is "
    "currently "
    "disabled.\n";

TEST(ValidationFirmware, BiosOrEfiAlone) {
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"bios": {}}}})"), "");
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {"secureBoot": false}}}})"), "");
  EXPECT_EQ(check("{}"), "");
  EXPECT_EQ(check(R"({"firmware": {"uuid": "x"}})"), "");
}

TEST(ValidationFirmware, EfiAndBiosAreExclusive) {
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"bios": {}, "efi": {"secureBoot": false}}}})", "spec.template.spec"),
            "FieldValueInvalid spec.template.spec.domain.firmware.bootloader: spec.template.spec.domain.firmware."
            "bootloader has both EFI and BIOS configured, but they are mutually exclusive.\n");
}

TEST(ValidationFirmware, SecureBootRequiresSmm) {
  // secureBoot defaults to true when unset.
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {}}}})"), smm_required);
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {"secureBoot": true}}}})"), smm_required);
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {"secureBoot": true}}}, "features": {}})"), smm_required);
}

TEST(ValidationFirmware, DisabledSmmStillFails) {
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {}}}, "features": {"smm": {"enabled": false}}})"),
            smm_required);
}

TEST(ValidationFirmware, EnabledSmmSatisfiesSecureBoot) {
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {}}}, "features": {"smm": {}}})"), "");
  EXPECT_EQ(
      check(R"({"firmware": {"bootloader": {"efi": {"secureBoot": true}}}, "features": {"smm": {"enabled": true}}})"),
      "");
}

TEST(ValidationFirmware, TdxIsExempt) {
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {}}}, "launchSecurity": {"tdx": {}}})"), "");
  // Other launch security types are not.
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"efi": {}}}, "launchSecurity": {"sev": {}}})"), smm_required);
}

TEST(ValidationFirmware, BothRulesAtOnce) {
  EXPECT_EQ(check(R"({"firmware": {"bootloader": {"bios": {}, "efi": {}}}})"),
            "FieldValueInvalid spec.domain.firmware.bootloader: spec.domain.firmware.bootloader has both EFI and BIOS "
            "configured, but they are mutually exclusive.\n" +
                std::string(smm_required));
}

}  // namespace
}  // namespace vmgate::admission::validation
