// Reads: metadata.labels, metadata.annotations["kubevirt.io/ignitiondata",
// "hooks.kubevirt.io/hookSidecars"] of a VMI or of a VM's template. Follows
// vmi-create-admitter.go ValidateVirtualMachineInstanceMetadata (restrictedVmiLabels) and, for an
// UPDATE, vmi-update-admitter.go admitVMILabelsUpdate.
#include <array>
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

// restrictedVmiLabels.
constexpr std::array<std::string_view, 6> reserved_labels{
    "kubevirt.io/created-by",  "kubevirt.io/migrationJobUID",
    "kubevirt.io/nodeName",    "kubevirt.io/migrationTargetNodeName",
    "kubevirt.io/schedulable", "kubevirt.io/install-strategy"};

const json::Value* labels_of(const json::Value& object) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata != nullptr ? json::find_object(*metadata, "labels") : nullptr;
}

}  // namespace

bool reserved_vmi_labels_changed(const json::Value& vmi, const json::Value& old_vmi) {
  const json::Value* labels = labels_of(vmi);
  const json::Value* old_labels = labels_of(old_vmi);
  for (std::string_view label : reserved_labels) {
    const json::Value* value = labels != nullptr ? json::find(*labels, label) : nullptr;
    const json::Value* old_value = old_labels != nullptr ? json::find(*old_labels, label) : nullptr;
    if ((value == nullptr) != (old_value == nullptr) || (value != nullptr && !json::equal(*value, *old_value))) {
      return true;
    }
  }
  return false;
}

ErrorList validate_vmi_metadata(const json::Value& metadata, const FieldPath& path, const ClusterConfig& config,
                                bool from_kubevirt_service_account) {
  ErrorList causes;
  if (!metadata.IsObject()) {
    return causes;
  }
  if (const json::Value* labels = json::find_object(metadata, "labels");
      labels != nullptr && !from_kubevirt_service_account) {
    for (std::string_view label : reserved_labels) {
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
