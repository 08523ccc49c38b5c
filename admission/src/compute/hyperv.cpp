// Reads: spec.domain.features.{hyperv.*, hypervPassthrough}, spec.domain.cpu.features. Follows
// pkg/virt-api/webhooks/hyperv.go ValidateVirtualMachineInstanceHyperv, called by the VMI create
// admitter only. That caller passes the path "spec.domain.features.hyperv" and the dependency
// check appends "domain.features.hyperv" to it again: its messages carry the doubled path, kept
// as KubeVirt writes it.
#include <string>

#include "vmgate/admission/defaults/hyperv_dependencies.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_hyperv(const json::Value& spec) {
  ErrorList causes;
  const json::Value* features = json::find_path(spec, {"domain", "features"});
  const json::Value* hyperv = features != nullptr && features->IsObject() ? json::find(*features, "hyperv") : nullptr;
  if (hyperv == nullptr || !hyperv->IsObject()) {
    return causes;
  }
  const std::string doubled = "spec.domain.features.hyperv.domain.features.hyperv.";
  for (const defaults::HypervDependency& dependency : defaults::hyperv_dependencies) {
    if (defaults::hyperv_feature_state(*hyperv, dependency.feature) == defaults::FeatureState::enabled &&
        defaults::hyperv_feature_state(*hyperv, dependency.required) != defaults::FeatureState::enabled) {
      const std::string field = doubled + std::string(dependency.feature);
      std::string message = "'" + field + "' requires '";
      message.append(doubled).append(dependency.required).append("', which was disabled.");
      causes.push_back({CauseType::field_value_invalid, field, std::move(message)});
    }
  }
  const json::Value* evmcs = json::find(*hyperv, "evmcs");
  if (evmcs != nullptr && !evmcs->IsNull() &&
      defaults::hyperv_feature_state(*hyperv, "evmcs") != defaults::FeatureState::disabled) {
    const json::Value* cpu_features = json::find_path(spec, {"domain", "cpu", "features"});
    if (cpu_features == nullptr || !cpu_features->IsArray() || cpu_features->Empty()) {
      causes.push_back({CauseType::field_value_required, "spec.domain.cpu.features",
                        "vmx cpu feature is required when evmcs is set"});
    } else {
      for (rapidjson::SizeType i = 0; i < cpu_features->Size(); ++i) {
        const json::Value& feature = (*cpu_features)[i];
        if (feature.IsObject() && json::find_string(feature, "name") == "vmx" &&
            json::find_string(feature, "policy") != "require") {
          causes.push_back({CauseType::field_value_invalid,
                            "spec.domain.cpu.features[" + std::to_string(i) + "].policy",
                            "vmx cpu feature has to be set to require policy"});
        }
      }
    }
  }
  // ValidateVirtualMachineInstanceHypervMode.
  if (const json::Value* passthrough = json::find(*features, "hypervPassthrough");
      passthrough != nullptr && !passthrough->IsNull()) {
    causes.push_back({CauseType::field_value_invalid, "spec.domain.features.hyperv",
                      "Cannot explicitly set hyperV features if HypervPassthrough is being used. Please use either "
                      "HyperV or HypervPassthrough."});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
