// The VMI CREATE mutation in KubeVirt's order: vmi-mutator.go Mutate/ApplyNewVMIMutations and
// pkg/defaults/defaults.go SetDefaultVirtualMachineInstance.
#include "vmgate/admission/compute/cpu_model.hpp"
#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/defaults/hyperv_dependencies.hpp"
#include "vmgate/admission/defaults/vmi.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::defaults {

namespace {

void set_status(json::Value& vmi, const ClusterConfig& config, json::Allocator& allocator) {
  json::Value& status = json::ensure_object(vmi, "status", allocator);
  const json::Value* spec_value = json::find(vmi, "spec");
  const json::Value* guest =
      spec_value != nullptr ? json::find_path(*spec_value, {"domain", "memory", "guest"}) : nullptr;
  // setGuestMemoryStatus overwrites status.memory; setCurrentCPUTopologyStatus keeps an existing one.
  if (guest != nullptr && !guest->IsNull()) {
    json::Value memory(rapidjson::kObjectType);
    memory.AddMember("guestAtBoot", json::copy(*guest, allocator), allocator);
    memory.AddMember("guestCurrent", json::copy(*guest, allocator), allocator);
    memory.AddMember("guestRequested", json::copy(*guest, allocator), allocator);
    json::set(status, "memory", std::move(memory), allocator);
  }
  const json::Value* cpu = spec_value != nullptr ? json::find_path(*spec_value, {"domain", "cpu"}) : nullptr;
  if (cpu != nullptr && cpu->IsObject() && spec::unset(status, "currentCPUTopology")) {
    json::Value topology(rapidjson::kObjectType);
    for (std::string_view count : {"cores", "sockets", "threads"}) {
      if (const std::uint64_t value = spec::uint_or_zero(*cpu, count); value != 0) {  // omitempty
        topology.AddMember(json::make_string(count, allocator), json::Value(value), allocator);
      }
    }
    json::set(status, "currentCPUTopology", std::move(topology), allocator);
  }
  json::set_string(status, "phase", "Pending", allocator);
  if (!config.feature_gate_enabled("Root")) {
    json::set(status, "runtimeUser", json::Value(107), allocator);
  } else if (spec::unset(status, "runtimeUser")) {
    json::set(status, "runtimeUser", json::Value(0), allocator);  // no omitempty: KubeVirt writes 0
  }
}

// Mutate appends {phase: Pending, phaseTransitionTimestamp: now}; vmgate records it once (as the
// finalizer) so that mutating an admitted VMI again changes nothing.
void record_pending_transition(json::Value& status, std::string_view now, json::Allocator& allocator) {
  if (now.empty()) {
    return;
  }
  json::Value& transitions = json::ensure_array(status, "phaseTransitionTimestamps", allocator);
  for (const json::Value& transition : transitions.GetArray()) {
    if (transition.IsObject() && json::find_string(transition, "phase") == "Pending") {
      return;
    }
  }
  json::Value transition(rapidjson::kObjectType);
  json::set_string(transition, "phase", "Pending", allocator);
  json::set_string(transition, "phaseTransitionTimestamp", now, allocator);
  transitions.PushBack(std::move(transition), allocator);
}

}  // namespace

std::optional<std::string> apply_vmi_create_defaults(json::Value& vmi, std::string_view namespace_name,
                                                     const ClusterConfig& config, std::string_view now,
                                                     json::Allocator& allocator) {
  if (!vmi.IsObject()) {
    return std::nullopt;
  }
  json::Value& spec_value = json::ensure_object(vmi, "spec", allocator);
  if (auto error = set_spec_defaults(spec_value, config, allocator)) {
    return error;
  }
  const json::Value* metadata = json::find_object(vmi, "metadata");
  std::string seed;
  if (std::string_view uid = metadata != nullptr ? json::find_string(*metadata, "uid") : ""; !uid.empty()) {
    seed = "uid:" + std::string(uid);
  } else {
    seed = "vmi:" + std::string(namespace_name) + "/" +
           std::string(metadata != nullptr ? json::find_string(*metadata, "name") : "");
  }
  set_object_defaults(spec_value, seed, allocator);
  set_hyperv_dependencies(spec_value, allocator);
  set_arch_defaults(spec_value, allocator, config.release);
  cpu::set_default_model(spec_value, config, allocator);
  // KubeVirt records status.memory and currentCPUTopology before enabling hotplug.
  set_status(vmi, config, allocator);
  record_pending_transition(*json::find(vmi, "status"), now, allocator);
  set_hotplug_defaults(*json::find(vmi, "spec"), config, allocator);

  json::Value& meta = json::ensure_object(vmi, "metadata", allocator);
  if (annotates_pci_topology(*json::find(vmi, "spec"), config.release)) {
    set_pci_topology_version(meta, allocator);
  }
  // ApplyNewVMIMutations: the KubeVirt CR's request to complete an isolated emulator thread to an
  // even number of CPUs reaches the VMI when AlignCPUs is enabled.
  const json::Value* cpu = json::find_path(*json::find(vmi, "spec"), {"domain", "cpu"});
  if (cpu != nullptr && spec::is_true(*cpu, "isolateEmulatorThread") && config.emulator_thread_even_parity &&
      config.feature_gate_enabled("AlignCPUs")) {
    json::set_string(spec::annotations(*json::find(vmi, "metadata"), allocator),
                     "alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity", "", allocator);
  }
  // KubeVirt appends unconditionally; vmgate adds it once so that mutating an admitted VMI
  // again changes nothing (idempotent mutation).
  constexpr std::string_view finalizer = "kubevirt.io/foregroundDeleteVirtualMachine";
  json::Value& finalizers = json::ensure_array(*json::find(vmi, "metadata"), "finalizers", allocator);
  for (const json::Value& existing : finalizers.GetArray()) {
    if (existing.IsString() && json::as_view(existing) == finalizer) {
      return std::nullopt;
    }
  }
  finalizers.PushBack(json::make_string(finalizer, allocator), allocator);
  return std::nullopt;
}

}  // namespace vmgate::admission::defaults
