// Reads/writes: spec.domain.{firmware, features, clock.timer, devices.disks, devices.gpus, devices.inputs},
// spec.{readinessProbe, livenessProbe}; reads spec.architecture. Follows
// staging/src/kubevirt.io/api/core/v1/defaults.go and zz_generated.defaults.go
// (SetObjectDefaults_VirtualMachineInstance), preceded by pkg/defaults/s390x.go setS390xDefaultFeatures.
#include <array>
#include <string_view>

#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/defaults/vmi.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::defaults {

namespace {

using json::Allocator;
using json::Value;

// SetDefaults_FeatureState and friends: the on/off member defaults to true on a present
// feature. It is `enabled` for features and `present` for clock timers (the Go field is
// Enabled in both, but the timers' JSON name is "present": api/core/v1/schema.go).
void enable_if_present(Value& parent, std::string_view key, Allocator& allocator,
                       std::string_view switch_name = "enabled") {
  Value* feature = json::find(parent, key);
  if (feature != nullptr && feature->IsObject() && spec::unset(*feature, switch_name)) {
    json::set(*feature, switch_name, Value(true), allocator);
  }
}

void set_feature_defaults(Value& domain, bool s390x, Allocator& allocator) {
  Value& features = json::ensure_object(domain, "features", allocator);
  // ACPI is a non-pointer struct in KubeVirt: it always exists and defaults to enabled, except on
  // s390x, where pkg/defaults/s390x.go setS390xDefaultFeatures disables it first (no ACPI there).
  Value& acpi = json::ensure_object(features, "acpi", allocator);
  if (s390x && spec::unset(acpi, "enabled")) {
    json::set(acpi, "enabled", Value(false), allocator);
  }
  enable_if_present(features, "acpi", allocator);
  enable_if_present(features, "apic", allocator);
  enable_if_present(features, "smm", allocator);
  enable_if_present(features, "pvspinlock", allocator);
  if (Value* hyperv = json::find(features, "hyperv"); hyperv != nullptr && hyperv->IsObject()) {
    constexpr std::array<std::string_view, 13> states{
        "relaxed", "vapic",    "spinlocks",   "vpindex",         "runtime",  "synic", "synictimer",
        "reset",   "vendorid", "frequencies", "reenlightenment", "tlbflush", "ipi"};
    for (std::string_view state : states) {
      enable_if_present(*hyperv, state, allocator);
    }
    enable_if_present(*hyperv, "evmcs", allocator);
    if (Value* spinlocks = json::find(*hyperv, "spinlocks"); spinlocks != nullptr && spinlocks->IsObject()) {
      const Value* enabled = json::find(*spinlocks, "enabled");
      if (enabled != nullptr && enabled->IsBool() && enabled->GetBool() && spec::unset(*spinlocks, "spinlocks")) {
        json::set(*spinlocks, "spinlocks", Value(4096U), allocator);
      }
    }
    for (std::string_view nested : {"synictimer", "tlbflush"}) {
      if (Value* parent = json::find(*hyperv, nested); parent != nullptr && parent->IsObject()) {
        enable_if_present(*parent, "direct", allocator);
        enable_if_present(*parent, "extended", allocator);
      }
    }
  }
}

void set_timer_defaults(Value& domain, Allocator& allocator) {
  Value* timer = json::find_path(domain, {"clock", "timer"});
  if (timer == nullptr || !timer->IsObject()) {
    return;
  }
  for (std::string_view name : {"hpet", "kvm", "pit", "rtc", "hyperv"}) {
    enable_if_present(*timer, name, allocator, "present");
  }
}

void set_disk_defaults(Value& devices, Allocator& allocator) {
  Value* disks = json::find(devices, "disks");
  if (disks == nullptr || !disks->IsArray()) {
    return;
  }
  for (Value& disk : disks->GetArray()) {
    if (!disk.IsObject()) {
      continue;
    }
    spec::ensure_disk_target(disk, allocator);
    if (Value* cdrom = json::find(disk, "cdrom"); cdrom != nullptr && cdrom->IsObject()) {
      if (spec::unset(*cdrom, "readonly")) {
        json::set(*cdrom, "readonly", Value(true), allocator);
      }
      if (spec::empty_string(*cdrom, "tray")) {
        json::set_string(*cdrom, "tray", "closed", allocator);
      }
    }
    if (Value* block_size = json::find(disk, "blockSize"); block_size != nullptr && block_size->IsObject()) {
      enable_if_present(*block_size, "matchVolume", allocator);
    }
  }
}

// SetObjectDefaults: gpus[*].virtualGPUOptions.display.ramFB is a FeatureState.
void set_gpu_defaults(Value& devices, Allocator& allocator) {
  Value* gpus = json::find(devices, "gpus");
  if (gpus == nullptr || !gpus->IsArray()) {
    return;
  }
  for (Value& gpu : gpus->GetArray()) {
    if (Value* display = json::find_path(gpu, {"virtualGPUOptions", "display"});
        display != nullptr && display->IsObject()) {
      enable_if_present(*display, "ramFB", allocator);
    }
  }
}

void set_input_defaults(Value& devices, Allocator& allocator) {
  Value* inputs = json::find(devices, "inputs");
  if (inputs == nullptr || !inputs->IsArray()) {
    return;
  }
  for (Value& input : inputs->GetArray()) {
    if (!input.IsObject()) {
      continue;
    }
    if (spec::empty_string(input, "bus")) {
      json::set_string(input, "bus", "usb", allocator);
    }
    if (spec::empty_string(input, "type")) {
      json::set_string(input, "type", "tablet", allocator);
    }
  }
}

void set_probe_defaults(Value& vmi_spec, std::string_view key, Allocator& allocator) {
  Value* probe = json::find(vmi_spec, key);
  if (probe == nullptr || !probe->IsObject()) {
    return;
  }
  constexpr std::array<std::pair<std::string_view, int>, 4> minimums{
      {{"timeoutSeconds", 1}, {"periodSeconds", 10}, {"successThreshold", 1}, {"failureThreshold", 3}}};
  for (const auto& [field, fallback] : minimums) {
    const Value* current = json::find(*probe, field);
    if (current == nullptr || !current->IsInt64() || current->GetInt64() < 1) {
      json::set(*probe, field, Value(fallback), allocator);
    }
  }
}

}  // namespace

void set_object_defaults(json::Value& vmi_spec, std::string_view uuid_seed, json::Allocator& allocator) {
  if (!vmi_spec.IsObject()) {
    return;
  }
  Value& domain = spec::domain(vmi_spec, allocator);
  Value& firmware = json::ensure_object(domain, "firmware", allocator);
  if (spec::empty_string(firmware, "uuid")) {
    // KubeVirt draws a random UUID here; vmgate derives one so the answer is reproducible.
    json::set_string(firmware, "uuid", name_based_uuid(std::string(uuid_seed) + "#firmware-uuid"), allocator);
  }
  set_feature_defaults(domain, json::find_string(vmi_spec, "architecture") == "s390x", allocator);
  set_timer_defaults(domain, allocator);
  Value& devices = json::ensure_object(domain, "devices", allocator);
  set_disk_defaults(devices, allocator);
  set_gpu_defaults(devices, allocator);
  set_input_defaults(devices, allocator);
  set_probe_defaults(vmi_spec, "readinessProbe", allocator);
  set_probe_defaults(vmi_spec, "livenessProbe", allocator);
}

}  // namespace vmgate::admission::defaults
