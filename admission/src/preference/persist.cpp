// Reads: preference spec.{preferredArchitecture, machine.preferredMachineType,
// volumes.preferredStorageClassName}; writes VM spec.template.spec.architecture,
// spec.template.spec.domain.machine.type, spec.dataVolumeTemplates[*].spec.{pvc,storage}.storageClassName.
// Follows pkg/instancetype/webhooks/vm/mutator.go.
#include "vmgate/admission/preference/persist.hpp"

#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

void persist_into_vm(const json::Value* preference, json::Value& vm, json::Allocator& allocator) {
  if (preference == nullptr || !preference->IsObject()) {
    return;
  }
  if (json::Value* template_spec = json::find_path(vm, {"spec", "template", "spec"});
      template_spec != nullptr && template_spec->IsObject()) {
    apply_architecture(*preference, *template_spec, allocator);
    apply_machine(*preference, *template_spec, allocator);
  }
  const json::Value* volumes = json::find_object(*preference, "volumes");
  if (volumes == nullptr || spec::empty_string(*volumes, "preferredStorageClassName")) {
    return;
  }
  json::Value* templates = json::find_path(vm, {"spec", "dataVolumeTemplates"});
  if (templates == nullptr || !templates->IsArray()) {
    return;
  }
  // Under a per-request arena the VM to mutate shares its dataVolumeTemplates with the request's
  // object (Pipeline::mutate): written into, they are copied first.
  *templates = json::copy(*templates, allocator);
  for (json::Value& dvt : templates->GetArray()) {
    json::Value* dv_spec = json::find(dvt, "spec");
    if (dv_spec == nullptr || !dv_spec->IsObject()) {
      continue;
    }
    for (std::string_view target : {"pvc", "storage"}) {
      if (json::Value* claim = json::find(*dv_spec, target); claim != nullptr && claim->IsObject()) {
        spec::copy_if_unset(*volumes, "preferredStorageClassName", *claim, "storageClassName", allocator);
      }
    }
  }
}

}  // namespace vmgate::admission::preference
