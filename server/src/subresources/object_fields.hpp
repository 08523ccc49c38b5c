#pragma once
// The few fields of a VM or VMI the lifecycle decisions read (vm_lifecycle.cpp,
// vmi_lifecycle.cpp). Internal to subresources/; pure.
#include <string_view>

#include "vmgate/common/json.hpp"

namespace vmgate::subresources::fields {

inline std::string_view metadata_string(const json::Value& object, std::string_view key) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata == nullptr ? std::string_view() : json::find_string(*metadata, key);
}

inline std::string_view name_of(const json::Value& object) {
  return metadata_string(object, "name");
}

inline std::string_view uid_of(const json::Value& object) {
  return metadata_string(object, "uid");
}

inline std::string_view phase_of(const json::Value& vmi) {
  const json::Value* status = json::find_object(vmi, "status");
  return status == nullptr ? std::string_view() : json::find_string(*status, "phase");
}

/// A condition of this type in status.conditions; `status` empty: whatever its status.
inline bool has_condition(const json::Value& object, std::string_view type, std::string_view status = {}) {
  const json::Value* conditions = json::find_path(object, {"status", "conditions"});
  if (conditions == nullptr || !conditions->IsArray()) {
    return false;
  }
  for (const json::Value& condition : conditions->GetArray()) {
    if (json::find_string(condition, "type") == type &&
        (status.empty() || json::find_string(condition, "status") == status)) {
      return true;
    }
  }
  return false;
}

}  // namespace vmgate::subresources::fields
