// Reads: spec.domain.cpu.{realtime, dedicatedCpuPlacement, numa.guestMappingPassthrough}.
// Follows vmi-create-admitter.go validateRealtime (validateCPURealtime, validateMemoryRealtime).
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_realtime(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* cpu = json::find_path(spec, {"domain", "cpu"});
  if (cpu == nullptr || !cpu->IsObject() || !json::has(*cpu, "realtime")) {
    return causes;
  }
  const FieldPath cpu_path = path.child("domain").child("cpu");
  const std::string realtime = cpu_path.child("realtime").str();
  if (!spec::is_true(*cpu, "dedicatedCpuPlacement")) {
    const std::string dedicated = cpu_path.child("dedicatedCpuPlacement").str();
    causes.push_back(
        {CauseType::field_value_required, dedicated, dedicated + " must be set to true when " + realtime + " is used"});
  }
  const json::Value* numa = json::find_object(*cpu, "numa");
  if (numa == nullptr || !json::has(*numa, "guestMappingPassthrough")) {
    const std::string passthrough = cpu_path.child("numa").child("guestMappingPassthrough").str();
    causes.push_back(
        {CauseType::field_value_required, passthrough, passthrough + " must be defined when " + realtime + " is used"});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
