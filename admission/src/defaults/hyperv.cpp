// Reads/writes: spec.domain.features.hyperv.{evmcs, vapic, ipi, tlbflush, synictimer, synic,
// vpindex}, spec.domain.cpu.features. Follows pkg/defaults/hyperv.go SetHypervFeatureDependencies
// (called best-effort by setDefaultHypervFeatureDependencies: a dependency the user disabled
// stops the walk, and the vmx feature for eVMCS, and is left to the validating webhook; earlier
// changes stay).
#include "vmgate/admission/defaults/hyperv_dependencies.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::defaults {

namespace {

using json::Value;

// Go's FeatureState.Enabled: a feature whose object or `enabled` is absent is "missing".
void enable(Value& hyperv, std::string_view key, json::Allocator& allocator) {
  Value& feature = json::ensure_object(hyperv, key, allocator);
  json::set(feature, "enabled", Value(true), allocator);
}

}  // namespace

FeatureState hyperv_feature_state(const json::Value& hyperv, std::string_view key) {
  const Value* feature = json::find(hyperv, key);
  const Value* enabled = feature != nullptr && feature->IsObject() ? json::find(*feature, "enabled") : nullptr;
  if (enabled == nullptr || !enabled->IsBool()) {
    return FeatureState::missing;
  }
  return enabled->GetBool() ? FeatureState::enabled : FeatureState::disabled;
}

void set_hyperv_dependencies(json::Value& vmi_spec, json::Allocator& allocator) {
  Value* hyperv = json::find_path(vmi_spec, {"domain", "features", "hyperv"});
  if (hyperv == nullptr || !hyperv->IsObject()) {
    return;
  }
  for (const HypervDependency& dependency : hyperv_dependencies) {
    if (hyperv_feature_state(*hyperv, dependency.feature) != FeatureState::enabled) {
      continue;
    }
    const FeatureState required = hyperv_feature_state(*hyperv, dependency.required);
    if (required == FeatureState::missing) {
      enable(*hyperv, dependency.required, allocator);
    } else if (required == FeatureState::disabled) {
      return;  // SetHypervFeatureDependencies returns its error before setEVMCSDependency
    }
  }
  // setEVMCSDependency: eVMCS needs the vmx CPU feature required.
  const Value* evmcs = json::find(*hyperv, "evmcs");
  if (evmcs == nullptr || evmcs->IsNull() || hyperv_feature_state(*hyperv, "evmcs") == FeatureState::disabled) {
    return;
  }
  Value& cpu = json::ensure_object(spec::domain(vmi_spec, allocator), "cpu", allocator);
  Value& features = json::ensure_array(cpu, "features", allocator);
  for (Value& feature : features.GetArray()) {
    if (feature.IsObject() && json::find_string(feature, "name") == "vmx") {
      if (json::find_string(feature, "policy") != "require") {
        json::set_string(feature, "policy", "require", allocator);
      }
      return;
    }
  }
  Value vmx(rapidjson::kObjectType);
  json::set_string(vmx, "name", "vmx", allocator);
  json::set_string(vmx, "policy", "require", allocator);
  features.PushBack(std::move(vmx), allocator);
}

}  // namespace vmgate::admission::defaults
