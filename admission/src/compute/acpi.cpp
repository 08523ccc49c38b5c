// Reads: spec.domain.firmware.acpi.{slicNameRef, msdmNameRef}, spec.volumes[*].{name, secret}.
// Follows vmi-create-admitter.go validateFirmwareACPI, which names its fields under "spec.acpi"
// (KubeVirt passes field.Child("acpi"), not the firmware's path).
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

void check_reference(const json::Value& spec, const FieldPath& field, std::string_view reference,
                     std::string_view field_name, ErrorList& causes) {
  if (reference.empty()) {
    return;
  }
  if (const json::Value* volumes = json::find_array(spec, "volumes")) {
    for (const json::Value& volume : volumes->GetArray()) {
      if (!volume.IsObject() || json::find_string(volume, "name") != reference) {
        continue;
      }
      if (!json::has(volume, "secret")) {
        causes.push_back({CauseType::field_value_invalid, field.child(field_name).str(),
                          field.str() + " refers to Volume of unsupported type."});
      }
      return;  // the first volume of that name decides
    }
  }
  causes.push_back({CauseType::field_value_invalid, field.child(field_name).str(),
                    field.str() + " does not have a matching Volume."});
}

}  // namespace

ErrorList validate_firmware_acpi(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* acpi = json::find_path(spec, {"domain", "firmware", "acpi"});
  if (acpi == nullptr || !acpi->IsObject()) {
    return causes;
  }
  const FieldPath field = path.child("acpi");
  const std::string_view slic = json::find_string(*acpi, "slicNameRef");
  const std::string_view msdm = json::find_string(*acpi, "msdmNameRef");
  if (slic.empty() && msdm.empty()) {
    causes.push_back(
        {CauseType::field_value_invalid, field.str(), "ACPI was set but no SLIC nor MSDM volume reference was set"});
    return causes;
  }
  check_reference(spec, field, slic, "slicNameRef", causes);
  check_reference(spec, field, msdm, "msdmNameRef", causes);
  return causes;
}

}  // namespace vmgate::admission::validation
