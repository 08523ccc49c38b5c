#pragma once
// Quantities as they appear in JSON: Kubernetes accepts a string ("1Gi") or a number (1024).
#include <optional>
#include <string>

#include "vmgate/common/json.hpp"
#include "vmgate/admission/quantity.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::admission {

/// Parses a JSON string or integer as a quantity. Errors carry apimachinery's message.
Result<Quantity> parse_quantity(const json::Value& value);
/// The quantity at object[key]; nullopt when absent, null or unparseable (validation reports those).
std::optional<Quantity> quantity_at(const json::Value& object, std::string_view key);
/// object.resources.<list>.<resource> of a domain, as a quantity (nullopt when absent or bad).
std::optional<Quantity> resource_quantity(const json::Value& domain, std::string_view list, std::string_view resource);
/// The text of a quantity member as the user wrote it ("" when absent): used in messages.
std::string quantity_text(const json::Value* value);

}  // namespace vmgate::admission
