// Reads: spec.domain.firmware.bootloader.{bios, efi.secureBoot}, spec.domain.features.smm.enabled,
// spec.domain.launchSecurity.tdx. Follows vmi-create-admitter.go validateBootloader and validateDomainSpec.
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_firmware(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* domain = json::find_object(spec, "domain");
  if (domain == nullptr) {
    return causes;
  }
  const FieldPath domain_path = path.child("domain");
  const json::Value* bootloader = json::find_path(*domain, {"firmware", "bootloader"});
  const bool efi = bootloader != nullptr && json::has(*bootloader, "efi");
  if (efi && json::has(*bootloader, "bios")) {
    const std::string field = domain_path.child("firmware").child("bootloader").str();
    causes.push_back({CauseType::field_value_invalid, field,
                      field + " has both EFI and BIOS configured, but they are mutually exclusive."});
  }
  bool secure_boot = false;
  if (efi) {
    const json::Value* secure = json::find(*json::find(*bootloader, "efi"), "secureBoot");
    secure_boot = secure == nullptr || secure->IsNull() || (secure->IsBool() && secure->GetBool());
  }
  const json::Value* smm = json::find_path(*domain, {"features", "smm"});
  bool smm_enabled = false;
  if (smm != nullptr && smm->IsObject()) {
    const json::Value* enabled = json::find(*smm, "enabled");
    smm_enabled = enabled == nullptr || enabled->IsNull() || (enabled->IsBool() && enabled->GetBool());
  }
  const json::Value* launch_security = json::find_object(*domain, "launchSecurity");
  const bool tdx = launch_security != nullptr && json::has(*launch_security, "tdx");
  if (secure_boot && !smm_enabled && !tdx) {
    causes.push_back(
        {CauseType::field_value_invalid, domain_path.str(),
         domain_path.str() + " has EFI SecureBoot enabled. SecureBoot requires SMM, which is currently disabled."});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
