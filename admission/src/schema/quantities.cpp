// Reads: spec.domain.resources.{requests,limits}.*, spec.domain.memory.{guest,maxGuest}.
// The apiserver rejects an unparseable resource.Quantity while decoding; vmgate reports it as a
// cause on the field instead of treating it as unset.
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

void check(const json::Value& value, const FieldPath& path, ErrorList& causes) {
  if (value.IsNull()) {
    return;
  }
  Result<Quantity> parsed = parse_quantity(value);
  if (!parsed) {
    causes.push_back({CauseType::field_value_invalid, path.str(),
                      path.str() + " '" + quantity_text(&value) + "': " + parsed.error().message});
  }
}

}  // namespace

ErrorList validate_quantities(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* domain = json::find_object(spec, "domain");
  if (domain == nullptr) {
    return causes;
  }
  const FieldPath domain_path = path.child("domain");
  if (const json::Value* resources = json::find_object(*domain, "resources")) {
    for (std::string_view list : {"requests", "limits"}) {
      const json::Value* entries = json::find_object(*resources, list);
      if (entries == nullptr) {
        continue;
      }
      for (auto it = entries->MemberBegin(); it != entries->MemberEnd(); ++it) {
        check(it->value, domain_path.child("resources").child(list).child(json::as_view(it->name)), causes);
      }
    }
  }
  if (const json::Value* memory = json::find_object(*domain, "memory")) {
    for (std::string_view field : {"guest", "maxGuest"}) {
      if (const json::Value* value = json::find(*memory, field)) {
        check(*value, domain_path.child("memory").child(field), causes);
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
