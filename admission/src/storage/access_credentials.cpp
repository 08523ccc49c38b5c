// Reads: spec.accessCredentials[*].{sshPublicKey, userPassword}.{source.secret, propagationMethod},
// spec.volumes[*].{cloudInitNoCloud, cloudInitConfigDrive}. Follows vmi-create-admitter.go
// validateAccessCredentials: one credential type, one source, one propagation method, and the
// cloud-init volume that a noCloud/configDrive propagation writes into.
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

bool any_volume_has(const json::Value& spec, std::string_view source) {
  if (const json::Value* volumes = json::find_array(spec, "volumes")) {
    for (const json::Value& volume : volumes->GetArray()) {
      if (volume.IsObject() && json::has(volume, source)) {
        return true;
      }
    }
  }
  return false;
}

bool has_secret_source(const json::Value& credential) {
  const json::Value* source = json::find_object(credential, "source");
  return source != nullptr && json::has(*source, "secret");
}

void require_exactly_one(int count, const std::string& owner, const FieldPath& field, std::string_view what,
                         ErrorList& causes) {
  if (count != 1) {
    causes.push_back(
        {CauseType::field_value_invalid, field.str(), owner + " must have exactly one " + std::string(what) + " set"});
  }
}

void check_ssh_public_key(const json::Value& ssh, const std::string& owner, const FieldPath& field,
                          bool has_no_cloud_volume, bool has_config_drive_volume, ErrorList& causes) {
  const FieldPath method_field = field.child("propagationMethod");
  const json::Value* method = json::find_object(ssh, "propagationMethod");
  const json::Value empty(rapidjson::kObjectType);
  const json::Value& methods = method != nullptr ? *method : empty;
  int method_count = 0;
  if (json::has(methods, "noCloud")) {
    ++method_count;
    if (!has_no_cloud_volume) {
      causes.push_back({CauseType::field_value_invalid, method_field.str(),
                        owner + " requires a noCloud volume to exist when the noCloud propagationMethod is in use."});
    }
  }
  if (json::has(methods, "configDrive")) {
    ++method_count;
    if (!has_config_drive_volume) {
      causes.push_back(
          {CauseType::field_value_invalid, method_field.str(),
           owner + " requires a configDrive volume to exist when the configDrive propagationMethod is in use."});
    }
  }
  if (const json::Value* agent = json::find(methods, "qemuGuestAgent"); agent != nullptr && !agent->IsNull()) {
    const json::Value* users = json::find_array(*agent, "users");
    if (users == nullptr || users->Empty()) {
      causes.push_back({CauseType::field_value_invalid, method_field.child("qemuGuestAgent").child("users").str(),
                        owner + " requires at least one user to be present in the users list"});
    }
    ++method_count;
  }
  require_exactly_one(has_secret_source(ssh) ? 1 : 0, owner, field.child("source"), "source", causes);
  require_exactly_one(method_count, owner, method_field, "propagationMethod", causes);
}

void check_user_password(const json::Value& password, const std::string& owner, const FieldPath& field,
                         ErrorList& causes) {
  const json::Value* method = json::find_object(password, "propagationMethod");
  const int method_count = method != nullptr && json::has(*method, "qemuGuestAgent") ? 1 : 0;
  require_exactly_one(has_secret_source(password) ? 1 : 0, owner, field.child("source"), "source", causes);
  require_exactly_one(method_count, owner, field.child("propagationMethod"), "propagationMethod", causes);
}

}  // namespace

ErrorList validate_access_credentials(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* credentials = json::find_array(spec, "accessCredentials");
  if (credentials == nullptr) {
    return causes;
  }
  const bool has_no_cloud_volume = any_volume_has(spec, "cloudInitNoCloud");
  const bool has_config_drive_volume = any_volume_has(spec, "cloudInitConfigDrive");
  for (rapidjson::SizeType i = 0; i < credentials->Size(); ++i) {
    const json::Value& credential = (*credentials)[i];
    const FieldPath field = path.child("accessCredentials").index(i);
    const std::string& owner = field.str();
    int types = 0;
    if (const json::Value* ssh = json::find_object(credential, "sshPublicKey")) {
      ++types;
      check_ssh_public_key(*ssh, owner, field.child("sshPublicKey"), has_no_cloud_volume, has_config_drive_volume,
                           causes);
    }
    if (const json::Value* password = json::find_object(credential, "userPassword")) {
      ++types;
      check_user_password(*password, owner, field.child("userPassword"), causes);
    }
    require_exactly_one(types, owner, field, "access credential type", causes);
  }
  return causes;
}

}  // namespace vmgate::admission::validation
