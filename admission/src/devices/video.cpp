// Reads: spec.domain.devices.{video, autoattachGraphicsDevice}, the VideoConfig feature gate.
// Follows vmi-create-admitter.go validateVideoConfig, whose causes name `<spec>.video` (not under
// devices); the gate is GA after v1.8, whose check of it comes first and alone.
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_video(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  const json::Value* devices = json::find_path(spec, {"domain", "devices"});
  if (devices == nullptr || !devices->IsObject() || !json::has(*devices, "video")) {
    return {};
  }
  if (!config.feature_gate_enabled("VideoConfig")) {
    return {{CauseType::field_value_invalid, path.child("video").str(),
             "Video configuration is specified but the VideoConfig feature gate is not enabled"}};
  }
  const json::Value* attach = json::find(*devices, "autoattachGraphicsDevice");
  if (attach != nullptr && attach->IsBool() && !attach->GetBool()) {
    return {{CauseType::field_value_invalid, path.child("video").str(),
             "Video configuration is not allowed when autoattachGraphicsDevice is set to false"}};
  }
  return {};
}

}  // namespace vmgate::admission::validation
