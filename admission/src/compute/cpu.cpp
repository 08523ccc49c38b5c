// Reads: spec.domain.cpu.{dedicatedCpuPlacement, isolateEmulatorThread, numa, realtime},
// spec.domain.resources.{requests,limits}.cpu, spec.domain.memory.hugepages.
// Follows vmi-create-admitter.go validateCPURequestNotNegative, validateCPULimitNotNegative,
// validateCpuRequestDoesNotExceedLimit, validateNUMA (the NUMA gate is GA) and
// validateCPUIsolatorThread. validateCpuPinning, between the two last, is dedicated_cpu.cpp.
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_cpu(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* domain = json::find_object(spec, "domain");
  if (domain == nullptr) {
    return causes;
  }
  const std::optional<Quantity> request = resource_quantity(*domain, "requests", "cpu");
  const std::optional<Quantity> limit = resource_quantity(*domain, "limits", "cpu");
  const FieldPath request_path = path.child("domain").child("resources").child("requests").child("cpu");
  const FieldPath limit_path = path.child("domain").child("resources").child("limits").child("cpu");
  if (request && request->sign() < 0) {
    causes.push_back({CauseType::field_value_invalid, request_path.str(),
                      request_path.str() + " '" + request->to_string() + "': must be greater than or equal to 0."});
  }
  if (limit && limit->sign() < 0) {
    causes.push_back({CauseType::field_value_invalid, limit_path.str(),
                      limit_path.str() + " '" + limit->to_string() + "': must be greater than or equal to 0."});
  }
  // Go compares MilliValue()s (rounded up to whole millicores), not exact values.
  const auto milli = [](const std::optional<Quantity>& quantity) -> std::int64_t {
    Result<std::int64_t> value = quantity ? quantity->milli_value() : Result<std::int64_t>(0);
    return value ? *value : 0;
  };
  if (request && limit && milli(limit) > 0 && milli(request) > milli(limit)) {
    causes.push_back({CauseType::field_value_invalid, request_path.str(),
                      request_path.str() + " '" + request->to_string() + "' is greater than " + limit_path.str() +
                          " '" + limit->to_string() + "'"});
  }
  const json::Value* cpu = json::find_object(*domain, "cpu");
  if (cpu == nullptr) {
    return causes;
  }
  const FieldPath cpu_path = path.child("domain").child("cpu");
  const bool dedicated = spec::is_true(*cpu, "dedicatedCpuPlacement");
  if (const json::Value* numa = json::find_object(*cpu, "numa");
      numa != nullptr && json::has(*numa, "guestMappingPassthrough")) {
    const std::string numa_field = cpu_path.child("numa").child("guestMappingPassthrough").str();
    if (!dedicated) {
      causes.push_back({CauseType::field_value_invalid, numa_field,
                        cpu_path.child("dedicatedCpuPlacement").str() +
                            " must be set to true when NUMA topology strategy is set in " + numa_field});
    }
    const json::Value* memory = json::find_object(*domain, "memory");
    if (memory == nullptr || !json::has(*memory, "hugepages")) {
      causes.push_back({CauseType::field_value_invalid, numa_field,
                        path.child("domain").child("memory").child("hugepages").str() +
                            " must be requested when NUMA topology strategy is set in " + numa_field});
    }
  }
  if (spec::is_true(*cpu, "isolateEmulatorThread") && !dedicated) {
    causes.push_back({CauseType::field_value_invalid, cpu_path.child("isolateEmulatorThread").str(),
                      "IsolateEmulatorThread should be only set in combination with DedicatedCPUPlacement"});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
