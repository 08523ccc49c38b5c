// Reads: instancetype spec.{nodeSelector, schedulerName, cpu.*, memory.*, ioThreads,
// ioThreadsPolicy, launchSecurity, gpus, hostDevices, annotations}; VMI spec fields they own.
// Follows pkg/instancetype/apply/*.go: every applier runs and the conflicts are concatenated in
// KubeVirt's order; CPU collects all its conflicts, memory stops at the first.
#include <algorithm>
#include <cmath>
#include <limits>

#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/quantity.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::instancetype {

namespace {

using json::Allocator;
using json::Value;

std::string join(std::string_view base, std::initializer_list<std::string_view> parts) {
  std::string path(base);
  for (std::string_view part : parts) {
    if (!path.empty()) {
      path.push_back('.');
    }
    path.append(part);
  }
  return path;
}

bool has_resource(const Value& domain, std::string_view list, std::string_view resource) {
  const Value* resources = json::find_object(domain, "resources");
  const Value* entries = resources != nullptr ? json::find_object(*resources, list) : nullptr;
  return entries != nullptr && json::find(*entries, resource) != nullptr;
}

void apply_cpu(const Value& instancetype, const Value* preference, Value& vmi_spec, std::string_view base,
               std::vector<std::string>& conflicts, Allocator& allocator) {
  Value& domain = spec::domain(vmi_spec, allocator);
  json::ensure_object(domain, "cpu", allocator);
  const Value* it_cpu = json::find_object(instancetype, "cpu");
  const Value empty(rapidjson::kObjectType);
  const Value& wanted = it_cpu != nullptr ? *it_cpu : empty;

  const std::size_t before = conflicts.size();
  if (has_resource(domain, "requests", "cpu")) {
    conflicts.push_back(join(base, {"domain", "resources", "requests", "cpu"}));
  }
  if (has_resource(domain, "limits", "cpu")) {
    conflicts.push_back(join(base, {"domain", "resources", "limits", "cpu"}));
  }
  Value& cpu = *json::find(domain, "cpu");
  for (std::string_view count : {"sockets", "cores", "threads"}) {
    if (!json::is_zero(json::find(cpu, count))) {
      conflicts.push_back(join(base, {"domain", "cpu", count}));
    }
  }
  if (!spec::empty_string(cpu, "model") && json::has(wanted, "model")) {
    conflicts.push_back(join(base, {"domain", "cpu", "model"}));
  }
  // KubeVirt names these two by their Go field names, not their JSON names.
  if (spec::is_true(cpu, "dedicatedCpuPlacement") && json::has(wanted, "dedicatedCPUPlacement")) {
    conflicts.push_back(join(base, {"domain", "cpu", "dedicatedCPUPlacement"}));
  }
  if (spec::is_true(cpu, "isolateEmulatorThread") && json::has(wanted, "isolateEmulatorThread")) {
    conflicts.push_back(join(base, {"domain", "cpu", "isolateEmulatorThread"}));
  }
  for (std::string_view owned : {"numa", "realtime"}) {
    if (json::has(cpu, owned) && json::has(wanted, owned)) {
      conflicts.push_back(join(base, {"domain", "cpu", owned}));
    }
  }
  if (conflicts.size() != before) {
    return;
  }
  if (json::has(wanted, "model")) {
    json::set(cpu, "model", json::copy(*json::find(wanted, "model"), allocator), allocator);
  }
  if (json::has(wanted, "dedicatedCPUPlacement")) {
    json::set(cpu, "dedicatedCpuPlacement", json::copy(*json::find(wanted, "dedicatedCPUPlacement"), allocator),
              allocator);
  }
  for (std::string_view copied : {"isolateEmulatorThread", "numa", "realtime", "maxSockets"}) {
    if (json::has(wanted, copied)) {
      json::set(cpu, copied, json::copy(*json::find(wanted, copied), allocator), allocator);
    }
  }
  const Topology topology = guest_topology(spec::uint_or_zero(wanted, "guest"), preference);
  json::set(cpu, "cores", Value(topology.cores), allocator);
  json::set(cpu, "sockets", Value(topology.sockets), allocator);
  json::set(cpu, "threads", Value(topology.threads), allocator);
}

// overcommitPercent: requests.memory = guest × (1 − pct/100), computed in float32 and truncated
// exactly as KubeVirt does (apply/memory.go), keeping the guest's format.
void apply_overcommit(const Value& guest, std::int64_t percent, Value& domain, Allocator& allocator) {
  std::string text = guest.IsString() ? std::string(json::as_view(guest))
                                      : (guest.IsInt64() ? std::to_string(guest.GetInt64()) : std::string());
  Result<Quantity> quantity = Quantity::parse(text);
  if (!quantity) {
    return;  // the structural/quantity validation reports the bad guest value
  }
  Result<std::int64_t> bytes = quantity->value();
  if (!bytes) {
    return;
  }
  const float factor = 1.0F - static_cast<float>(percent) / 100.0F;
  const float requested = static_cast<float>(*bytes) * factor;
  if (!std::isfinite(requested) || requested >= 9.2e18F || requested <= -9.2e18F) {
    return;
  }
  const Quantity result = Quantity::from_int(static_cast<std::int64_t>(requested), quantity->format());
  Value& resources = json::ensure_object(domain, "resources", allocator);
  Value& requests = json::ensure_object(resources, "requests", allocator);
  json::set_string(requests, "memory", result.to_string(), allocator);
}

void apply_memory(const Value& instancetype, Value& vmi_spec, std::string_view base,
                  std::vector<std::string>& conflicts, Allocator& allocator) {
  Value& domain = spec::domain(vmi_spec, allocator);
  json::ensure_object(domain, "memory", allocator);
  const Value* it_memory = json::find_object(instancetype, "memory");
  const Value empty(rapidjson::kObjectType);
  const Value& wanted = it_memory != nullptr ? *it_memory : empty;
  const Value& memory = *json::find(domain, "memory");

  if (json::has(memory, "guest")) {
    conflicts.push_back(join(base, {"domain", "memory", "guest"}));
    return;
  }
  for (std::string_view owned : {"hugepages", "maxGuest"}) {
    if (json::has(memory, owned) && json::has(wanted, owned)) {
      conflicts.push_back(join(base, {"domain", "memory", owned}));
      return;
    }
  }
  if (has_resource(domain, "requests", "memory")) {
    conflicts.push_back(join(base, {"domain", "resources", "requests", "memory"}));
    return;
  }
  if (has_resource(domain, "limits", "memory")) {
    conflicts.push_back(join(base, {"domain", "resources", "limits", "memory"}));
    return;
  }
  const Value* guest = json::find(wanted, "guest");
  if (guest != nullptr && !guest->IsNull()) {
    json::set(*json::find(domain, "memory"), "guest", json::copy(*guest, allocator), allocator);
    const Value* overcommit = json::find(wanted, "overcommitPercent");
    if (overcommit != nullptr && overcommit->IsInt64() && overcommit->GetInt64() > 0) {
      apply_overcommit(*guest, overcommit->GetInt64(), domain, allocator);
    }
  }
  Value& target = *json::find(domain, "memory");
  for (std::string_view copied : {"hugepages", "maxGuest"}) {
    if (json::has(wanted, copied)) {
      json::set(target, copied, json::copy(*json::find(wanted, copied), allocator), allocator);
    }
  }
}

// nodeSelector, schedulerName, ioThreadsPolicy, launchSecurity: "both set" conflicts, else copy.
void apply_owned(const Value& instancetype, std::string_view from, Value& target, std::string_view to, std::string path,
                 bool strings, std::vector<std::string>& conflicts, Allocator& allocator) {
  const bool wanted = strings ? !spec::empty_string(instancetype, from) : json::has(instancetype, from);
  if (!wanted) {
    return;
  }
  const bool present = strings ? !spec::empty_string(target, to) : json::has(target, to);
  if (present) {
    conflicts.push_back(std::move(path));
    return;
  }
  json::set(target, to, json::copy(*json::find(instancetype, from), allocator), allocator);
}

void apply_device_list(const Value& instancetype, std::string_view name, Value& vmi_spec, std::string_view base,
                       std::vector<std::string>& conflicts, Allocator& allocator) {
  if (spec::empty_list(instancetype, name)) {
    return;
  }
  Value& devices = spec::devices(vmi_spec, allocator);
  if (!spec::empty_list(devices, name)) {
    conflicts.push_back(join(base, {"domain", "devices", name}));
    return;
  }
  json::set(devices, name, json::copy(*json::find(instancetype, name), allocator), allocator);
}

void apply_io_threads(const Value& instancetype, Value& vmi_spec, std::string_view base,
                      std::vector<std::string>& conflicts, Allocator& allocator) {
  const Value* threads = json::find_object(instancetype, "ioThreads");
  if (threads == nullptr || !json::has(*threads, "supplementalPoolThreadCount")) {
    return;
  }
  Value& domain = spec::domain(vmi_spec, allocator);
  if (const Value* existing = json::find_object(domain, "ioThreads");
      existing != nullptr && json::has(*existing, "supplementalPoolThreadCount")) {
    conflicts.push_back(join(base, {"domain", "ioThreads", "supplementalPoolThreadCount"}));
    return;
  }
  Value& target = json::ensure_object(domain, "ioThreads", allocator);
  json::set(target, "supplementalPoolThreadCount",
            json::copy(*json::find(*threads, "supplementalPoolThreadCount"), allocator), allocator);
}

void apply_annotations(const Value& instancetype, Value& metadata, std::vector<std::string>& conflicts,
                       Allocator& allocator) {
  const Value* wanted = json::find_object(instancetype, "annotations");
  if (!metadata.IsObject() || wanted == nullptr || wanted->ObjectEmpty()) {
    return;
  }
  Value& target = spec::annotations(metadata, allocator);
  // Go iterates a map in random order; sort the conflicting keys so output is reproducible.
  std::vector<std::string> conflicting;
  for (auto it = wanted->MemberBegin(); it != wanted->MemberEnd(); ++it) {
    const Value* existing = json::find(target, json::as_view(it->name));
    if (existing != nullptr) {
      if (!json::equal(*existing, it->value)) {
        conflicting.push_back("annotations." + std::string(json::as_view(it->name)));
      }
      continue;
    }
    target.AddMember(json::copy(it->name, allocator), json::copy(it->value, allocator), allocator);
  }
  std::sort(conflicting.begin(), conflicting.end());
  conflicts.insert(conflicts.end(), conflicting.begin(), conflicting.end());
}

}  // namespace

std::vector<std::string> apply(const json::Value& instancetype, const json::Value* preference, json::Value& vmi_spec,
                               json::Value& metadata, std::string_view base, json::Allocator& allocator) {
  std::vector<std::string> conflicts;
  if (!instancetype.IsObject() || !vmi_spec.IsObject()) {
    return conflicts;
  }
  apply_owned(instancetype, "nodeSelector", vmi_spec, "nodeSelector", join(base, {"nodeSelector"}), false, conflicts,
              allocator);
  apply_owned(instancetype, "schedulerName", vmi_spec, "schedulerName", join(base, {"schedulerName"}), true, conflicts,
              allocator);
  apply_cpu(instancetype, preference, vmi_spec, base, conflicts, allocator);
  apply_memory(instancetype, vmi_spec, base, conflicts, allocator);
  apply_io_threads(instancetype, vmi_spec, base, conflicts, allocator);
  apply_owned(instancetype, "ioThreadsPolicy", spec::domain(vmi_spec, allocator), "ioThreadsPolicy",
              join(base, {"domain", "ioThreadsPolicy"}), false, conflicts, allocator);
  apply_owned(instancetype, "launchSecurity", spec::domain(vmi_spec, allocator), "launchSecurity",
              join(base, {"domain", "launchSecurity"}), false, conflicts, allocator);
  apply_device_list(instancetype, "gpus", vmi_spec, base, conflicts, allocator);
  apply_device_list(instancetype, "hostDevices", vmi_spec, base, conflicts, allocator);
  apply_annotations(instancetype, metadata, conflicts, allocator);
  return conflicts;
}

ErrorList conflict_causes(const std::vector<std::string>& conflicts) {
  ErrorList causes;
  causes.reserve(conflicts.size());
  for (const std::string& path : conflicts) {
    causes.push_back(
        {CauseType::field_value_invalid, path, "VM field(s) " + path + " conflicts with selected instance type"});
  }
  return causes;
}

std::vector<std::string> apply_with_preference(const json::Value* instancetype, const json::Value* preference,
                                               json::Value& vmi_spec, json::Value& metadata, std::string_view base,
                                               json::Allocator& allocator, Release release) {
  if (instancetype != nullptr) {
    std::vector<std::string> conflicts = apply(*instancetype, preference, vmi_spec, metadata, base, allocator);
    if (!conflicts.empty()) {
      return conflicts;
    }
  }
  if (preference != nullptr) {
    preference::apply(*preference, vmi_spec, metadata, allocator, release);
  }
  return {};
}

}  // namespace vmgate::admission::instancetype
