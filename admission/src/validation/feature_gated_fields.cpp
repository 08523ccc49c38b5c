// Fields that only a feature gate (or a KubeVirt CR setting) allows, each as its own
// vmi-create-admitter.go check: validatePersistentReservation, validateDownwardMetrics,
// validateFilesystemsWithVirtIOFSEnabled, validateRebootPolicy, validateReservedOverheadMemlock.
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
  if (filesystems == nullptr || !filesystems->IsArray() || volumes == nullptr ||
      config.feature_gate_enabled("EnableVirtioFsStorageVolumes")) {
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
    if (volume != volumes_by_name.end() &&
        (json::has(*volume->second, "persistentVolumeClaim") || json::has(*volume->second, "dataVolume"))) {
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
