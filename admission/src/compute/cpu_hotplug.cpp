// Reads: spec.domain.cpu.{sockets, maxSockets}. Follows vmi-create-admitter.go validateCPUHotplug
// (for every rollout strategy; a VM under LiveUpdate gets the same cause again from
// validateLiveUpdateCPU).
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_cpu_hotplug(const json::Value& spec, const FieldPath& path) {
  const json::Value* cpu = json::find_path(spec, {"domain", "cpu"});
  if (cpu == nullptr || !cpu->IsObject()) {
    return {};
  }
  const std::uint64_t max_sockets = spec::uint_or_zero(*cpu, "maxSockets");
  if (max_sockets == 0 || spec::uint_or_zero(*cpu, "sockets") <= max_sockets) {
    return {};
  }
  return {{CauseType::field_value_invalid, path.child("domain").child("cpu").child("sockets").str(),
           "Number of sockets in CPU topology is greater than the maximum sockets allowed"}};
}

}  // namespace vmgate::admission::validation
