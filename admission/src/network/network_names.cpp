// Reads: spec.networks[*].name, spec.domain.devices.interfaces[*].name.
// Follows pkg/network/admitter/netiface.go (interfaces ↔ networks, unique names), in the order
// of pkg/network/admitter/validator.go Validate.
#include <unordered_set>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_network_names(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* networks = json::find_array(spec, "networks");
  const json::Value* interfaces = json::find_path(spec, {"domain", "devices", "interfaces"});
  if (interfaces != nullptr && !interfaces->IsArray()) {
    interfaces = nullptr;
  }
  std::unordered_set<std::string_view> network_names;
  std::unordered_set<std::string_view> interface_names;
  if (networks != nullptr) {
    for (const json::Value& network : networks->GetArray()) {
      network_names.insert(json::find_string(network, "name"));
    }
  }
  if (interfaces != nullptr) {
    for (const json::Value& iface : interfaces->GetArray()) {
      interface_names.insert(json::find_string(iface, "name"));
    }
  }
  // pkg/network/admitter/validator.go order: unique network names, networks → interfaces,
  // unique interface names, interfaces → networks; each a pass over the whole list.
  if (networks != nullptr) {
    std::unordered_set<std::string_view> seen;
    for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
      const std::string_view name = json::find_string((*networks)[i], "name");
      if (!seen.insert(name).second) {
        causes.push_back(
            {CauseType::field_value_duplicate, path.child("networks").index(i).child("name").str(),
             "Network with name \"" + std::string(name) + "\" already exists, every network must have a unique name"});
      }
    }
    for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
      const std::string_view name = json::find_string((*networks)[i], "name");
      const std::string field = path.child("networks").index(i).child("name").str();
      if (!interface_names.contains(name)) {
        causes.push_back({CauseType::field_value_required, field, field + " '" + std::string(name) + "' not found."});
      }
    }
  }
  if (interfaces != nullptr) {
    const FieldPath interfaces_path = path.child("domain").child("devices").child("interfaces");
    std::unordered_set<std::string_view> seen;
    for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
      const std::string_view name = json::find_string((*interfaces)[i], "name");
      if (!seen.insert(name).second) {
        causes.push_back({CauseType::field_value_duplicate, interfaces_path.index(i).child("name").str(),
                          "Only one interface can be connected to one specific network"});
      }
    }
    for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
      const std::string_view name = json::find_string((*interfaces)[i], "name");
      const std::string field = interfaces_path.index(i).child("name").str();
      if (!network_names.contains(name)) {
        causes.push_back({CauseType::field_value_invalid, field, field + " '" + std::string(name) + "' not found."});
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
