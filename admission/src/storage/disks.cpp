// Reads: spec.domain.devices.disks[*].{name, disk, cdrom, lun, bootOrder, dedicatedIOThread},
// spec.domain.devices.interfaces[*].bootOrder, spec.volumes[*].name. Follows
// pkg/storage/admitters/disks.go ValidateDisks (names, targets, bus support) and
// vmi-create-admitter.go validateBootOrder (disk → volume, boot orders unique across disks and
// interfaces).
#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/dns1123.hpp"
#include "storage/disk_rules.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

// `io_thread_path` reproduces KubeVirt's field for the IOThreads cause: validateBusSupport appends
// domain.devices.disks[i] to a path that already ends in domain.devices.disks.
void validate_bus(const json::Value& disk, const FieldPath& disk_path, const FieldPath& io_thread_path,
                  ErrorList& causes) {
  std::string_view type;
  for (std::string_view target : {"disk", "lun", "cdrom"}) {
    if (json::has(disk, target)) {
      type = target;
      break;
    }
  }
  if (type.empty()) {
    return;
  }
  const json::Value& target = *json::find(disk, type);
  const std::string_view bus = json::find_string(target, "bus");
  if (!bus.empty()) {
    if (bus == "ide") {
      causes.push_back(
          {CauseType::field_value_invalid, disk_path.child(type).child("bus").str(), "IDE bus is not supported"});
    } else if (bus == "virtio") {
      if (type == "cdrom") {
        causes.push_back({CauseType::field_value_invalid, disk_path.child("cdrom").child("bus").str(),
                          "Bus type virtio is invalid for CD-ROM device"});
      }
    } else if (bus == "sata") {
      if (type == "disk" && spec::is_true(target, "readonly")) {
        causes.push_back({CauseType::field_value_invalid, disk_path.child("disk").child("bus").str(),
                          "sata hard-disks do not support read-only."});
      }
    } else if (bus != "scsi" && bus != "usb") {
      causes.push_back({CauseType::field_value_invalid, disk_path.child(type).child("bus").str(),
                        disk_path.str() + " is set with an unrecognized bus " + std::string(bus) +
                            ", must be one of: [virtio scsi sata usb]"});
    }
  }
  if (spec::is_true(disk, "dedicatedIOThread") && bus != "virtio") {
    causes.push_back({CauseType::field_value_not_supported, io_thread_path.str(),
                      "IOThreads are not supported for disks on a " + std::string(bus) + " bus"});
  }
}

// validateInterfaceBootOrder, after the disks, sharing their boot orders. KubeVirt's "> 0"
// message indexes the spec's path itself ("spec[0] must have..."), a quirk kept as is.
void validate_interface_boot_orders(const json::Value& spec, const FieldPath& path,
                                    std::unordered_set<std::uint64_t>& boot_orders, ErrorList& causes) {
  const json::Value* interfaces = json::find_path(spec, {"domain", "devices", "interfaces"});
  if (interfaces == nullptr || !interfaces->IsArray()) {
    return;
  }
  const FieldPath interfaces_path = path.child("domain").child("devices").child("interfaces");
  for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
    const json::Value& interface = (*interfaces)[i];
    const json::Value* order = interface.IsObject() ? json::find(interface, "bootOrder") : nullptr;
    if (order == nullptr || !order->IsUint64()) {
      continue;  // unset, or a type error reported by the structure check
    }
    if (order->GetUint64() < 1) {
      causes.push_back({CauseType::field_value_invalid, path.index(i).child("bootOrder").str(),
                        path.index(i).str() + " must have a boot order > 0, if supplied"});
    } else if (!boot_orders.insert(order->GetUint64()).second) {
      const std::string field = interfaces_path.index(i).child("bootOrder").str();
      causes.push_back(
          {CauseType::field_value_invalid, field, "Boot order for " + field + " already set for a different device."});
    }
  }
}

// ValidateDisks after the bus: serial number, cache, IO mode, error policy, and the name as a
// container name (it may become one). KubeVirt's `field` is the disks list: some causes name
// `<disks>[i].x`, others the doubled `<disks>.domain.devices.disks[i].x`, and the IO mode
// message the list itself; kept as KubeVirt writes them.
void validate_disk_value_fields(const json::Value& disk, const FieldPath& disk_path, const FieldPath& disks_path,
                                const FieldPath& doubled, ErrorList& causes) {
  if (const std::string_view serial = json::find_string(disk, "serial"); !serial.empty()) {
    const bool valid = std::all_of(serial.begin(), serial.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '+' || c == '-';
    });
    if (!valid) {
      causes.push_back(
          {CauseType::field_value_invalid, disk_path.child("serial").str(),
           disk_path.str() + " must be made up of the following characters [A-Za-z0-9_.+-], if specified"});
    }
    constexpr std::size_t max_serial_runes = 256;
    const auto runes = static_cast<std::size_t>(std::count_if(serial.begin(), serial.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;  // UTF-8 lead bytes: one per rune
    }));
    if (runes > max_serial_runes) {
      causes.push_back({CauseType::field_value_invalid, disk_path.child("serial").str(),
                        disk_path.str() + " must be less than or equal to 256 in length, if specified"});
    }
  }
  if (const std::string_view cache = json::find_string(disk, "cache");
      !cache.empty() && cache != "none" && cache != "writethrough" && cache != "writeback") {
    causes.push_back({CauseType::field_value_invalid, disk_path.child("cache").str(),
                      disk_path.child("cache").str() + " has invalid value " + std::string(cache)});
  }
  if (const std::string_view io = json::find_string(disk, "io"); !io.empty() && io != "native" && io != "threads") {
    causes.push_back(
        {CauseType::field_value_not_supported, doubled.child("io").str(),
         "Disk IO mode for " + disks_path.str() + " is not supported. Supported modes are: native, threads."});
  }
  if (const json::Value* policy = json::find(disk, "errorPolicy"); policy != nullptr && policy->IsString()) {
    const std::string_view value = json::as_view(*policy);
    if (value != "stop" && value != "ignore" && value != "report" && value != "enospace") {
      causes.push_back({CauseType::field_value_invalid, disk_path.child("errorPolicy").str(),
                        disk_path.child("errorPolicy").str() + " has invalid value \"" + std::string(value) + "\""});
    }
  }
  for (std::string& error : dns1123_label_errors(json::find_string(disk, "name"))) {
    causes.push_back({CauseType::field_value_invalid, doubled.child("name").str(), std::move(error)});
  }
}

// validateBootOrder's checks of the volume behind a disk: a LUN needs a PVC or DataVolume,
// downwardMetrics a disk on the virtio bus.
void validate_disk_volume_kind(const json::Value& disk, const json::Value& volume, const FieldPath& disk_path,
                               ErrorList& causes) {
  if (json::has(disk, "lun") && !json::has(volume, "persistentVolumeClaim") && !json::has(volume, "dataVolume")) {
    causes.push_back(
        {CauseType::field_value_invalid, disk_path.child("lun").str(),
         disk_path.child("lun").str() + " can only be mapped to a DataVolume or PersistentVolumeClaim volume."});
  }
  if (!json::has(volume, "downwardMetrics")) {
    return;
  }
  const json::Value* target = json::find_object(disk, "disk");
  if (target == nullptr) {
    causes.push_back({CauseType::field_value_required, disk_path.child("disk").str(),
                      "DownwardMetrics volume must be mapped to a disk, but disk is not set on " +
                          disk_path.child("disk").str() + "."});
  } else if (const std::string_view bus = json::find_string(*target, "bus"); !bus.empty() && bus != "virtio") {
    causes.push_back({CauseType::field_value_invalid, disk_path.child("disk").child("bus").str(),
                      "DownwardMetrics volume must be mapped to virtio bus, but " +
                          disk_path.child("disk").child("bus").str() + " is set to " + std::string(bus)});
  }
}

}  // namespace

ErrorList validate_disk_volumes(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  std::unordered_set<std::uint64_t> boot_orders;
  const json::Value* disks = json::find_path(spec, {"domain", "devices", "disks"});
  if (disks == nullptr || !disks->IsArray()) {
    validate_interface_boot_orders(spec, path, boot_orders, causes);
    return causes;
  }
  const FieldPath disks_path = path.child("domain").child("devices").child("disks");
  std::unordered_map<std::string_view, const json::Value*> volumes;  // the last volume of a name wins
  if (const json::Value* list = json::find_array(spec, "volumes")) {
    for (const json::Value& volume : list->GetArray()) {
      volumes[json::find_string(volume, "name")] = &volume;
    }
  }
  for (rapidjson::SizeType i = 0; i < disks->Size(); ++i) {
    const json::Value& disk = (*disks)[i];
    const std::string_view name = json::find_string(disk, "name");
    const auto volume = volumes.find(name);
    if (volume == volumes.end()) {
      if (!json::has(disk, "cdrom")) {
        causes.push_back({CauseType::field_value_invalid, disks_path.index(i).child("name").str(),
                          disks_path.index(i).child("Name").str() + " '" + std::string(name) + "' not found."});
      } else if (!config.feature_gate_enabled("DeclarativeHotplugVolumes")) {
        causes.push_back({CauseType::field_value_invalid, disks_path.index(i).child("name").str(),
                          "DeclarativeHotplugVolumes feature gate not enabled, cannot define an empty CD-ROM disk"});
      }
    }
    if (volume != volumes.end()) {
      validate_disk_volume_kind(disk, *volume->second, disks_path.index(i), causes);
    }
    if (const json::Value* order = json::find(disk, "bootOrder"); order != nullptr && order->IsUint64()) {
      if (!boot_orders.insert(order->GetUint64()).second) {
        causes.push_back({CauseType::field_value_invalid, disks_path.index(i).child("bootOrder").str(),
                          "Boot order for " + disks_path.index(i).child("bootOrder").str() +
                              " already set for a different device."});
      }
    }
  }
  validate_interface_boot_orders(spec, path, boot_orders, causes);
  return causes;
}

ErrorList validate_disk_fields(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* disks = json::find_path(spec, {"domain", "devices", "disks"});
  if (disks == nullptr || !disks->IsArray()) {
    return causes;
  }
  const FieldPath disks_path = path.child("domain").child("devices").child("disks");
  std::unordered_map<std::string_view, rapidjson::SizeType> first_index;
  for (rapidjson::SizeType i = 0; i < disks->Size(); ++i) {
    const json::Value& disk = (*disks)[i];
    const FieldPath disk_path = disks_path.index(i);
    const std::string_view name = json::find_string(disk, "name");
    if (auto [it, inserted] = first_index.emplace(name, i); !inserted) {
      causes.push_back(
          {CauseType::field_value_invalid, disk_path.child("name").str(),
           disk_path.str() + " and " + disks_path.index(it->second).str() + " must not have the same Name."});
    }
    const int targets =
        (json::has(disk, "disk") ? 1 : 0) + (json::has(disk, "lun") ? 1 : 0) + (json::has(disk, "cdrom") ? 1 : 0);
    if (targets > 1) {
      causes.push_back({CauseType::field_value_invalid, disk_path.str(),
                        disk_path.str() + " can only have a single target type defined"});
    }
    validate_disk_pci_address(disk, disks_path, i, causes);
    if (const json::Value* order = json::find(disk, "bootOrder");
        order != nullptr && order->IsNumber() && order->GetDouble() < 1) {
      causes.push_back({CauseType::field_value_invalid, disk_path.child("bootOrder").str(),
                        disk_path.str() + " must have a boot order > 0, if supplied"});
    }
    const FieldPath doubled = disks_path.child("domain").child("devices").child("disks").index(i);
    validate_bus(disk, disk_path, doubled, causes);
    validate_disk_value_fields(disk, disk_path, disks_path, doubled, causes);
    validate_disk_block_size(disk, disk_path, causes);
  }
  return causes;
}

}  // namespace vmgate::admission::validation
