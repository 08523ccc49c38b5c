// Reads: spec.utilityVolumes. Follows pkg/storage/admitters/storagehotplug.go
// ValidateUtilityVolumesNotPresentOnCreation: utility volumes only arrive by hotplug.
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_utility_volumes(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  if (json::has(spec, "utilityVolumes")) {
    causes.push_back({CauseType::field_value_invalid, path.child("utilityVolumes").str(),
                      "cannot create VMI with utility volumes in spec, utility volumes can only be added via hotplug"});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
