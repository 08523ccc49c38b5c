// Reads: preference spec.firmware.*; writes spec.domain.firmware.bootloader.
// Follows pkg/instancetype/preference/apply/firmware.go: a user-defined BIOS or EFI is never
// replaced (KubeVirt bugs #10313, #12985), and preferredEfi makes the deprecated fields moot.
#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

void apply_firmware(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  const json::Value* preferred = json::find_object(preference, "firmware");
  if (preferred == nullptr) {
    return;
  }
  json::Value& firmware = json::ensure_object(spec::domain(vmi_spec, allocator), "firmware", allocator);
  json::Value& bootloader = json::ensure_object(firmware, "bootloader", allocator);
  auto neither = [&bootloader] { return spec::unset(bootloader, "bios") && spec::unset(bootloader, "efi"); };

  if (spec::is_true(*preferred, "preferredUseBios") && neither()) {
    json::set(bootloader, "bios", json::Value(rapidjson::kObjectType), allocator);
  }
  if (json::Value* bios = json::find(bootloader, "bios"); bios != nullptr && bios->IsObject()) {
    spec::copy_if_unset(*preferred, "preferredUseBiosSerial", *bios, "useSerial", allocator);
  }
  if (neither() && json::has(*preferred, "preferredEfi")) {
    spec::copy_if_unset(*preferred, "preferredEfi", bootloader, "efi", allocator);
    return;
  }
  if (spec::is_true(*preferred, "preferredUseEfi") && neither()) {
    json::set(bootloader, "efi", json::Value(rapidjson::kObjectType), allocator);
  }
  if (json::Value* efi = json::find(bootloader, "efi"); efi != nullptr && efi->IsObject()) {
    spec::copy_if_unset(*preferred, "preferredUseSecureBoot", *efi, "secureBoot", allocator);
  }
}

}  // namespace vmgate::admission::preference
