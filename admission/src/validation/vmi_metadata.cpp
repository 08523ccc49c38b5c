// Reads: metadata.labels, metadata.annotations["kubevirt.io/ignitiondata",
// "hooks.kubevirt.io/hookSidecars"] of a VMI or of a VM's template. Follows
// vmi-create-admitter.go ValidateVirtualMachineInstanceMetadata (restrictedVmiLabels).
#include <array>
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_vmi_metadata(const json::Value& metadata, const FieldPath& path, const ClusterConfig& config,
                                bool from_kubevirt_service_account) {
  ErrorList causes;
  if (!metadata.IsObject()) {
    return causes;
  }
  if (const json::Value* labels = json::find_object(metadata, "labels");
      labels != nullptr && !from_kubevirt_service_account) {
    constexpr std::array<std::string_view, 6> reserved{"kubevirt.io/created-by",  "kubevirt.io/migrationJobUID",
                                                       "kubevirt.io/nodeName",    "kubevirt.io/migrationTargetNodeName",
                                                       "kubevirt.io/schedulable", "kubevirt.io/install-strategy"};
    for (std::string_view label : reserved) {
      if (json::find(*labels, label) != nullptr) {
        causes.push_back({CauseType::field_value_not_supported, path.child("labels").str(),
                          "creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited"});
        break;
      }
    }
  }
  const json::Value* annotations = json::find_object(metadata, "annotations");
  if (annotations == nullptr) {
    return causes;
  }
  const FieldPath annotations_path = path.child("annotations");
  if (!json::find_string(*annotations, "kubevirt.io/ignitiondata").empty() &&
      !config.feature_gate_enabled("ExperimentalIgnitionSupport")) {
    causes.push_back({CauseType::field_value_invalid, annotations_path.str(),
                      "ExperimentalIgnitionSupport feature gate is not enabled in kubevirt-config, invalid entry " +
                          annotations_path.child("kubevirt.io/ignitiondata").str()});
  }
  if (!json::find_string(*annotations, "hooks.kubevirt.io/hookSidecars").empty() &&
      !config.feature_gate_enabled("Sidecar")) {
    causes.push_back({CauseType::field_value_invalid, annotations_path.str(),
                      "sidecar feature gate is not enabled in kubevirt-config, invalid entry " +
                          annotations_path.child("hooks.kubevirt.io/hookSidecars").str()});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
