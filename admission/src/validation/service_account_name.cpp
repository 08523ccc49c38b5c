// Reads: spec.serviceAccountName, spec.volumes[*].serviceAccount.serviceAccountName. Follows
// vmi-create-admitter.go validateServiceAccountName: a DNS subdomain, and the same account as a
// serviceAccount volume (the first mismatch is reported).
#include <string>

#include "vmgate/admission/validation/dns1123.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_service_account_name(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const std::string_view account = json::find_string(spec, "serviceAccountName");
  if (account.empty()) {
    return causes;
  }
  const std::string field = path.child("serviceAccountName").str();
  if (std::vector<std::string> errors = dns1123_subdomain_errors(account); !errors.empty()) {
    std::string joined;
    for (const std::string& error : errors) {
      joined.append(joined.empty() ? "" : "; ").append(error);
    }
    causes.push_back(
        {CauseType::field_value_invalid, field, field + " is not a valid service account name: " + joined});
  }
  if (const json::Value* volumes = json::find_array(spec, "volumes")) {
    for (const json::Value& volume : volumes->GetArray()) {
      const json::Value* source = volume.IsObject() ? json::find_object(volume, "serviceAccount") : nullptr;
      if (source == nullptr) {
        continue;
      }
      if (const std::string_view named = json::find_string(*source, "serviceAccountName"); named != account) {
        causes.push_back({CauseType::field_value_invalid, field,
                          "spec.serviceAccountName \"" + std::string(account) + "\" and serviceAccount volume \"" +
                              std::string(named) + "\" must reference the same service account"});
        break;
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
