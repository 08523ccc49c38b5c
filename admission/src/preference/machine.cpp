// Reads: preference spec.machine.preferredMachineType; writes spec.domain.machine.type.
// Follows pkg/instancetype/preference/apply/machine.go.
#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

void apply_machine(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  const json::Value* preferred = json::find_object(preference, "machine");
  if (preferred == nullptr || spec::empty_string(*preferred, "preferredMachineType")) {
    return;
  }
  json::Value& machine = json::ensure_object(spec::domain(vmi_spec, allocator), "machine", allocator);
  spec::copy_string_if_empty(*preferred, "preferredMachineType", machine, "type", allocator);
}

}  // namespace vmgate::admission::preference
