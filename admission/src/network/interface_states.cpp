// Reads: spec.domain.devices.interfaces[*].{name, state, sriov, bridge}, spec.networks. Follows
// pkg/network/admitter/admit.go validateInterfaceStateValue: known states, link states not on
// SR-IOV, "absent" only with bridge binding and never on the default network.
#include <optional>
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

// vmispec.LookUpDefaultNetwork: the first pod network or default Multus network.
std::optional<std::string_view> default_network_name(const json::Value& spec) {
  if (const json::Value* networks = json::find_array(spec, "networks")) {
    for (const json::Value& network : networks->GetArray()) {
      const json::Value* multus = network.IsObject() ? json::find_object(network, "multus") : nullptr;
      const json::Value* is_default = multus != nullptr ? json::find(*multus, "default") : nullptr;
      if (network.IsObject() &&
          (json::has(network, "pod") || (is_default != nullptr && is_default->IsBool() && is_default->GetBool()))) {
        return json::find_string(network, "name");
      }
    }
  }
  return std::nullopt;
}

std::string quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

}  // namespace

ErrorList validate_interface_states(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* interfaces = json::find_path(spec, {"domain", "devices", "interfaces"});
  if (interfaces == nullptr || !interfaces->IsArray()) {
    return causes;
  }
  const std::optional<std::string_view> default_network = default_network_name(spec);
  for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
    const json::Value& interface = (*interfaces)[i];
    const std::string_view state = interface.IsObject() ? json::find_string(interface, "state") : std::string_view{};
    if (state.empty()) {
      continue;
    }
    const std::string_view name = json::find_string(interface, "name");
    const std::string field = path.child("domain").child("devices").child("interfaces").index(i).child("state").str();
    if (state != "absent" && state != "down" && state != "up") {
      causes.push_back(
          {CauseType::field_value_invalid, field,
           "logical " + std::string(name) + " interface state value is unsupported: " + std::string(state)});
    }
    if (json::has(interface, "sriov") && (state == "down" || state == "up")) {
      causes.push_back({CauseType::field_value_invalid, field,
                        quoted(name) + " interface's state " + quoted(state) + " is not supported for SR-IOV NICs"});
    }
    if (state == "absent" && !json::has(interface, "bridge")) {
      causes.push_back(
          {CauseType::field_value_invalid, field,
           quoted(name) + " interface's state " + quoted(state) + " is supported only for bridge binding"});
    }
    if (state == "absent" && default_network == name) {
      causes.push_back(
          {CauseType::field_value_invalid, field,
           quoted(name) + " interface's state " + quoted(state) + " is not supported on default networks"});
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
