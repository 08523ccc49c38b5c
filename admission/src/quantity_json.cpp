#include "vmgate/admission/quantity_json.hpp"

namespace vmgate::admission {

Result<Quantity> parse_quantity(const json::Value& value) {
  if (value.IsString()) {
    return Quantity::parse(json::as_view(value));
  }
  if (value.IsInt64()) {
    return Quantity::from_int(value.GetInt64(), Quantity::Format::decimal_si);
  }
  if (value.IsNumber()) {
    // Non-integral JSON numbers go through the text parser so "0.5" keeps its exact value.
    return Quantity::parse(json::to_string(value));
  }
  return Error{"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"};
}

std::optional<Quantity> quantity_at(const json::Value& object, std::string_view key) {
  const json::Value* value = json::find(object, key);
  if (value == nullptr || value->IsNull()) {
    return std::nullopt;
  }
  Result<Quantity> parsed = parse_quantity(*value);
  if (!parsed) {
    return std::nullopt;
  }
  return std::move(parsed.value());
}

std::optional<Quantity> resource_quantity(const json::Value& domain, std::string_view list, std::string_view resource) {
  const json::Value* entries = json::find_path(domain, {"resources", list});
  return entries != nullptr ? quantity_at(*entries, resource) : std::nullopt;
}

std::string quantity_text(const json::Value* value) {
  if (value == nullptr || value->IsNull()) {
    return "";
  }
  return value->IsString() ? std::string(json::as_view(*value)) : json::to_string(*value);
}

}  // namespace vmgate::admission
