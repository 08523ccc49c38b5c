// Reads/writes: spec.architecture, spec.domain.devices.{disks[*].{disk,cdrom,lun}.bus, watchdog},
// spec.domain.firmware.bootloader.efi, spec.domain.cpu.model.
// Follows pkg/defaults/amd64.go, arm64.go and s390x.go: the default disk bus is sata on amd64
// (a KubeVirt choice users often do not expect) and virtio elsewhere; a watchdog gets i6300esb on
// amd64 and diag288 on s390x, with action reset.
#include "vmgate/admission/defaults/vmi.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::defaults {

namespace {

void set_disk_buses(json::Value& vmi_spec, std::string_view bus, json::Allocator& allocator) {
  json::Value* disks = json::find_path(vmi_spec, {"domain", "devices", "disks"});
  if (disks == nullptr || !disks->IsArray()) {
    return;
  }
  for (json::Value& disk : disks->GetArray()) {
    for (std::string_view target : {"disk", "cdrom", "lun"}) {
      json::Value* device = json::find(disk, target);
      if (device != nullptr && device->IsObject() && spec::empty_string(*device, "bus")) {
        json::set_string(*device, "bus", bus, allocator);
      }
    }
  }
}

// SetAmd64Watchdog / SetS390xWatchdog: a present watchdog gets the arch's device, action reset.
void set_watchdog(json::Value& vmi_spec, std::string_view device, json::Allocator& allocator) {
  json::Value* watchdog = json::find_path(vmi_spec, {"domain", "devices", "watchdog"});
  if (watchdog == nullptr || !watchdog->IsObject()) {
    return;
  }
  json::Value& model = json::ensure_object(*watchdog, device, allocator);
  if (spec::empty_string(model, "action")) {
    json::set_string(model, "action", "reset", allocator);
  }
}

void set_arm64_defaults(json::Value& vmi_spec, json::Allocator& allocator, Release release) {
  json::Value& domain = spec::domain(vmi_spec, allocator);
  json::Value& cpu = json::ensure_object(domain, "cpu", allocator);
  if (spec::empty_string(cpu, "model")) {
    json::set_string(cpu, "model", "host-passthrough", allocator);
  }
  json::Value* firmware = json::find(domain, "firmware");
  const json::Value* bootloader = firmware != nullptr ? json::find(*firmware, "bootloader") : nullptr;
  const bool given_bootloader = bootloader != nullptr && !bootloader->IsNull();
  if (!given_bootloader) {
    json::Value& fw = json::ensure_object(domain, "firmware", allocator);
    json::Value& loader = json::ensure_object(fw, "bootloader", allocator);
    json::set(loader, "efi", json::Value(rapidjson::kObjectType), allocator);
  }
  // pkg/defaults/arm64.go at v1.8.2 setDefaultArm64Bootloader: only the bootloader it creates.
  if (release <= Release::v1_8 && given_bootloader) {
    set_disk_buses(vmi_spec, "virtio", allocator);
    return;
  }
  json::Value* efi = json::find_path(domain, {"firmware", "bootloader", "efi"});
  if (efi != nullptr && efi->IsObject() && spec::unset(*efi, "secureBoot")) {
    json::set(*efi, "secureBoot", json::Value(false), allocator);
  }
  set_disk_buses(vmi_spec, "virtio", allocator);
}

}  // namespace

void set_arch_defaults(json::Value& vmi_spec, json::Allocator& allocator, Release release) {
  const std::string_view arch = json::find_string(vmi_spec, "architecture");
  if (arch == "arm64") {
    set_arm64_defaults(vmi_spec, allocator, release);
  } else if (arch == "s390x") {
    set_disk_buses(vmi_spec, "virtio", allocator);
    set_watchdog(vmi_spec, "diag288", allocator);
  } else {
    set_disk_buses(vmi_spec, "sata", allocator);
    set_watchdog(vmi_spec, "i6300esb", allocator);
  }
}

}  // namespace vmgate::admission::defaults
