// Reads: VMI spec.volumes, spec.domain.devices.{disks,filesystems,watchdog,video,sound}, memory fields,
// architecture, spec.domain.firmware.bootloader.bios, spec.domain.cpu.model, metadata.labels.
// Follows vmi-create-admitter.go Admit: validateVirtualMachineInstanceSpecVolumeDisks,
// ValidateVirtualMachineInstanceMandatoryFields, ValidateVirtualMachineInstanceMetadata (reserved
// labels) and ValidateVirtualMachineInstancePerArch (pkg/virt-api/webhooks/{amd64,arm64,s390x}.go).
#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <unordered_set>

#include "vmgate/admission/compute/cpu_model.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

ErrorList volumes_need_disks(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* volumes = json::find_array(spec, "volumes");
  if (volumes == nullptr) {
    return causes;
  }
  std::unordered_set<std::string_view> targets;
  for (std::string_view list : {"disks", "filesystems"}) {
    const json::Value* entries = json::find_path(spec, {"domain", "devices", list});
    if (entries != nullptr && entries->IsArray()) {
      for (const json::Value& entry : entries->GetArray()) {
        targets.insert(json::find_string(entry, "name"));
      }
    }
  }
  for (rapidjson::SizeType i = 0; i < volumes->Size(); ++i) {
    const std::string_view name = json::find_string((*volumes)[i], "name");
    if (!targets.contains(name)) {
      const std::string field = path.child("domain").child("volumes").index(i).child("name").str();
      causes.push_back({CauseType::field_value_invalid, field, field + " '" + std::string(name) + "' not found."});
    }
  }
  return causes;
}

ErrorList memory_is_mandatory(const json::Value& spec, const FieldPath& path, Release release) {
  const json::Value* domain = json::find_object(spec, "domain");
  if (domain != nullptr) {
    if (std::optional<Quantity> requests = resource_quantity(*domain, "requests", "memory");
        requests && !requests->is_zero()) {
      return {};
    }
    const json::Value* memory = json::find_object(*domain, "memory");
    if (memory != nullptr && (json::has(*memory, "guest") || json::has(*memory, "hugepages"))) {
      return {};
    }
  }
  const FieldPath domain_path = path.child("domain");
  // KubeVirt's cause carries no field for this rule; v1.7 calls the page size hugepages.size.
  const std::string_view page_size = release <= Release::v1_7 ? "size" : "pageSize";
  return {{CauseType::field_value_required, "",
           "no memory requested, at least one of '" + domain_path.child("memory").child("guest").str() + "', '" +
               domain_path.child("memory").child("hugepages").child(page_size).str() + "' or '" +
               domain_path.child("resources").child("requests").child("memory").str() + "' must be set"}};
}

// pkg/virt-api/webhooks/{amd64,arm64,s390x}.go: a present video device must name one of the
// arch's models (an empty type is rejected too).
void check_video(const json::Value* devices, const FieldPath& path, std::string_view arch,
                 std::initializer_list<std::string_view> models, ErrorList& causes) {
  const json::Value* video = devices != nullptr ? json::find_object(*devices, "video") : nullptr;
  if (video == nullptr) {
    return;
  }
  const std::string_view type = json::find_string(*video, "type");
  if (std::find(models.begin(), models.end(), type) == models.end()) {
    causes.push_back(
        {CauseType::field_value_not_supported, path.child("domain").child("devices").child("video").child("type").str(),
         "video model '" + std::string(type) + "' is not supported on " + std::string(arch) + " architecture"});
  }
}

// isOnlyI6300ESBWatchdog / isOnlyDiag288Watchdog.
void check_watchdog(const json::Value* devices, const FieldPath& path, std::string_view wanted, std::string_view other,
                    std::string message, ErrorList& causes) {
  const json::Value* watchdog = devices != nullptr ? json::find_object(*devices, "watchdog") : nullptr;
  if (watchdog != nullptr && !(json::has(*watchdog, wanted) && !json::has(*watchdog, other))) {
    causes.push_back({CauseType::field_value_not_supported,
                      path.child("domain").child("devices").child("watchdog").str(), std::move(message)});
  }
}

ErrorList arm64_rules(const json::Value& spec, const json::Value* devices, const FieldPath& path, Release release) {
  ErrorList causes;
  const FieldPath devices_path = path.child("domain").child("devices");
  const FieldPath bootloader_path = path.child("domain").child("firmware").child("bootloader");
  const json::Value* bootloader = json::find_path(spec, {"domain", "firmware", "bootloader"});
  if (bootloader != nullptr && bootloader->IsObject() && json::has(*bootloader, "bios")) {
    causes.push_back({CauseType::field_value_not_supported, bootloader_path.child("bios").str(),
                      "Arm64 does not support bios boot, please change to uefi boot"});
  }
  // v1.8 (webhooks/arm64.go validateBootOptions) refuses Secure Boot on arm64, also when EFI
  // leaves it unset (it defaults to on); PR #16915 allowed it after v1.8.
  if (const json::Value* efi =
          bootloader != nullptr && bootloader->IsObject() ? json::find_object(*bootloader, "efi") : nullptr;
      release <= Release::v1_8 && efi != nullptr) {
    const json::Value* secure_boot = json::find(*efi, "secureBoot");
    if (secure_boot == nullptr || secure_boot->IsNull() || (secure_boot->IsBool() && secure_boot->GetBool())) {
      causes.push_back({CauseType::field_value_not_supported, bootloader_path.child("efi").child("secureboot").str(),
                        "UEFI secure boot is currently not supported on aarch64 Arch"});
    }
  }
  ErrorList model = cpu::validate_arm64_model(spec, path);
  causes.insert(causes.end(), model.begin(), model.end());
  if (const json::Value* disks = devices != nullptr ? json::find_array(*devices, "disks") : nullptr) {
    for (rapidjson::SizeType i = 0; i < disks->Size(); ++i) {
      for (std::string_view target : {"disk", "cdrom", "lun"}) {
        const json::Value* device = json::find_object((*disks)[i], target);
        const std::string_view bus = device != nullptr ? json::find_string(*device, "bus") : "";
        if (device != nullptr && !bus.empty() && bus != "virtio" && bus != "scsi") {
          causes.push_back({CauseType::field_value_not_supported,
                            devices_path.child("disks").index(i).child(target).child("bus").str(),
                            "Arm64 not support this disk bus type, please use virtio or scsi"});
        }
      }
    }
  }
  if (devices != nullptr && json::has(*devices, "watchdog")) {
    causes.push_back({CauseType::field_value_not_supported, devices_path.child("watchdog").str(),
                      "Arm64 not support Watchdog device"});
  }
  if (devices != nullptr && json::has(*devices, "sound")) {
    causes.push_back(
        {CauseType::field_value_not_supported, devices_path.child("sound").str(), "Arm64 not support sound device"});
  }
  check_video(devices, path, "arm64", {"virtio", "ramfb"}, causes);
  return causes;
}

ErrorList per_arch(const json::Value& spec, const FieldPath& path, Release release) {
  const std::string_view arch = json::find_string(spec, "architecture");
  const json::Value* devices = json::find_path(spec, {"domain", "devices"});
  if (devices != nullptr && !devices->IsObject()) {
    devices = nullptr;
  }
  ErrorList causes;
  if (arch == "amd64") {
    check_watchdog(devices, path, "i6300esb", "diag288", "amd64 only supports I6300ESB watchdog device", causes);
    check_video(devices, path, "amd64", {"vga", "cirrus", "virtio", "ramfb", "bochs"}, causes);
  } else if (arch == "arm64") {
    causes = arm64_rules(spec, devices, path, release);
  } else if (arch == "s390x") {
    check_watchdog(devices, path, "diag288", "i6300esb", "s390x only supports Diag288 watchdog device", causes);
    check_video(devices, path, "s390x", {"virtio"}, causes);
  } else {
    causes.push_back({CauseType::field_value_invalid, path.child("architecture").str(),
                      "unsupported architecture: " + std::string(arch)});
  }
  return causes;
}

}  // namespace

ErrorList validate_vmi_only(const json::Value& vmi, const ClusterConfig& config, bool from_kubevirt_service_account) {
  ErrorList causes;
  const json::Value* spec = json::find_object(vmi, "spec");
  const json::Value empty(rapidjson::kObjectType);
  const json::Value& s = spec != nullptr ? *spec : empty;
  const FieldPath path("spec");
  append(causes, volumes_need_disks(s, path));
  append(causes, memory_is_mandatory(s, path, config.release));
  if (const json::Value* metadata = json::find_object(vmi, "metadata")) {
    append(causes, validate_vmi_metadata(*metadata, FieldPath("metadata"), config, from_kubevirt_service_account));
  }
  append(causes, validate_hyperv(s));
  append(causes, per_arch(s, path, config.release));
  return causes;
}

}  // namespace vmgate::admission::validation
