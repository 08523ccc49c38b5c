// Reads: VM spec.{template, running, runStrategy, dataVolumeTemplates}, metadata.namespace.
// Follows vms-admitter.go ValidateVirtualMachineSpec / validateRunStrategy and
// pkg/storage/admitters/data-volume-template.go.
#include <algorithm>
#include <array>

#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

void append(ErrorList& to, ErrorList&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

std::optional<FieldError> validate_data_volume(const json::Value& dvt, const FieldPath& path) {
  const json::Value* metadata = json::find_object(dvt, "metadata");
  if (metadata == nullptr || json::find_string(*metadata, "name").empty()) {
    return FieldError{CauseType::field_value_required, path.child("name").str(),
                      "'name' field must not be empty for DataVolumeTemplate entry " + path.child("name").str() + "."};
  }
  const json::Value* spec = json::find_object(dvt, "spec");
  const json::Value empty(rapidjson::kObjectType);
  const json::Value& s = spec != nullptr ? *spec : empty;
  const bool pvc = json::has(s, "pvc");
  const bool storage = json::has(s, "storage");
  if (!pvc && !storage) {
    return FieldError{CauseType::field_value_invalid, path.child("PVC").child("Storage").str(),
                      "Missing Data volume PVC or Storage"};
  }
  if (pvc && storage) {
    return FieldError{CauseType::field_value_invalid, path.child("PVC").child("Storage").str(),
                      "Duplicate storage definition, both target storage and target pvc defined"};
  }
  const json::Value& claim = *json::find(s, pvc ? "pvc" : "storage");
  const bool external = json::has(claim, "dataSourceRef") || json::has(claim, "dataSource");
  const bool sourced = json::has(s, "source") || json::has(s, "sourceRef");
  if (external && sourced) {
    return FieldError{CauseType::field_value_invalid, path.child("source").str(),
                      "External population is incompatible with Source and SourceRef"};
  }
  if (!external && !sourced) {
    return FieldError{CauseType::field_value_invalid, path.child("source").child("sourceRef").str(),
                      "Data volume should have either Source, SourceRef, or be externally populated"};
  }
  if (const json::Value* source = json::find_object(s, "source"); source != nullptr) {
    bool any = false;
    for (auto it = source->MemberBegin(); it != source->MemberEnd(); ++it) {
      any = any || !it->value.IsNull();
    }
    if (!any) {
      return FieldError{CauseType::field_value_invalid, path.child("source").str(), "Missing dataVolume valid source"};
    }
  }
  return std::nullopt;
}

ErrorList validate_data_volume_templates(const json::Value& vm, std::string_view namespace_name) {
  ErrorList causes;
  const json::Value* templates = json::find_path(vm, {"spec", "dataVolumeTemplates"});
  if (templates == nullptr || !templates->IsArray()) {
    return causes;
  }
  const json::Value* volumes = json::find_path(vm, {"spec", "template", "spec", "volumes"});
  const FieldPath base = FieldPath("spec").child("dataVolumeTemplate");
  for (rapidjson::SizeType i = 0; i < templates->Size(); ++i) {
    const json::Value& dvt = (*templates)[i];
    if (std::optional<FieldError> cause = validate_data_volume(dvt, base.index(i))) {
      causes.push_back(std::move(*cause));
      continue;
    }
    const json::Value& metadata = *json::find(dvt, "metadata");
    const std::string_view name = json::find_string(metadata, "name");
    bool referenced = false;
    if (volumes != nullptr && volumes->IsArray()) {
      for (const json::Value& volume : volumes->GetArray()) {
        const json::Value* pvc = json::find_object(volume, "persistentVolumeClaim");
        const json::Value* dv = json::find_object(volume, "dataVolume");
        if ((pvc != nullptr && json::find_string(*pvc, "claimName") == name) ||
            (dv != nullptr && json::find_string(*dv, "name") == name)) {
          referenced = true;
          break;
        }
      }
    }
    if (!referenced) {
      causes.push_back({CauseType::field_value_required, base.index(i).str(),
                        "DataVolumeTemplate entry " + base.index(i).str() +
                            " must be referenced in the VMI template's 'volumes' list"});
    }
    // vms-admitter.go validateVolumeRequests / storage admitter: embedded namespace must match.
    if (std::string_view dv_namespace = json::find_string(metadata, "namespace");
        !dv_namespace.empty() && dv_namespace != namespace_name) {
      causes.push_back({CauseType::field_value_invalid, base.index(i).child("metadata").child("namespace").str(),
                        "Embedded DataVolume namespace " + std::string(dv_namespace) + " differs from VM namespace " +
                            std::string(namespace_name)});
    }
  }
  return causes;
}

ErrorList validate_run_strategy(const json::Value& vm, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* spec = json::find_object(vm, "spec");
  const bool running = spec != nullptr && json::has(*spec, "running");
  const bool strategy = spec != nullptr && json::has(*spec, "runStrategy");
  if (running && strategy) {
    causes.push_back({CauseType::field_value_invalid, "spec.running",
                      "Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use "
                      "RunStrategy instead"});
  }
  if (!running && !strategy) {
    causes.push_back({CauseType::field_value_invalid, "spec.running", "RunStrategy must be specified"});
  }
  if (strategy) {
    const std::string value(json::find_string(*spec, "runStrategy"));
    if (value == "WaitAsReceiver") {
      if (!config.feature_gate_enabled("DecentralizedLiveMigration")) {
        causes.push_back({CauseType::field_value_invalid, "spec.runStrategy",
                          "Invalid RunStrategy (" + value +
                              "), DecentralizedLiveMigration feature gate is not enabled in kubevirt resource"});
      }
    } else {
      constexpr std::array<std::string_view, 5> valid{"Always", "RerunOnFailure", "Halted", "Manual", "Once"};
      if (std::find(valid.begin(), valid.end(), value) == valid.end()) {
        causes.push_back({CauseType::field_value_invalid, "spec.runStrategy", "Invalid RunStrategy (" + value + ")"});
      }
    }
  }
  return causes;
}

}  // namespace

ErrorList validate_vm_spec(const json::Value& vm, std::string_view namespace_name, const ClusterConfig& config) {
  const json::Value* template_value = json::find_path(vm, {"spec", "template"});
  if (template_value == nullptr || !template_value->IsObject()) {
    return {{CauseType::field_value_required, "spec.template", "missing virtual machine template."}};
  }
  ErrorList causes;
  const json::Value* template_spec = json::find_object(*template_value, "spec");
  const json::Value empty(rapidjson::kObjectType);
  append(causes, validate_vmi_spec(template_spec != nullptr ? *template_spec : empty,
                                   FieldPath("spec").child("template").child("spec"), config));
  append(causes, validate_data_volume_templates(vm, namespace_name));
  append(causes, validate_run_strategy(vm, config));
  return causes;
}

}  // namespace vmgate::admission::validation
