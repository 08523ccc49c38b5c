// Reads: spec.{startStrategy, livenessProbe}, spec.domain.devices.autoattachVSOCK. Follows
// vmi-create-admitter.go validateStartStrategy and validateVSOCK.
#include <string>

#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_start_strategy(const json::Value& spec, const FieldPath& path) {
  const json::Value* strategy = json::find(spec, "startStrategy");
  if (strategy == nullptr || !strategy->IsString()) {
    return {};  // unset, or a type error reported by the structure check
  }
  const std::string field = path.child("startStrategy").str();
  if (json::as_view(*strategy) != "Paused") {
    return {{CauseType::field_value_invalid, field,
             field + " is set with an unrecognized option: " + std::string(json::as_view(*strategy))}};
  }
  if (json::has(spec, "livenessProbe")) {
    return {{CauseType::field_value_invalid, field,
             "either " + field + " or " + path.child("livenessProbe").str() +
                 " should be provided.Pausing VMI with LivenessProbe is not supported"}};
  }
  return {};
}

ErrorList validate_vsock(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  const json::Value* devices = json::find_path(spec, {"domain", "devices"});
  if (devices == nullptr || !devices->IsObject() || !spec::is_true(*devices, "autoattachVSOCK") ||
      config.feature_gate_enabled("VSOCK")) {
    return {};
  }
  return {{CauseType::field_value_invalid, path.child("domain").child("devices").child("autoattachVSOCK").str(),
           "VSOCK feature gate is not enabled in kubevirt-config"}};
}

}  // namespace vmgate::admission::validation
