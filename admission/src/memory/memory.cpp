// Reads: spec.domain.resources.{requests,limits}.memory, spec.domain.memory.guest.
// Follows vmi-create-admitter.go validateMemoryRequestsNegativeOrNull,
// validateMemoryLimitsNegativeOrNull, (validateHugepagesMemoryRequests, hugepages.cpp) and
// validateGuestMemoryLimit, in that order.
#include "vmgate/admission/memory/hugepages.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

std::int64_t bytes(const std::optional<Quantity>& quantity) {
  if (!quantity) {
    return 0;
  }
  Result<std::int64_t> value = quantity->value();
  return value ? *value : 0;
}

std::string shown(const std::optional<Quantity>& quantity) {
  return quantity ? quantity->to_string() : "0";
}

}  // namespace

ErrorList validate_memory(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* domain = json::find_object(spec, "domain");
  if (domain == nullptr) {
    return causes;
  }
  const std::optional<Quantity> requests = resource_quantity(*domain, "requests", "memory");
  const std::optional<Quantity> limits = resource_quantity(*domain, "limits", "memory");
  const FieldPath requests_path = path.child("domain").child("resources").child("requests").child("memory");
  const FieldPath limits_path = path.child("domain").child("resources").child("limits").child("memory");

  const Result<Quantity> one_megabyte = Quantity::parse("1M");
  if (bytes(requests) < 0) {
    causes.push_back({CauseType::field_value_invalid, requests_path.str(),
                      requests_path.str() + " '" + shown(requests) + "': must be greater than or equal to 0."});
  } else if (bytes(requests) > 0 && one_megabyte && *requests < *one_megabyte) {
    causes.push_back({CauseType::field_value_invalid, requests_path.str(),
                      requests_path.str() + " '" + shown(requests) + "': must be greater than or equal to 1M."});
  }
  if (bytes(limits) < 0) {
    causes.push_back({CauseType::field_value_invalid, limits_path.str(),
                      limits_path.str() + " '" + shown(limits) + "': must be greater than or equal to 0."});
  }
  if (bytes(limits) > 0 && bytes(requests) > bytes(limits)) {
    causes.push_back({CauseType::field_value_invalid, requests_path.str(),
                      requests_path.str() + " '" + shown(requests) + "' is greater than " + limits_path.str() + " '" +
                          shown(limits) + "'"});
  }
  append(causes, hugepages::validate(spec, path, config.release));
  if (config.vm_rollout_strategy != "LiveUpdate") {
    const json::Value* memory = json::find_object(*domain, "memory");
    const std::optional<Quantity> guest = memory != nullptr ? quantity_at(*memory, "guest") : std::nullopt;
    if (guest && bytes(limits) != 0 && bytes(limits) < bytes(guest)) {
      const FieldPath guest_path = path.child("domain").child("memory").child("guest");
      causes.push_back({CauseType::field_value_invalid, guest_path.str(),
                        guest_path.str() + " '" + guest->to_string() +
                            "' must be equal to or less than the memory limit " + limits_path.str() + " '" +
                            shown(limits) + "'"});
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
