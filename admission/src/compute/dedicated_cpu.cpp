// Reads: spec.architecture, spec.domain.cpu.{dedicatedCpuPlacement, cores, sockets, threads},
// spec.domain.resources.{requests,limits}.{cpu,memory}, spec.domain.memory.{hugepages, guest}.
// Follows vmi-create-admitter.go validateCpuPinning, in its order: memory provided, integer CPU
// requests and limits, memory requests equal to limits, CPUs from requests/limits/topology,
// requests equal to limits, requests or limits agreeing with the topology, one thread on arm64,
// at most two threads. KubeVirt's messages (with their trailing spaces and "interger") are kept.
#include <string>

#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

// Quantity.Value() of an optional quantity; 0 when absent (Go's zero Quantity).
std::int64_t whole(const std::optional<Quantity>& quantity) {
  Result<std::int64_t> value = quantity ? quantity->value() : Result<std::int64_t>(0);
  return value ? *value : 0;
}

std::int64_t milli(const std::optional<Quantity>& quantity) {
  Result<std::int64_t> value = quantity ? quantity->milli_value() : Result<std::int64_t>(0);
  return value ? *value : 0;
}

// hwutil.GetNumberOfVCPUs: cores × sockets × threads, ignoring the unset ones.
std::int64_t vcpus_of(const json::Value& cpu) {
  std::int64_t vcpus = 0;
  for (std::string_view key : {"cores", "sockets", "threads"}) {
    if (const auto count = static_cast<std::int64_t>(spec::uint_or_zero(cpu, key)); count != 0) {
      vcpus = vcpus == 0 ? count : vcpus * count;
    }
  }
  return vcpus;
}

bool memory_provided(const json::Value& domain) {
  const std::optional<Quantity> limit = resource_quantity(domain, "limits", "memory");
  const std::optional<Quantity> request = resource_quantity(domain, "requests", "memory");
  if ((limit && !limit->is_zero()) || (request && !request->is_zero())) {
    return true;
  }
  const json::Value* memory = json::find_object(domain, "memory");
  if (memory == nullptr) {
    return false;
  }
  if (json::has(*memory, "hugepages")) {
    return true;
  }
  const json::Value* guest = json::find(*memory, "guest");
  if (guest == nullptr || !guest->IsString()) {
    return false;
  }
  const Result<Quantity> parsed = Quantity::parse(json::as_view(*guest));
  return parsed && !parsed->is_zero();
}

}  // namespace

ErrorList validate_dedicated_cpu(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* domain = json::find_object(spec, "domain");
  const json::Value* cpu = domain != nullptr ? json::find_object(*domain, "cpu") : nullptr;
  if (cpu == nullptr || !spec::is_true(*cpu, "dedicatedCpuPlacement")) {
    return causes;
  }
  const FieldPath resources = path.child("domain").child("resources");
  const std::string request_cpu = resources.child("requests").child("cpu").str();
  const std::string limit_cpu = resources.child("limits").child("cpu").str();
  const std::string request_memory = resources.child("requests").child("memory").str();
  const std::string limit_memory = resources.child("limits").child("memory").str();
  const FieldPath cpu_path = path.child("domain").child("cpu");
  const std::string dedicated_field = cpu_path.child("dedicatedCpuPlacement").str();
  if (!memory_provided(*domain)) {
    causes.push_back({CauseType::field_value_invalid, limit_memory,
                      request_memory + ", " + limit_memory + ", " +
                          path.child("domain").child("memory").child("hugepages").str() + " or " +
                          path.child("domain").child("memory").child("guest").str() + " should be provided"});
  }
  const std::optional<Quantity> cpu_request = resource_quantity(*domain, "requests", "cpu");
  const std::optional<Quantity> cpu_limit = resource_quantity(*domain, "limits", "cpu");
  const std::int64_t requested = whole(cpu_request);
  const std::int64_t limited = whole(cpu_limit);
  if (requested > 0 && requested * 1000 != milli(cpu_request)) {
    causes.push_back(
        {CauseType::field_value_invalid, request_cpu, "provided resources CPU requests must be an interger"});
  }
  if (limited > 0 && limited * 1000 != milli(cpu_limit)) {
    causes.push_back({CauseType::field_value_invalid, limit_cpu, "provided resources CPU limits must be an interger"});
  }
  const std::int64_t memory_requested = whole(resource_quantity(*domain, "requests", "memory"));
  const std::int64_t memory_limited = whole(resource_quantity(*domain, "limits", "memory"));
  if (memory_requested > 0 && memory_limited > 0 && memory_requested != memory_limited) {
    causes.push_back(
        {CauseType::field_value_invalid, request_memory, request_memory + " must be equal to " + limit_memory});
  }
  const std::int64_t vcpus = vcpus_of(*cpu);
  const std::string cores = cpu_path.child("cores").str();
  if (requested == 0 && limited == 0 && vcpus == 0) {
    causes.push_back({CauseType::field_value_invalid, dedicated_field,
                      "either " + request_cpu + " or " + limit_cpu + " or " + cores +
                          " must be provided when DedicatedCPUPlacement is true "});
  }
  if (requested > 0 && limited > 0 && requested != limited) {
    causes.push_back({CauseType::field_value_invalid, dedicated_field,
                      request_cpu + " or " + limit_cpu + " must be equal when DedicatedCPUPlacement is true "});
  }
  if ((requested > 0 || limited > 0) && vcpus > 0 && requested != vcpus && limited != vcpus) {
    causes.push_back({CauseType::field_value_invalid, dedicated_field,
                      request_cpu + " or " + limit_cpu + " must not be provided at the same time with " + cores +
                          " when DedicatedCPUPlacement is true "});
  }
  const std::uint64_t threads = spec::uint_or_zero(*cpu, "threads");
  std::string_view arch = json::find_string(spec, "architecture");
  if (arch.empty()) {
    arch = config.default_architecture;
  }
  if (threads > 1 && arch == "arm64") {
    causes.push_back({CauseType::field_value_invalid, path.child("architecture").str(),
                      "threads must not be greater than 1 at " + cpu_path.child("threads").str() + " (got " +
                          std::to_string(threads) + ") when " + path.child("architecture").str() + " is arm64"});
  }
  if (threads > 2) {
    causes.push_back({CauseType::field_value_invalid, dedicated_field,
                      "Not more than two threads must be provided at " + cpu_path.child("threads").str() + " (got " +
                          std::to_string(threads) + ") when DedicatedCPUPlacement is true"});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
