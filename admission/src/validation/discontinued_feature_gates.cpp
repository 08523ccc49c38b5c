// Reads: the KubeVirt CR's developerConfiguration.featureGates, spec.domain.devices.interfaces[*].
// {passt, macvtap}. Follows pkg/virt-config/featuregate/validator.go ValidateFeatureGates: a
// discontinued gate still listed in the CR whose API the spec uses is refused with the gate's
// message and no field (registered for Passt and Macvtap, in the CR's order).
#include <array>
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

struct DiscontinuedGate {
  std::string_view gate;
  std::string_view interface_binding;
  std::string_view message;
};

constexpr std::array<DiscontinuedGate, 2> discontinued_gates{{
    {"Passt", "passt",
     "Passt network binding is discontinued since v1.3. Please refer to Kubevirt user guide for alternatives."},
    {"Macvtap", "macvtap",
     "Macvtap network binding is discontinued since v1.3. Please refer to Kubevirt user guide for alternatives."},
}};

bool any_interface_has(const json::Value& spec, std::string_view binding) {
  const json::Value* interfaces = json::find_path(spec, {"domain", "devices", "interfaces"});
  if (interfaces == nullptr || !interfaces->IsArray()) {
    return false;
  }
  for (const json::Value& interface : interfaces->GetArray()) {
    if (interface.IsObject() && json::has(interface, binding)) {
      return true;
    }
  }
  return false;
}

}  // namespace

ErrorList validate_discontinued_feature_gates(const json::Value& spec, const ClusterConfig& config) {
  ErrorList causes;
  for (const std::string& listed : config.feature_gates) {
    for (const DiscontinuedGate& gate : discontinued_gates) {
      if (listed == gate.gate && any_interface_has(spec, gate.interface_binding)) {
        causes.push_back({CauseType::field_value_not_supported, "", std::string(gate.message)});
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
