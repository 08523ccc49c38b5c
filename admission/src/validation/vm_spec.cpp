// Reads: VM spec.{template, running, runStrategy, dataVolumeTemplates}, the template's
// domain.{cpu.{sockets,maxSockets,realtime,numa}, memory, launchSecurity} and architecture; the
// request's namespace. Follows vms-admitter.go ValidateVirtualMachineSpec (validateRunStrategy,
// validateLiveUpdateFeatures), pkg/storage/admitters/data-volume-template.go and, as the later
// storage stage, its namespace check.
#include <algorithm>
#include <array>

#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

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
    // validateNumberOfSources: exactly one DataVolumeSource member.
    int count = 0;
    for (auto it = source->MemberBegin(); it != source->MemberEnd(); ++it) {
      count += it->value.IsNull() ? 0 : 1;
    }
    if (count == 0) {
      return FieldError{CauseType::field_value_invalid, path.child("source").str(), "Missing dataVolume valid source"};
    }
    if (count > 1) {
      return FieldError{CauseType::field_value_invalid, path.child("source").str(), "Multiple dataVolume sources"};
    }
  }
  return std::nullopt;
}

ErrorList validate_data_volume_templates(const json::Value& vm) {
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
    const std::string_view name = json::find_string(*json::find(dvt, "metadata"), "name");
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
  }
  return causes;
}

// pkg/liveupdate/memory/memory.go ValidateLiveUpdateMemory: the first reason memory hotplug
// cannot work with this spec and maxGuest, or "" when it can.
std::string live_update_memory_problem(const json::Value& template_spec, const json::Value& domain,
                                       const Quantity& max_guest) {
  if (const json::Value* cpu = json::find_object(domain, "cpu")) {
    if (json::has(*cpu, "realtime")) {
      return "Memory hotplug is not compatible with realtime VMs";
    }
    if (const json::Value* numa = json::find_object(*cpu, "numa");
        numa != nullptr && json::has(*numa, "guestMappingPassthrough")) {
      return "Memory hotplug is not compatible with guest mapping passthrough";
    }
  }
  if (json::has(domain, "launchSecurity")) {
    return "Memory hotplug is not compatible with encrypted VMs";
  }
  const json::Value* memory = json::find_object(domain, "memory");
  std::int64_t alignment = 2LL * 1024 * 1024;
  std::string alignment_text = "2Mi";
  if (const json::Value* hugepages = memory != nullptr ? json::find_object(*memory, "hugepages") : nullptr;
      hugepages != nullptr && json::find_string(*hugepages, "pageSize") == "1Gi") {
    alignment = 1024LL * 1024 * 1024;
    alignment_text = "1Gi";
  }
  const std::optional<Quantity> guest = memory != nullptr ? quantity_at(*memory, "guest") : std::nullopt;
  if (!guest) {
    return "Guest memory must be configured when memory hotplug is enabled";
  }
  if (*guest > max_guest) {
    return "Guest memory is greater than the configured maxGuest memory";
  }
  const Result<std::int64_t> guest_bytes = guest->value();
  const Result<std::int64_t> max_bytes = max_guest.value();
  if (!guest_bytes || *guest_bytes % alignment != 0) {
    return "Guest memory must be " + alignment_text + " aligned";
  }
  if (!max_bytes || *max_bytes % alignment != 0) {
    return "MaxGuest must be " + alignment_text + " aligned";
  }
  if (json::find_string(template_spec, "architecture") != "amd64") {
    return "Memory hotplug is only available for x86_64 VMs";
  }
  if (*guest_bytes < 1024LL * 1024 * 1024) {
    return "Memory hotplug is only available for VMs with at least 1Gi of guest memory";
  }
  return "";
}

// vms-admitter.go validateLiveUpdateFeatures (LiveUpdate rollout only).
ErrorList validate_live_update(const json::Value& template_spec, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* domain = json::find_object(template_spec, "domain");
  if (config.vm_rollout_strategy != "LiveUpdate" || domain == nullptr) {
    return causes;
  }
  const FieldPath domain_path = FieldPath("spec").child("template").child("spec").child("domain");
  if (const json::Value* cpu = json::find_object(*domain, "cpu")) {
    const std::uint64_t sockets = spec::uint_or_zero(*cpu, "sockets");
    const std::uint64_t max_sockets = spec::uint_or_zero(*cpu, "maxSockets");
    if (sockets != 0 && max_sockets != 0 && sockets > max_sockets) {
      causes.push_back({CauseType::field_value_invalid, domain_path.child("cpu").child("sockets").str(),
                        "Number of sockets in CPU topology is greater than the maximum sockets allowed"});
    }
  }
  const json::Value* memory = json::find_object(*domain, "memory");
  if (const std::optional<Quantity> max_guest = memory != nullptr ? quantity_at(*memory, "maxGuest") : std::nullopt) {
    if (std::string problem = live_update_memory_problem(template_spec, *domain, *max_guest); !problem.empty()) {
      causes.push_back(
          {CauseType::field_value_invalid, domain_path.child("memory").child("guest").str(), std::move(problem)});
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

ErrorList validate_vm_spec(const json::Value& vm, const ClusterConfig& config, bool from_kubevirt_service_account) {
  const json::Value* template_value = json::find_path(vm, {"spec", "template"});
  if (template_value == nullptr || !template_value->IsObject()) {
    return {{CauseType::field_value_required, "spec.template", "missing virtual machine template."}};
  }
  ErrorList causes;
  const json::Value* template_spec = json::find_object(*template_value, "spec");
  const json::Value empty(rapidjson::kObjectType);
  const json::Value& spec_value = template_spec != nullptr ? *template_spec : empty;
  if (const json::Value* metadata = json::find_object(*template_value, "metadata")) {
    append(causes, validate_vmi_metadata(*metadata, FieldPath("spec").child("template").child("metadata"), config,
                                         from_kubevirt_service_account));
  }
  append(causes, validate_vmi_spec(spec_value, FieldPath("spec").child("template").child("spec"), config));
  append(causes, validate_data_volume_templates(vm));
  append(causes, validate_run_strategy(vm, config));
  append(causes, validate_live_update(spec_value, config));
  return causes;
}

}  // namespace vmgate::admission::validation
