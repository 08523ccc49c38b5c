// Reads: spec.domain.devices.interfaces[*].{name, bridge, masquerade, sriov, passtBinding, binding,
// macAddress}, spec.networks[*].{name, pod}. Follows pkg/network/admitter/binding.go
// validateInterfaceBinding and passt.go validatePasstBinding; at v1.8 validateInterfaceBindingExists
// refuses only a binding plugin beside a binding method. v1.7.0 still has passt and macvtap as
// binding methods (passt.go, macvtap.go) behind their gates, discontinued but still read from
// the CR's list, and no passtBinding.
#include <string>
#include <unordered_map>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

std::unordered_map<std::string_view, bool> networks_by_name(const json::Value& spec, std::string_view source) {
  // IndexNetworkSpecByName: the last network of a name wins.
  std::unordered_map<std::string_view, bool> with_source;
  if (const json::Value* networks = json::find_array(spec, "networks")) {
    for (const json::Value& network : networks->GetArray()) {
      if (network.IsObject()) {
        with_source[json::find_string(network, "name")] = json::has(network, source);
      }
    }
  }
  return with_source;
}

bool named(const std::unordered_map<std::string_view, bool>& networks, std::string_view name) {
  const auto network = networks.find(name);
  return network != networks.end() && network->second;
}

}  // namespace

std::unordered_map<std::string_view, bool> pod_networks_by_name(const json::Value& spec) {
  return networks_by_name(spec, "pod");
}

ErrorList validate_interface_bindings(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* interfaces = json::find_path(spec, {"domain", "devices", "interfaces"});
  if (interfaces == nullptr || !interfaces->IsArray()) {
    return causes;
  }
  const std::unordered_map<std::string_view, bool> on_pod_network = pod_networks_by_name(spec);
  const std::unordered_map<std::string_view, bool> on_multus_network = networks_by_name(spec, "multus");
  const bool v17 = config.release <= Release::v1_7;
  const FieldPath interfaces_path = path.child("domain").child("devices").child("interfaces");
  for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
    const json::Value& interface = (*interfaces)[i];
    if (!interface.IsObject()) {
      continue;
    }
    const std::string_view name = json::find_string(interface, "name");
    const auto network = on_pod_network.find(name);
    const bool pod = network != on_pod_network.end() && network->second;
    const std::string at = interfaces_path.index(i).str();
    const std::string name_field = interfaces_path.index(i).child("name").str();
    int methods = 0;
    for (std::string_view method : {"bridge", "masquerade", "sriov", "passtBinding"}) {
      methods += json::has(interface, method) ? 1 : 0;
    }
    if (v17) {
      for (std::string_view method : {"slirp", "macvtap", "passt"}) {
        methods += json::has(interface, method) ? 1 : 0;
      }
    }
    const bool plugin = json::has(interface, "binding");
    if (config.release <= Release::v1_8) {
      // v1.8 refuses only a plugin beside a method (validateInterfaceBindingExists at v1.8.2).
      if (plugin && methods > 0) {
        causes.push_back({CauseType::field_value_invalid, interfaces_path.index(i).child("binding").str(),
                          "logical " + std::string(name) +
                              " interface cannot have both binding plugin and interface binding method"});
      }
    } else if (methods + (plugin ? 1 : 0) != 1) {
      causes.push_back(
          {CauseType::field_value_invalid, at,
           "logical " + std::string(name) + " interface must have exactly one binding method or binding plugin"});
    }
    if (json::has(interface, "masquerade")) {
      if (!pod) {
        causes.push_back(
            {CauseType::field_value_invalid, name_field, "Masquerade interface only implemented with pod network"});
      }
      if (json::find_string(interface, "macAddress") == "02:00:00:00:00:00") {
        causes.push_back({CauseType::field_value_invalid, interfaces_path.index(i).child("macAddress").str(),
                          "The requested MAC address is reserved for the in-pod bridge. Please choose another one."});
      }
    }
    if (json::has(interface, "bridge") && pod && !config.permit_bridge_interface_on_pod_network) {
      causes.push_back({CauseType::field_value_invalid, name_field,
                        "Bridge on pod network configuration is not enabled under kubevirt-config"});
    }
    if (v17 && json::has(interface, "macvtap")) {
      if (!config.feature_gate_enabled("Macvtap")) {
        causes.push_back({CauseType::field_value_invalid, name_field, "Macvtap feature gate is not enabled"});
      }
      if (!named(on_multus_network, name)) {
        causes.push_back(
            {CauseType::field_value_invalid, name_field, "Macvtap interface only implemented with Multus network"});
      }
    }
    if (v17 && json::has(interface, "passt")) {
      if (!config.feature_gate_enabled("Passt")) {
        causes.push_back({CauseType::field_value_invalid, name_field, "Passt feature gate is not enabled"});
      }
      if (!pod) {
        causes.push_back(
            {CauseType::field_value_invalid, name_field, "Passt interface only implemented with pod network"});
      }
    }
    if (json::has(interface, "passtBinding")) {
      if (!config.feature_gate_enabled("PasstBinding")) {
        causes.push_back({CauseType::field_value_invalid, name_field, "PasstBinding feature gate is not enabled"});
      }
      if (!pod) {
        causes.push_back(
            {CauseType::field_value_invalid, name_field, "PasstBinding interface only implemented with pod network"});
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
