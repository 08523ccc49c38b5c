// Reads: spec.domain.devices.interfaces[*].{slirp, passt, macvtap}. Follows
// pkg/network/admitter/discontinued.go validateDiscontinuedBindings, run on CREATE only (the VM
// admitter passes the path "spec" for the template's spec, so its causes read
// `spec.domain.devices...`). v1.7.0 has only slirp.go validateCreationSlirpBinding.
#include <array>
#include <string>
#include <utility>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_discontinued_bindings(const json::Value& spec, const FieldPath& path, Release release) {
  ErrorList causes;
  const json::Value* interfaces = json::find_path(spec, {"domain", "devices", "interfaces"});
  if (interfaces == nullptr || !interfaces->IsArray()) {
    return causes;
  }
  constexpr std::array<std::pair<std::string_view, std::string_view>, 3> discontinued{{
      {"slirp", "Slirp interface support has been discontinued since v1.3"},
      {"passt", "Passt network binding has been discontinued since v1.3"},
      {"macvtap", "Macvtap network binding has been discontinued since v1.3"},
  }};
  const FieldPath interfaces_path = path.child("domain").child("devices").child("interfaces");
  for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
    const json::Value& interface = (*interfaces)[i];
    for (const auto& [binding, message] : discontinued) {
      if (release <= Release::v1_7 && binding != "slirp") {
        continue;
      }
      if (interface.IsObject() && json::has(interface, binding)) {
        causes.push_back(
            {CauseType::field_value_invalid, interfaces_path.index(i).child(binding).str(), std::string(message)});
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
