// Reads: spec.dataVolumeTemplates[*].metadata.namespace, spec.{running, runStrategy},
// spec.template.spec.volumes, status.{snapshotInProgress, restoreInProgress} of the VM and, on
// UPDATE, of the old one. Follows pkg/storage/admitters/vm-storage-admitter.go Admit:
// data-volume-template.go validateVirtualMachineDataVolumeTemplateNamespace, then
// vm-storage-status.go validateSnapshotStatus and validateRestoreStatus; the first that finds
// something answers.
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

const json::Value& member_or_null(const json::Value* object, std::initializer_list<std::string_view> path) {
  static const json::Value null_value;
  const json::Value* value = object != nullptr ? json::find_path(*object, path) : nullptr;
  return value != nullptr ? *value : null_value;
}

// VirtualMachine.RunStrategy(): runStrategy, else running true/false as Always/Halted.
std::string_view run_strategy(const json::Value& vm) {
  const json::Value* spec = json::find_object(vm, "spec");
  if (spec == nullptr) {
    return {};
  }
  if (const std::string_view strategy = json::find_string(*spec, "runStrategy"); !strategy.empty()) {
    return strategy;
  }
  const json::Value* running = json::find(*spec, "running");
  if (running != nullptr && running->IsBool()) {
    return running->GetBool() ? "Always" : "Halted";
  }
  return {};
}

// compareRunningSpec: both `running` set and equal, or both `runStrategy` set and equal.
bool same_running_spec(const json::Value& old_vm, const json::Value& vm) {
  const json::Value& old_running = member_or_null(&old_vm, {"spec", "running"});
  const json::Value& running = member_or_null(&vm, {"spec", "running"});
  if (!old_running.IsNull() && !running.IsNull()) {
    return json::equal(old_running, running);
  }
  const json::Value& old_strategy = member_or_null(&old_vm, {"spec", "runStrategy"});
  const json::Value& strategy = member_or_null(&vm, {"spec", "runStrategy"});
  return !old_strategy.IsNull() && !strategy.IsNull() && json::equal(old_strategy, strategy);
}

ErrorList template_namespaces(const json::Value& vm, const json::Value* old_vm, bool update,
                              std::string_view namespace_name) {
  ErrorList causes;
  const json::Value& templates = member_or_null(&vm, {"spec", "dataVolumeTemplates"});
  // An UPDATE that leaves the templates as they were is not checked again.
  if (update && old_vm != nullptr && json::equal(member_or_null(old_vm, {"spec", "dataVolumeTemplates"}), templates)) {
    return causes;
  }
  if (!templates.IsArray()) {
    return causes;
  }
  for (rapidjson::SizeType i = 0; i < templates.Size(); ++i) {
    const std::string_view dv_namespace = json::find_string(member_or_null(&templates[i], {"metadata"}), "namespace");
    if (!dv_namespace.empty() && dv_namespace != namespace_name) {
      causes.push_back({CauseType::field_value_invalid, FieldPath("spec").child("dataVolumeTemplates").index(i).str(),
                        "Embedded DataVolume namespace " + std::string(dv_namespace) + " differs from VM namespace " +
                            std::string(namespace_name)});
    }
  }
  return causes;
}

ErrorList snapshot_status(const json::Value& vm, const json::Value& old_vm) {
  const std::string_view snapshot = json::find_string(member_or_null(&vm, {"status"}), "snapshotInProgress");
  if (snapshot.empty()) {
    return {};
  }
  const std::string quoted = "\"" + std::string(snapshot) + "\"";
  if (!json::equal(member_or_null(&old_vm, {"spec", "template", "spec", "volumes"}),
                   member_or_null(&vm, {"spec", "template", "spec", "volumes"}))) {
    return {{CauseType::field_value_not_supported, "spec",
             "Cannot update vm disks or volumes until snapshot " + quoted + " completes"}};
  }
  if (!same_running_spec(old_vm, vm)) {
    return {{CauseType::field_value_not_supported, "spec",
             "Cannot update vm running state until snapshot " + quoted + " completes"}};
  }
  return {};
}

ErrorList restore_status(const json::Value& vm, const json::Value& old_vm) {
  const std::string_view restore = json::find_string(member_or_null(&vm, {"status"}), "restoreInProgress");
  if (restore.empty() || json::equal(member_or_null(&old_vm, {"spec"}), member_or_null(&vm, {"spec"}))) {
    return {};
  }
  if (run_strategy(old_vm) != run_strategy(vm)) {
    return {{CauseType::field_value_not_supported, "spec",
             "Cannot update VM runStrategy until restore \"" + std::string(restore) + "\" completes"}};
  }
  return {};
}

}  // namespace

ErrorList validate_vm_storage(const json::Value& vm, const json::Value* old_vm, bool update,
                              std::string_view namespace_name) {
  if (update && old_vm == nullptr) {
    // KubeVirt cannot decode an absent oldObject on UPDATE either.
    return {{CauseType::unexpected_server_response, "", "Could not fetch old VM"}};
  }
  if (ErrorList causes = template_namespaces(vm, old_vm, update, namespace_name); !causes.empty()) {
    return causes;
  }
  if (!update) {
    return {};
  }
  if (ErrorList causes = snapshot_status(vm, *old_vm); !causes.empty()) {
    return causes;
  }
  return restore_status(vm, *old_vm);
}

}  // namespace vmgate::admission::validation
