// Reads: spec.domain.devices.sound.{name, model}. Follows vmi-create-admitter.go
// validateSoundDevices, whose causes name the field "Sound" (Go's field name, not the JSON one).
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_sound(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* sound = json::find_path(spec, {"domain", "devices", "sound"});
  if (sound == nullptr || !sound->IsObject()) {
    return causes;
  }
  const std::string field = path.child("Sound").str();
  const std::string_view model = json::find_string(*sound, "model");
  if (!model.empty() && model != "ich9" && model != "ac97") {
    causes.push_back(
        {CauseType::field_value_invalid, field, "Sound device type is not supported. Options: 'ich9' or 'ac97'"});
  }
  if (json::find_string(*sound, "name").empty()) {
    causes.push_back({CauseType::field_value_invalid, field, "Sound device requires a name field."});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
