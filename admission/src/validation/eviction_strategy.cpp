// Reads: spec.evictionStrategy. Follows vmi-create-admitter.go validateLiveMigration: the schema
// has no enum for it, this rule is the check.
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_eviction_strategy(const json::Value& spec, const FieldPath& path) {
  const json::Value* strategy = json::find(spec, "evictionStrategy");
  if (strategy == nullptr || !strategy->IsString()) {
    return {};  // unset, or a type error reported by the structure check
  }
  const std::string_view value = json::as_view(*strategy);
  if (value == "LiveMigrate" || value == "LiveMigrateIfPossible" || value == "None" || value == "External") {
    return {};
  }
  const std::string field = path.child("evictionStrategy").str();
  return {
      {CauseType::field_value_invalid, field, field + " is set with an unrecognized option: " + std::string(value)}};
}

}  // namespace vmgate::admission::validation
