// Reads: preference spec.devices.*; writes spec.domain.devices.* and spec.networks (read only).
// Follows pkg/instancetype/preference/apply/device.go, disk.go and interface.go.
#include <array>
#include <string_view>
#include <utility>

#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

namespace {

using json::Allocator;
using json::Value;

void apply_disks(const Value& preferred, Value& devices, Allocator& allocator) {
  Value* disks = json::find(devices, "disks");
  if (disks == nullptr || !disks->IsArray()) {
    return;
  }
  for (Value& disk : disks->GetArray()) {
    if (!disk.IsObject()) {
      continue;
    }
    spec::ensure_disk_target(disk, allocator);
    if (Value* target = json::find(disk, "disk"); target != nullptr && target->IsObject()) {
      spec::copy_string_if_empty(preferred, "preferredDiskBus", *target, "bus", allocator);
      spec::copy_if_unset(preferred, "preferredDiskBlockSize", disk, "blockSize", allocator);
      spec::copy_string_if_empty(preferred, "preferredDiskCache", disk, "cache", allocator);
      spec::copy_string_if_empty(preferred, "preferredDiskIO", disk, "io", allocator);
      // The dedicated IO thread only makes sense on virtio, judged after the preferred bus.
      target = json::find(disk, "disk");
      if (json::find_string(*target, "bus") == "virtio") {
        spec::copy_if_unset(preferred, "preferredDiskDedicatedIoThread", disk, "dedicatedIOThread", allocator);
      }
    } else if (Value* cdrom = json::find(disk, "cdrom"); cdrom != nullptr && cdrom->IsObject()) {
      spec::copy_string_if_empty(preferred, "preferredCdromBus", *cdrom, "bus", allocator);
    } else if (Value* lun = json::find(disk, "lun"); lun != nullptr && lun->IsObject()) {
      spec::copy_string_if_empty(preferred, "preferredLunBus", *lun, "bus", allocator);
    }
  }
}

// InterfaceBindingMethod members (JSON names) plus the binding plugin (interface.go
// isInterfaceBindingUnset).
bool binding_unset(const Value& iface) {
  constexpr std::array<std::string_view, 8> bindings{"bridge",  "slirp", "masquerade",   "sriov",
                                                     "macvtap", "passt", "passtBinding", "binding"};
  for (std::string_view binding : bindings) {
    if (json::has(iface, binding)) {
      return false;
    }
  }
  return true;
}

bool on_pod_network(std::string_view interface_name, const Value& vmi_spec) {
  if (const Value* networks = json::find_array(vmi_spec, "networks")) {
    for (const Value& network : networks->GetArray()) {
      if (json::find_string(network, "name") == interface_name) {
        return json::has(network, "pod");
      }
    }
  }
  return false;
}

void apply_interfaces(const Value& preferred, Value& vmi_spec, Allocator& allocator) {
  Value* interfaces = json::find_path(vmi_spec, {"domain", "devices", "interfaces"});
  if (interfaces == nullptr || !interfaces->IsArray()) {
    return;
  }
  const Value* masquerade = json::find(preferred, "preferredInterfaceMasquerade");
  for (Value& iface : interfaces->GetArray()) {
    if (!iface.IsObject()) {
      continue;
    }
    spec::copy_string_if_empty(preferred, "preferredInterfaceModel", iface, "model", allocator);
    if (masquerade != nullptr && !masquerade->IsNull() && binding_unset(iface) &&
        on_pod_network(json::find_string(iface, "name"), vmi_spec)) {
      json::set(iface, "masquerade", json::copy(*masquerade, allocator), allocator);
    }
  }
}

void apply_inputs(const Value& preferred, Value& devices, Allocator& allocator) {
  Value* inputs = json::find(devices, "inputs");
  if (inputs == nullptr || !inputs->IsArray()) {
    return;
  }
  for (Value& input : inputs->GetArray()) {
    if (input.IsObject()) {
      spec::copy_string_if_empty(preferred, "preferredInputBus", input, "bus", allocator);
      spec::copy_string_if_empty(preferred, "preferredInputType", input, "type", allocator);
    }
  }
}

// At v1.8 (device.go applyPanicDevicePreferences) the preferred model only fills the devices the
// VM has; from PR #18314 on it creates one when there is none.
void apply_panic_devices(const Value& preferred, Value& devices, Allocator& allocator, Release release) {
  const Value* model = json::find(preferred, "preferredPanicDeviceModel");
  if (model == nullptr || model->IsNull()) {
    return;
  }
  if (release <= Release::v1_8) {
    Value* existing = json::find(devices, "panicDevices");
    if (existing == nullptr || !existing->IsArray()) {
      return;
    }
  }
  Value& panic_devices = json::ensure_array(devices, "panicDevices", allocator);
  if (panic_devices.Empty()) {
    if (release <= Release::v1_8) {
      return;
    }
    Value device(rapidjson::kObjectType);
    device.AddMember("model", json::copy(*model, allocator), allocator);
    panic_devices.PushBack(std::move(device), allocator);
    return;
  }
  for (Value& device : panic_devices.GetArray()) {
    if (device.IsObject()) {
      spec::copy_if_unset(preferred, "preferredPanicDeviceModel", device, "model", allocator);
    }
  }
}

}  // namespace

void apply_autoattach(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  const Value* preferred = json::find_object(preference, "devices");
  if (preferred == nullptr) {
    return;
  }
  constexpr std::array<std::pair<std::string_view, std::string_view>, 5> fields{{
      {"preferredAutoattachGraphicsDevice", "autoattachGraphicsDevice"},
      {"preferredAutoattachMemBalloon", "autoattachMemBalloon"},
      {"preferredAutoattachPodInterface", "autoattachPodInterface"},
      {"preferredAutoattachSerialConsole", "autoattachSerialConsole"},
      {"preferredAutoattachInputDevice", "autoattachInputDevice"},
  }};
  for (const auto& [from, to] : fields) {
    if (json::has(*preferred, from)) {
      spec::copy_if_unset(*preferred, from, spec::devices(vmi_spec, allocator), to, allocator);
    }
  }
}

void apply_devices(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator, Release release) {
  const Value* preferred = json::find_object(preference, "devices");
  if (preferred == nullptr) {
    return;
  }
  Value& devices = spec::devices(vmi_spec, allocator);
  spec::copy_if_unset(*preferred, "preferredUseVirtioTransitional", devices, "useVirtioTransitional", allocator);
  spec::copy_if_unset(*preferred, "preferredBlockMultiQueue", devices, "blockMultiQueue", allocator);
  spec::copy_if_unset(*preferred, "preferredNetworkInterfaceMultiQueue", devices, "networkInterfaceMultiqueue",
                      allocator);
  // disableHotplug is a plain bool in the VMI: KubeVirt cannot tell "unset", so it overrides.
  if (const Value* disable = json::find(*preferred, "preferredDisableHotplug");
      disable != nullptr && disable->IsBool()) {
    json::set(devices, "disableHotplug", Value(disable->GetBool()), allocator);
  }
  if (Value* sound = json::find(devices, "sound"); sound != nullptr && sound->IsObject()) {
    spec::copy_string_if_empty(*preferred, "preferredSoundModel", *sound, "model", allocator);
  }
  spec::copy_if_unset(*preferred, "preferredRng", devices, "rng", allocator);
  spec::copy_if_unset(*preferred, "preferredTPM", devices, "tpm", allocator);
  // v1.8 has no preferredVideoType (PR #16812).
  if (release > Release::v1_8 && json::has(*preferred, "preferredVideoType")) {
    Value& video = json::ensure_object(devices, "video", allocator);
    spec::copy_string_if_empty(*preferred, "preferredVideoType", video, "type", allocator);
  }
  apply_autoattach(preference, vmi_spec, allocator);
  apply_disks(*preferred, devices, allocator);
  apply_interfaces(*preferred, vmi_spec, allocator);
  apply_inputs(*preferred, devices, allocator);
  apply_panic_devices(*preferred, devices, allocator, release);
}

}  // namespace vmgate::admission::preference
