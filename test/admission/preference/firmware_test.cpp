// Tests of admission/src/preference/firmware.cpp (KubeVirt pkg/instancetype/preference/apply/
// firmware.go; cases from firmware_test.go, including bugs #10313 and #12985).
#include <gtest/gtest.h>

#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/admission/preference/apply.hpp"

namespace vmgate::admission::preference {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::json_equals;

// The bootloader after applying `preference` to a VMI spec.
json::Document bootloader_after(std::string_view preference, std::string_view vmi_spec) {
  const json::Document preference_doc = parse(preference);
  json::Document spec = parse(vmi_spec);
  apply_firmware(preference_doc, spec, spec.GetAllocator());
  json::Document out;
  const json::Value* bootloader = json::find_path(spec, {"domain", "firmware", "bootloader"});
  if (bootloader != nullptr) {
    out.CopyFrom(*bootloader, out.GetAllocator());
  }
  return out;
}

TEST(PreferenceFirmware, AppliesBiosAndBiosSerial) {
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredUseBios":true,"preferredUseBiosSerial":true,
                                               "preferredUseEfi":false,"preferredUseSecureBoot":false}})",
                                           R"({"domain":{}})"),
                          R"({"bios":{"useSerial":true}})"));
}

TEST(PreferenceFirmware, AppliesDeprecatedEfiAndSecureBoot) {
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredUseBios":false,"preferredUseBiosSerial":false,
                                               "preferredUseEfi":true,"preferredUseSecureBoot":true}})",
                                           R"({"domain":{}})"),
                          R"({"efi":{"secureBoot":true}})"));
}

TEST(PreferenceFirmware, DeprecatedEfiDoesNotReplaceUserBios) {  // bug #10313
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredUseEfi":true,"preferredUseSecureBoot":true}})",
                                           R"({"domain":{"firmware":{"bootloader":{"bios":{"useSerial":false}}}}})"),
                          R"({"bios":{"useSerial":false}})"));
}

TEST(PreferenceFirmware, BiosSerialDoesNotReplaceUserValue) {  // bug #10313
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredUseBios":true,"preferredUseBiosSerial":true}})",
                                           R"({"domain":{"firmware":{"bootloader":{"bios":{"useSerial":false}}}}})"),
                          R"({"bios":{"useSerial":false}})"));
}

TEST(PreferenceFirmware, BiosDoesNotReplaceUserEfi) {  // bug #10313
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredUseBios":true,"preferredUseBiosSerial":true}})",
                                           R"({"domain":{"firmware":{"bootloader":{"efi":{"secureBoot":false}}}}})"),
                          R"({"efi":{"secureBoot":false}})"));
}

TEST(PreferenceFirmware, DeprecatedSecureBootDoesNotReplaceUserValue) {  // bug #10313
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredUseEfi":true,"preferredUseSecureBoot":true}})",
                                           R"({"domain":{"firmware":{"bootloader":{"efi":{"secureBoot":false}}}}})"),
                          R"({"efi":{"secureBoot":false}})"));
}

TEST(PreferenceFirmware, DeprecatedSecureBootFillsUserEfi) {
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredUseSecureBoot":false}})",
                                           R"({"domain":{"firmware":{"bootloader":{"efi":{"persistent":true}}}}})"),
                          R"({"efi":{"persistent":true,"secureBoot":false}})"));
}

TEST(PreferenceFirmware, AppliesPreferredEfi) {
  EXPECT_TRUE(json_equals(
      bootloader_after(R"({"firmware":{"preferredEfi":{"persistent":true,"secureBoot":true}}})", R"({"domain":{}})"),
      R"({"efi":{"persistent":true,"secureBoot":true}})"));
}

TEST(PreferenceFirmware, PreferredEfiIgnoresTheDeprecatedFields) {
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredEfi":{"persistent":true},
                                               "preferredUseEfi":false,"preferredUseSecureBoot":false}})",
                                           R"({"domain":{}})"),
                          R"({"efi":{"persistent":true}})"));
}

TEST(PreferenceFirmware, PreferredEfiDoesNotReplaceUserEfi) {  // bug #12985
  EXPECT_TRUE(json_equals(bootloader_after(R"({"firmware":{"preferredEfi":{"secureBoot":true,"persistent":true}}})",
                                           R"({"domain":{"firmware":{"bootloader":{"efi":{"secureBoot":false}}}}})"),
                          R"({"efi":{"secureBoot":false}})"));
}

TEST(PreferenceFirmware, PreferredEfiNotAppliedOverUserBios) {  // bug #12985
  EXPECT_TRUE(json_equals(
      bootloader_after(R"({"firmware":{"preferredEfi":{}}})", R"({"domain":{"firmware":{"bootloader":{"bios":{}}}}})"),
      R"({"bios":{}})"));
}

TEST(PreferenceFirmware, UseBiosWinsOverPreferredEfi) {
  // BIOS is applied first, so preferredEfi finds a bootloader and steps aside.
  EXPECT_TRUE(
      json_equals(bootloader_after(R"({"firmware":{"preferredUseBios":true,"preferredEfi":{"secureBoot":true}}})",
                                   R"({"domain":{}})"),
                  R"({"bios":{}})"));
}

TEST(PreferenceFirmware, CreatesFirmwareAndBootloaderEvenWhenNothingApplies) {
  const json::Document preference = parse(R"({"firmware":{"preferredUseBios":false}})");
  json::Document spec = parse(R"({"domain":{"firmware":{"uuid":"u"}}})");
  apply_firmware(preference, spec, spec.GetAllocator());
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"firmware":{"uuid":"u","bootloader":{}}}})"));
}

TEST(PreferenceFirmware, NoFirmwarePreferencesLeaveTheSpecAlone) {
  const json::Document preference = parse(R"({"features":{}})");
  json::Document spec = parse(R"({"domain":{}})");
  apply_firmware(preference, spec, spec.GetAllocator());
  EXPECT_TRUE(json_equals(spec, R"({"domain":{}})"));
}

}  // namespace
}  // namespace vmgate::admission::preference
