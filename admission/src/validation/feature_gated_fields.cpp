// Fields that only a feature gate (or a KubeVirt CR setting) allows, each as its own
// vmi-create-admitter.go check: validatePersistentReservation, validateDownwardMetrics,
// validateFilesystemsWithVirtIOFSEnabled, validateRebootPolicy, validateReservedOverheadMemlock,
// and v1.7's validateArchitecture.
#include <string>
#include <unordered_map>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_persistent_reservation(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* disks = json::find_path(spec, {"domain", "devices", "disks"});
  if (disks == nullptr || !disks->IsArray() || config.persistent_reservation_enabled()) {
    return causes;
  }
  for (const json::Value& disk : disks->GetArray()) {
    const json::Value* lun = disk.IsObject() ? json::find_object(disk, "lun") : nullptr;
    const json::Value* reservation = lun != nullptr ? json::find(*lun, "reservation") : nullptr;
    if (reservation != nullptr && reservation->IsBool() && reservation->GetBool()) {
      causes.push_back({CauseType::field_value_invalid,
                        path.child("domain").child("devices").child("disks").child("luns").child("reservation").str(),
                        "persistent reservation is not enabled in kubevirt config"});
      break;
    }
  }
  return causes;
}

std::string_view webhook_architecture() {
#if defined(__aarch64__)
  return "arm64";
#elif defined(__s390x__)
  return "s390x";
#else
  return "amd64";
#endif
}

ErrorList validate_architecture_gate(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const std::string_view arch = json::find_string(spec, "architecture");
  if (config.release <= Release::v1_7 && !arch.empty() && arch != webhook_architecture() &&
      !config.feature_gate_enabled("MultiArchitecture")) {
    const std::string field = path.child("architecture").str();
    causes.push_back({CauseType::field_value_required, field,
                      "MultiArchitecture feature gate is not enabled in kubevirt-config, invalid entry " + field});
  }
  return causes;
}

ErrorList validate_downward_metrics_device(const json::Value& spec, const FieldPath& path,
                                           const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* devices = json::find_path(spec, {"domain", "devices"});
  if (devices != nullptr && json::has(*devices, "downwardMetrics") && !config.feature_gate_enabled("DownwardMetrics")) {
    causes.push_back({CauseType::field_value_invalid,
                      path.child("domain").child("devices").child("downwardMetrics").str(),
                      "downwardMetrics virtio serial is not allowed: DownwardMetrics feature gate is not enabled"});
  }
  return causes;
}

ErrorList validate_virtiofs_storage(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* filesystems = json::find_path(spec, {"domain", "devices", "filesystems"});
  const json::Value* volumes = json::find_array(spec, "volumes");
  // v1.7 still reads the deprecated ExperimentalVirtiofsSupport as both gates, and has
  // EnableVirtioFsConfigVolumes as an Alpha gate (GA at v1.8).
  const bool old_gate = config.release <= Release::v1_7 && config.feature_gate_enabled("ExperimentalVirtiofsSupport");
  const bool storage_enabled = old_gate || config.feature_gate_enabled("EnableVirtioFsStorageVolumes");
  const bool config_enabled = old_gate || config.feature_gate_enabled("EnableVirtioFsConfigVolumes");
  if (filesystems == nullptr || !filesystems->IsArray() || volumes == nullptr || (storage_enabled && config_enabled)) {
    return causes;
  }
  // storagetypes.GetVolumesByName: the last volume of a name wins.
  std::unordered_map<std::string_view, const json::Value*> volumes_by_name;
  for (const json::Value& volume : volumes->GetArray()) {
    if (volume.IsObject()) {
      volumes_by_name[json::find_string(volume, "name")] = &volume;
    }
  }
  for (const json::Value& filesystem : filesystems->GetArray()) {
    const auto volume = volumes_by_name.find(filesystem.IsObject() ? json::find_string(filesystem, "name") : "");
    if (volume == volumes_by_name.end()) {
      continue;
    }
    const json::Value& v = *volume->second;
    const bool config_volume = json::has(v, "configMap") || json::has(v, "secret") || json::has(v, "serviceAccount") ||
                               json::has(v, "downwardAPI");
    const bool storage_volume = json::has(v, "persistentVolumeClaim") || json::has(v, "dataVolume");
    if (config_volume && !config_enabled) {
      causes.push_back({CauseType::field_value_invalid,
                        path.child("domain").child("devices").child("filesystems").str(),
                        "virtiofs is not allowed: virtiofs feature gate is not enabled for config volumes"});
    } else if (storage_volume && !storage_enabled) {
      causes.push_back({CauseType::field_value_invalid,
                        path.child("domain").child("devices").child("filesystems").str(),
                        "virtiofs is not allowed: virtiofs feature gate is not enabled for PVC"});
    }
  }
  return causes;
}

ErrorList validate_reboot_policy(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* domain = json::find_object(spec, "domain");
  if (domain != nullptr && json::has(*domain, "rebootPolicy") && !config.feature_gate_enabled("RebootPolicy")) {
    causes.push_back({CauseType::field_value_invalid, path.child("domain").child("rebootPolicy").str(),
                      "RebootPolicy is specified but the RebootPolicy feature gate is not enabled"});
  }
  return causes;
}

ErrorList validate_reserved_overhead(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* memory = json::find_path(spec, {"domain", "memory"});
  if (memory != nullptr && memory->IsObject() && json::has(*memory, "reservedOverhead") &&
      !config.feature_gate_enabled("ReservedOverheadMemlock")) {
    causes.push_back({CauseType::field_value_invalid,
                      path.child("domain").child("memory").child("reservedOverhead").str(),
                      "Reserved overhead memlock feature gate is not enabled in kubevirt-config"});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
