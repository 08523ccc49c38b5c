// Reads: spec.domain.devices.{video, autoattachGraphicsDevice}. Follows vmi-create-admitter.go
// validateVideoConfig, whose cause names `<spec>.video` (not under devices).
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_video(const json::Value& spec, const FieldPath& path) {
  const json::Value* devices = json::find_path(spec, {"domain", "devices"});
  if (devices == nullptr || !devices->IsObject() || !json::has(*devices, "video")) {
    return {};
  }
  const json::Value* attach = json::find(*devices, "autoattachGraphicsDevice");
  if (attach != nullptr && attach->IsBool() && !attach->GetBool()) {
    return {{CauseType::field_value_invalid, path.child("video").str(),
             "Video configuration is not allowed when autoattachGraphicsDevice is set to false"}};
  }
  return {};
}

}  // namespace vmgate::admission::validation
