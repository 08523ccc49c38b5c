// Reads: spec.domain.cpu.features[*].{name, policy}, spec.architecture, spec.domain.cpu.model.
// Follows vmi-create-admitter.go (CPU feature policies) and pkg/virt-api/webhooks/arm64.go.
#include <algorithm>
#include <array>

#include "vmgate/admission/compute/cpu_model.hpp"

namespace vmgate::admission::cpu {

ErrorList validate_feature_policies(const json::Value& vmi_spec, const FieldPath& spec_path) {
  ErrorList causes;
  const json::Value* features = json::find_path(vmi_spec, {"domain", "cpu", "features"});
  if (features == nullptr || !features->IsArray()) {
    return causes;
  }
  constexpr std::array<std::string_view, 6> policies{"", "force", "require", "optional", "disable", "forbid"};
  const FieldPath base = spec_path.child("domain").child("cpu").child("features");
  for (rapidjson::SizeType i = 0; i < features->Size(); ++i) {
    const json::Value& feature = (*features)[i];
    const std::string_view policy = json::find_string(feature, "policy");
    if (std::find(policies.begin(), policies.end(), policy) == policies.end()) {
      causes.push_back({CauseType::field_value_not_supported, base.index(i).child("policy").str(),
                        "CPU feature " + std::string(json::find_string(feature, "name")) + " uses policy " +
                            std::string(policy) + " that is not supported."});
    }
  }
  return causes;
}

ErrorList validate_arm64_model(const json::Value& vmi_spec, const FieldPath& spec_path) {
  if (json::find_string(vmi_spec, "architecture") != "arm64") {
    return {};
  }
  const json::Value* cpu = json::find_path(vmi_spec, {"domain", "cpu"});
  const std::string_view model = cpu != nullptr ? json::find_string(*cpu, "model") : "";
  if (!model.empty() && model != "host-passthrough") {
    return {{CauseType::field_value_not_supported, spec_path.child("domain").child("cpu").child("model").str(),
             "currently, host-passthrough is the only model supported on Arm64"}};
  }
  return {};
}

}  // namespace vmgate::admission::cpu
