// Reads: preference spec.requirements.{cpu.guest, memory.guest, architecture}, topology options;
// instancetype spec.{cpu.guest, memory.guest}; VMI spec.domain.{cpu, memory.guest}, spec.architecture.
// Follows pkg/instancetype/preference/requirements/{checker,cpu,memory,arch}.go.
#include <optional>
#include <string>
#include <vector>

#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/admission/preference/requirements.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

namespace {

struct Failure {
  std::vector<std::string> fields;
  std::string error;
};

const std::string cpu_base = "spec.template.spec.domain.cpu";

std::optional<Failure> insufficient_vm_cpu(std::uint64_t provided, std::uint64_t required, std::string_view as,
                                           std::vector<std::string> fields) {
  if (provided >= required) {
    return std::nullopt;
  }
  return Failure{std::move(fields), "insufficient CPU resources of " + std::to_string(provided) +
                                        " vCPU provided by VirtualMachine, preference requires " +
                                        std::to_string(required) + " vCPU provided as " + std::string(as)};
}

// KubeVirt multiplies the topology's uint32 counts in uint32, which wraps (65536 × 65536 is 0).
std::uint64_t uint32_product(std::initializer_list<std::uint64_t> counts) {
  std::uint32_t product = 1;
  for (const std::uint64_t count : counts) {
    product *= static_cast<std::uint32_t>(count);
  }
  return product;
}

std::optional<Failure> check_cpu(const json::Value* instancetype, const json::Value& preference, std::uint64_t required,
                                 const json::Value& vmi_spec) {
  if (instancetype != nullptr) {
    const json::Value* cpu = json::find_object(*instancetype, "cpu");
    const std::uint64_t guest = cpu != nullptr ? spec::uint_or_zero(*cpu, "guest") : 0;
    if (guest < required) {
      return Failure{{"spec.instancetype"},
                     "insufficient CPU resources of " + std::to_string(guest) +
                         " vCPU provided by instance type, preference requires " + std::to_string(required) + " vCPU"};
    }
    return std::nullopt;
  }
  const json::Value* cpu = json::find_path(vmi_spec, {"domain", "cpu"});
  if (cpu == nullptr || !cpu->IsObject()) {
    return Failure{
        {cpu_base},
        "no CPU resources provided by VirtualMachine, preference requires " + std::to_string(required) + " vCPU"};
  }
  const std::uint64_t sockets = spec::uint_or_zero(*cpu, "sockets");
  const std::uint64_t cores = spec::uint_or_zero(*cpu, "cores");
  const std::uint64_t threads = spec::uint_or_zero(*cpu, "threads");
  const std::string topology = instancetype::preferred_topology(&preference);
  if (topology == "threads" || topology == "preferThreads") {
    return insufficient_vm_cpu(threads, required, "threads", {cpu_base + ".threads"});
  }
  if (topology == "cores" || topology == "preferCores") {
    return insufficient_vm_cpu(cores, required, "cores", {cpu_base + ".cores"});
  }
  if (topology == "sockets" || topology == "preferSockets") {
    return insufficient_vm_cpu(sockets, required, "sockets", {cpu_base + ".sockets"});
  }
  if (topology == "spread" || topology == "preferSpread") {
    const std::string across = instancetype::spread_options(&preference).across;
    if (across == "SocketsCores") {
      return insufficient_vm_cpu(uint32_product({sockets, cores}), required, across,
                                 {cpu_base + ".sockets", cpu_base + ".cores"});
    }
    if (across == "CoresThreads") {
      return insufficient_vm_cpu(uint32_product({cores, threads}), required, across,
                                 {cpu_base + ".cores", cpu_base + ".threads"});
    }
    if (across == "SocketsCoresThreads") {
      return insufficient_vm_cpu(uint32_product({sockets, cores, threads}), required, across,
                                 {cpu_base + ".sockets", cpu_base + ".cores", cpu_base + ".threads"});
    }
    return insufficient_vm_cpu(0, required, across, {});
  }
  if (topology == "any" || topology == "preferAny") {
    return insufficient_vm_cpu(uint32_product({cores, sockets, threads}), required, "cores, sockets and threads",
                               {cpu_base + ".cores", cpu_base + ".sockets", cpu_base + ".threads"});
  }
  return std::nullopt;
}

std::optional<Failure> check_memory(const json::Value* instancetype, const Quantity& required,
                                    const json::Value& vmi_spec) {
  std::string field = "spec.template.spec.domain.memory";
  std::string provider = "VirtualMachine";
  Quantity provided = Quantity::from_int(0, Quantity::Format::binary_si);
  if (instancetype != nullptr) {
    field = "spec.instancetype";
    provider = "instance type";
    if (const json::Value* memory = json::find_object(*instancetype, "memory")) {
      if (std::optional<Quantity> guest = quantity_at(*memory, "guest")) {
        provided = *guest;
      }
    }
  }
  if (const json::Value* memory = json::find_path(vmi_spec, {"domain", "memory"}); memory != nullptr) {
    if (std::optional<Quantity> guest = quantity_at(*memory, "guest")) {
      provided = *guest;
    }
  }
  if (provided < required) {
    return Failure{{field},
                   "insufficient Memory resources of " + provided.to_string() + " provided by " + provider +
                       ", preference requires " + required.to_string()};
  }
  return std::nullopt;
}

}  // namespace

ErrorList check_requirements(const json::Value* instancetype, const json::Value& preference,
                             const json::Value& vmi_spec) {
  const json::Value* requirements = json::find_object(preference, "requirements");
  if (requirements == nullptr) {
    return {};
  }
  std::optional<Failure> failure;
  if (const json::Value* cpu = json::find_object(*requirements, "cpu")) {
    failure = check_cpu(instancetype, preference, spec::uint_or_zero(*cpu, "guest"), vmi_spec);
  }
  if (!failure) {
    if (const json::Value* memory = json::find_object(*requirements, "memory")) {
      if (std::optional<Quantity> required = quantity_at(*memory, "guest")) {
        failure = check_memory(instancetype, *required, vmi_spec);
      }
    }
  }
  if (!failure && json::has(*requirements, "architecture")) {
    const std::string_view required = json::find_string(*requirements, "architecture");
    const std::string_view actual = json::find_string(vmi_spec, "architecture");
    if (required != actual) {
      failure = Failure{{"spec.template.spec.architecture"},
                        "preference requires architecture " + std::string(required) + " but " + std::string(actual) +
                            " is being requested"};
    }
  }
  if (!failure) {
    return {};
  }
  std::string fields;
  for (const std::string& field : failure->fields) {
    fields.append(fields.empty() ? "" : ", ").append(field);
  }
  return {{CauseType::field_value_not_found, fields, "failure checking preference requirements: " + failure->error}};
}

}  // namespace vmgate::admission::preference
