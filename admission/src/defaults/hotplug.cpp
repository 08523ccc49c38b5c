// Reads/writes: spec.domain.cpu.{maxSockets, sockets, cores, threads}, spec.domain.memory.{guest,
// maxGuest, hugepages.pageSize}; cluster liveUpdateConfiguration. Follows pkg/defaults/defaults.go
// setupHotplug and pkg/liveupdate/memory/memory.go ValidateLiveUpdateMemory (memory hotplug is
// simply not enabled when the VMI cannot use it).
#include <algorithm>

#include "vmgate/admission/defaults/vmi.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::defaults {

namespace {

constexpr std::int64_t hotplug_block_alignment = 2LL * 1024 * 1024;   // 2Mi
constexpr std::int64_t hugepage_1g_alignment = 1024LL * 1024 * 1024;  // 1Gi pages
constexpr std::int64_t min_hotplug_guest = 1024LL * 1024 * 1024;      // 1Gi

void set_cpu_hotplug(json::Value& domain, const ClusterConfig& config, json::Allocator& allocator) {
  json::Value& cpu = json::ensure_object(domain, "cpu", allocator);
  if (spec::uint_or_zero(cpu, "maxSockets") != 0) {
    return;
  }
  const std::uint64_t sockets = spec::uint_or_zero(cpu, "sockets");
  std::uint64_t max_sockets = config.max_cpu_sockets;
  if (max_sockets != 0 && sockets > max_sockets) {
    max_sockets = sockets;
  }
  if (max_sockets == 0) {
    // Each machine type has its own vCPU maximum; KubeVirt bounds the total at 512. Like Go, it
    // multiplies the raw cores and threads: a topology that leaves them 0 is never capped.
    constexpr std::uint64_t max_vcpus = 512;
    const std::uint64_t per_socket = spec::uint_or_zero(cpu, "cores") * spec::uint_or_zero(cpu, "threads");
    max_sockets = sockets * config.max_hotplug_ratio;
    if (max_sockets * per_socket > max_vcpus) {
      max_sockets = std::max(max_vcpus / per_socket, sockets);
    }
  }
  if (max_sockets != 0) {  // omitempty: a topology without sockets leaves maxSockets unset
    json::set(cpu, "maxSockets", json::Value(max_sockets), allocator);
  }
}

bool memory_hotplug_possible(const json::Value& vmi_spec, const Quantity& guest, const Quantity& max_guest) {
  const json::Value* domain = json::find_object(vmi_spec, "domain");
  if (domain == nullptr) {
    return false;
  }
  if (const json::Value* cpu = json::find_object(*domain, "cpu")) {
    if (json::has(*cpu, "realtime")) {
      return false;
    }
    if (const json::Value* numa = json::find_object(*cpu, "numa");
        numa != nullptr && json::has(*numa, "guestMappingPassthrough")) {
      return false;
    }
  }
  if (json::has(*domain, "launchSecurity")) {
    return false;
  }
  std::int64_t alignment = hotplug_block_alignment;
  if (const json::Value* hugepages = json::find_path(*domain, {"memory", "hugepages"});
      hugepages != nullptr && json::find_string(*hugepages, "pageSize") == "1Gi") {
    alignment = hugepage_1g_alignment;
  }
  if (guest > max_guest) {
    return false;
  }
  Result<std::int64_t> guest_bytes = guest.value();
  Result<std::int64_t> max_bytes = max_guest.value();
  if (!guest_bytes || !max_bytes || *guest_bytes % alignment != 0 || *max_bytes % alignment != 0) {
    return false;
  }
  return json::find_string(vmi_spec, "architecture") == "amd64" && *guest_bytes >= min_hotplug_guest;
}

void set_memory_hotplug(json::Value& vmi_spec, const ClusterConfig& config, json::Allocator& allocator) {
  json::Value& memory = json::ensure_object(spec::domain(vmi_spec, allocator), "memory", allocator);
  if (json::has(memory, "maxGuest")) {
    return;
  }
  const std::optional<Quantity> guest = quantity_at(memory, "guest");
  std::optional<Quantity> max_guest;
  if (!config.max_guest.empty()) {
    if (Result<Quantity> configured = Quantity::parse(config.max_guest); configured) {
      max_guest = *configured;
    }
  } else if (guest) {
    if (Result<std::int64_t> bytes = guest->value(); bytes) {
      Result<Quantity> scaled =
          Quantity::from_int(*bytes, Quantity::Format::binary_si).multiply(config.max_hotplug_ratio);
      if (scaled) {
        max_guest = *scaled;
      }
    }
  }
  if (!guest || !max_guest || !memory_hotplug_possible(vmi_spec, *guest, *max_guest)) {
    return;
  }
  json::set_string(*json::find_path(vmi_spec, {"domain", "memory"}), "maxGuest", max_guest->to_string(), allocator);
}

}  // namespace

void set_hotplug_defaults(json::Value& vmi_spec, const ClusterConfig& config, json::Allocator& allocator) {
  if (json::find_string(vmi_spec, "architecture") == "arm64" || config.vm_rollout_strategy != "LiveUpdate") {
    return;
  }
  set_cpu_hotplug(spec::domain(vmi_spec, allocator), config, allocator);
  set_memory_hotplug(vmi_spec, config, allocator);
}

}  // namespace vmgate::admission::defaults
