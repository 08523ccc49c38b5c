// Reads: spec.networks[*].{pod, multus.{networkName, default}, resourceClaim}. Follows
// pkg/network/admitter/netsource.go validateSinglePodNetwork, validateSingleNetworkSource and
// validateMultusNetworkSource.
#include <string>

#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_network_sources(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* networks = json::find_array(spec, "networks");
  if (networks == nullptr) {
    return causes;
  }
  int pod_networks = 0;
  int multus_defaults = 0;
  for (const json::Value& network : networks->GetArray()) {
    if (!network.IsObject()) {
      continue;
    }
    pod_networks += json::has(network, "pod") ? 1 : 0;
    const json::Value* multus = json::find_object(network, "multus");
    multus_defaults += multus != nullptr && spec::is_true(*multus, "default") ? 1 : 0;
  }
  if (pod_networks > 1) {
    const std::string field = path.child("interfaces").str();
    causes.push_back(
        {CauseType::field_value_duplicate, field, "more than one interface is connected to a pod network in " + field});
  }
  const std::string networks_field = path.child("networks").str();
  if (multus_defaults > 1) {
    causes.push_back(
        {CauseType::field_value_invalid, networks_field, "Multus CNI should only have one default network"});
  }
  if (pod_networks > 0 && multus_defaults > 0) {
    causes.push_back({CauseType::field_value_invalid, networks_field,
                      "Pod network cannot be defined when Multus default network is defined"});
  }
  for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
    const json::Value& network = (*networks)[i];
    if (!network.IsObject()) {
      continue;
    }
    const int types = (json::has(network, "pod") ? 1 : 0) + (json::has(network, "multus") ? 1 : 0) +
                      (json::has(network, "resourceClaim") ? 1 : 0);
    if (types == 0) {
      causes.push_back(
          {CauseType::field_value_required, path.child("networks").index(i).str(), "should have a network type"});
    } else if (types > 1) {
      causes.push_back({CauseType::field_value_required, path.child("networks").index(i).str(),
                        "should have only one network type"});
    }
  }
  for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
    const json::Value* multus = (*networks)[i].IsObject() ? json::find_object((*networks)[i], "multus") : nullptr;
    if (multus != nullptr && json::find_string(*multus, "networkName").empty()) {
      causes.push_back({CauseType::field_value_required, path.child("networks").index(i).str(),
                        "CNI delegating plugin must have a networkName"});
      break;  // KubeVirt stops at the first
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
