// Reads: spec.architecture, spec.startStrategy, spec.domain.launchSecurity.{sev.attestation, snp,
// tdx}, spec.domain.features.smm.enabled, spec.domain.firmware.bootloader.efi.{secureBoot,
// persistent}, spec.domain.devices.interfaces[*].bootOrder. Follows vmi-create-admitter.go
// validateLaunchSecurity and webhooks/amd64.go ValidateLaunchSecurityAmd64.
#include <string>
#include <vector>

#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

ErrorList validate_amd64(const json::Value& spec, const json::Value& domain, const json::Value& launch_security,
                         const ClusterConfig& config, const std::string& field) {
  ErrorList causes;
  const bool sev = json::has(launch_security, "sev");
  const bool snp = json::has(launch_security, "snp");
  const bool tdx = json::has(launch_security, "tdx");
  std::vector<std::string> selected;
  std::string gate;
  if (sev) {
    selected.emplace_back("SEV");
    gate = "WorkloadEncryptionSEV";
  }
  if (snp) {
    selected.emplace_back("SNP");
    gate = "WorkloadEncryptionSEV";
  }
  if (tdx) {
    selected.emplace_back("TDX");
    gate = "WorkloadEncryptionTDX";
  }
  if (selected.size() != 1) {
    causes.push_back({CauseType::field_value_forbidden, field, "One and only one launchSecurity type can be set"});
    return causes;
  }
  if (!config.feature_gate_enabled(gate)) {
    causes.push_back({CauseType::field_value_invalid, field, gate + " feature gate is not enabled in kubevirt-config"});
    return causes;
  }
  const std::string& type = selected.front();
  if (tdx) {
    const json::Value* smm = json::find_path(domain, {"features", "smm"});
    if (smm != nullptr && smm->IsObject()) {
      const json::Value* enabled = json::find(*smm, "enabled");
      if (enabled == nullptr || enabled->IsNull() || (enabled->IsBool() && enabled->GetBool())) {
        causes.push_back({CauseType::field_value_invalid, field, "TDX does not work along with SMM"});
      }
    }
  }
  const json::Value* efi = json::find_path(domain, {"firmware", "bootloader", "efi"});
  if (efi == nullptr || !efi->IsObject()) {
    causes.push_back({CauseType::field_value_invalid, field, type + " requires OVMF (UEFI)"});
  } else {
    const json::Value* secure_boot = json::find(*efi, "secureBoot");
    // An EFI bootloader's secureBoot defaults to true.
    const bool secure =
        secure_boot == nullptr || secure_boot->IsNull() || (secure_boot->IsBool() && secure_boot->GetBool());
    if ((sev || snp) && secure) {
      causes.push_back({CauseType::field_value_invalid, field, type + " does not work along with SecureBoot"});
    }
    if ((snp || tdx) && spec::is_true(*efi, "persistent")) {
      causes.push_back(
          {CauseType::field_value_invalid, field, type + " does not work along with Persistent EFI variables"});
    }
  }
  if (sev && json::find_string(spec, "startStrategy") != "Paused") {
    const json::Value* sev_value = json::find(launch_security, "sev");
    if (sev_value->IsObject() && json::has(*sev_value, "attestation")) {
      causes.push_back({CauseType::field_value_invalid, field, "SEV attestation requires VMI StartStrategy 'Paused'"});
    }
  }
  if (const json::Value* interfaces = json::find_path(domain, {"devices", "interfaces"});
      interfaces != nullptr && interfaces->IsArray()) {
    for (const json::Value& interface : interfaces->GetArray()) {
      if (interface.IsObject() && json::has(interface, "bootOrder")) {
        causes.push_back(
            {CauseType::field_value_invalid, field,
             type + " does not work with bootable NICs: " + std::string(json::find_string(interface, "name"))});
      }
    }
  }
  return causes;
}

}  // namespace

ErrorList validate_launch_security(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  const json::Value* domain = json::find_object(spec, "domain");
  const json::Value* launch_security = domain != nullptr ? json::find(*domain, "launchSecurity") : nullptr;
  if (launch_security == nullptr || !launch_security->IsObject()) {
    return {};
  }
  const std::string field = path.child("launchSecurity").str();
  const std::string_view architecture = json::find_string(spec, "architecture");
  if (architecture == "amd64") {
    return validate_amd64(spec, *domain, *launch_security, config, field);
  }
  if (architecture == "s390x") {
    return {};  // IBM Secure Execution has no settings to check
  }
  const std::string arch_field = path.child("architecture").str();
  return {{CauseType::field_value_invalid, arch_field,
           "No launchSecurity support for architecture: " + std::string(architecture)}};
}

}  // namespace vmgate::admission::validation
