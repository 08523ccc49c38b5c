// Reads: spec.domain.devices.gpus[*].virtualGPUOptions.display.{enabled, ramFB.enabled}.
// Follows vmi-create-admitter.go validateMDEVRamFB: at most one vGPU display with ramfb, where an
// unset enabled counts as true (the API's "Defaults to true"). KubeVirt names the field
// "spec.GPUs" and ends its message with a space.
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

bool enabled_unless_false(const json::Value& object) {
  const json::Value* enabled = json::find(object, "enabled");
  return enabled == nullptr || !enabled->IsBool() || enabled->GetBool();
}

}  // namespace

ErrorList validate_gpu_displays(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* gpus = json::find_path(spec, {"domain", "devices", "gpus"});
  if (gpus == nullptr || !gpus->IsArray()) {
    return causes;
  }
  int ramfb_displays = 0;
  for (const json::Value& gpu : gpus->GetArray()) {
    const json::Value* display = gpu.IsObject() ? json::find_path(gpu, {"virtualGPUOptions", "display"}) : nullptr;
    if (display == nullptr || !display->IsObject() || !enabled_unless_false(*display)) {
      continue;
    }
    const json::Value* ramfb = json::find_object(*display, "ramFB");
    ramfb_displays += ramfb == nullptr || enabled_unless_false(*ramfb) ? 1 : 0;
  }
  if (ramfb_displays > 1) {
    causes.push_back({CauseType::field_value_invalid, path.child("GPUs").str(),
                      "configuring multiple displays with ramfb is not valid "});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
