// The preference applier's fixed order: pkg/instancetype/preference/apply/vmi.go.
#include "vmgate/admission/preference/apply.hpp"

namespace vmgate::admission::preference {

void apply(const json::Value& preference, json::Value& vmi_spec, json::Value& metadata, json::Allocator& allocator,
           Release release) {
  if (!preference.IsObject() || !vmi_spec.IsObject()) {
    return;
  }
  apply_cpu(preference, vmi_spec, allocator);
  apply_devices(preference, vmi_spec, allocator, release);
  apply_features(preference, vmi_spec, allocator, release);
  apply_firmware(preference, vmi_spec, allocator);
  apply_machine(preference, vmi_spec, allocator);
  apply_clock(preference, vmi_spec, allocator);
  apply_subdomain(preference, vmi_spec, allocator);
  apply_termination_grace_period(preference, vmi_spec, allocator);
  apply_architecture(preference, vmi_spec, allocator);
  apply_annotations(preference, metadata, allocator);
  apply_launch_security(preference, vmi_spec, allocator, release);
}

}  // namespace vmgate::admission::preference
