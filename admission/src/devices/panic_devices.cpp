// Reads: spec.architecture, spec.domain.devices.panicDevices[*].model, the PanicDevices gate.
// Follows vmi-create-admitter.go validatePanicDevices: the gate (GA after v1.8), none on s390x,
// model hyperv, isa or pvpanic.
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_panic_devices(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* panic_devices = json::find_path(spec, {"domain", "devices", "panicDevices"});
  if (panic_devices == nullptr || !panic_devices->IsArray() || panic_devices->Empty()) {
    return causes;
  }
  const FieldPath field = path.child("domain").child("devices").child("panicDevices");
  // GA after v1.8; v1.8 reports the gate alone.
  if (!config.feature_gate_enabled("PanicDevices")) {
    causes.push_back(
        {CauseType::field_value_invalid, field.str(), "Panic Devices feature gate is not enabled in kubevirt-config"});
    return causes;
  }
  std::string_view arch = json::find_string(spec, "architecture");
  if (arch.empty()) {
    arch = config.default_architecture;
  }
  if (arch == "s390x") {
    causes.push_back({CauseType::field_value_invalid, field.str(),
                      "custom panic devices are not supported on " + std::string(arch) + " architecture"});
  }
  for (rapidjson::SizeType i = 0; i < panic_devices->Size(); ++i) {
    const json::Value& device = (*panic_devices)[i];
    const json::Value* model = device.IsObject() ? json::find(device, "model") : nullptr;
    if (model == nullptr || !model->IsString()) {
      continue;
    }
    const std::string_view name = json::as_view(*model);
    if (name != "hyperv" && name != "isa" && name != "pvpanic") {
      causes.push_back({CauseType::field_value_invalid, field.index(i).child("model").str(),
                        "invalid PanicDeviceModel(" + std::string(name) + ")"});
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
