// Reads: spec.volumes[*] (name, the source members, cloud-init data, hostDisk, configMap,
// secret, serviceAccount). Follows vmi-create-admitter.go validateVolumes: unique names, exactly
// one source, cloud-init data sources and sizes, gates and required names per source, at most
// one serviceAccount, downwardMetrics and memoryDump volume.
#include <array>
#include <string>
#include <unordered_map>

#include "vmgate/common/base64.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

constexpr std::size_t cloud_init_max_bytes = 2048;

// The cloud-init data of a NoCloud or ConfigDrive source: one of user data and network data
// each, within 2048 bytes (decoded), and at least one of them.
void validate_cloud_init(const json::Value& source, std::string_view type, const FieldPath& volume_path,
                         ErrorList& causes) {
  const FieldPath source_path = volume_path.child(type);
  struct Data {
    std::string_view secret_ref;
    std::string_view base64;
    std::string_view raw;
    std::string_view label;  // "userdata" / "networkdata"
    std::string_view one_label;
    std::string_view base64_key;
    std::string_view secret_hint;
  };
  // The JSON keys of schema.go CloudInitNoCloudSource / CloudInitConfigDriveSource: the user
  // data Secret is `secretRef` (UserDataSecretRef's json tag), the network data Secret
  // `networkDataSecretRef`.
  const std::array<Data, 2> kinds{{
      {"secretRef", "userDataBase64", "userData", "userdata", "userdatasource", "userDataBase64", "UserDataSecretRef"},
      {"networkDataSecretRef", "networkDataBase64", "networkData", "networkdata", "networkdata source",
       "networkDataBase64", "NetworkDataSecretRef"},
  }};
  int total_sources = 0;
  for (const Data& data : kinds) {
    int sources = 0;
    std::size_t length = 0;
    if (const json::Value* ref = json::find_object(source, data.secret_ref);
        ref != nullptr && !json::find_string(*ref, "name").empty()) {
      ++sources;
    }
    if (const std::string_view encoded = json::find_string(source, data.base64); !encoded.empty()) {
      ++sources;
      const std::optional<std::string> decoded = common::base64_decode(encoded);
      if (!decoded) {
        const std::string field = source_path.child(data.base64_key).str();
        causes.push_back(
            {CauseType::field_value_invalid, field,
             field + "." + std::string(type) + "." + std::string(data.base64_key) + " is not a valid base64 value."});
      }
      length = decoded ? decoded->size() : 0;
    }
    if (const std::string_view raw = json::find_string(source, data.raw); !raw.empty()) {
      ++sources;
      length = raw.size();
    }
    if (sources > 1) {
      causes.push_back({CauseType::field_value_invalid, source_path.str(),
                        source_path.str() + " must have only one " + std::string(data.one_label) + " set."});
    }
    if (length > cloud_init_max_bytes) {
      causes.push_back({CauseType::field_value_invalid, source_path.str(),
                        source_path.str() + " " + std::string(data.label) + " exceeds 2048 byte limit. Should use " +
                            std::string(data.secret_hint) + " for larger data."});
    }
    total_sources += sources;
  }
  if (total_sources == 0) {
    causes.push_back({CauseType::field_value_invalid, source_path.str(),
                      source_path.str() + " must have at least one userdatasource or one networkdatasource set."});
  }
}

void validate_host_disk(const json::Value& host_disk, const FieldPath& volume_path, const ClusterConfig& config,
                        ErrorList& causes) {
  if (!config.feature_gate_enabled("HostDisk")) {
    causes.push_back({CauseType::field_value_invalid, volume_path.str(), "HostDisk feature gate is not enabled"});
  }
  const FieldPath path_field = volume_path.child("hostDisk").child("path");
  if (json::find_string(host_disk, "path").empty()) {
    causes.push_back(
        {CauseType::field_value_not_found, path_field.str(), path_field.str() + " is required for hostDisk volume"});
  }
  const std::string_view type = json::find_string(host_disk, "type");
  const FieldPath type_field = volume_path.child("hostDisk").child("type");
  if (type != "Disk" && type != "DiskOrCreate") {
    causes.push_back(
        {CauseType::field_value_invalid, type_field.str(),
         type_field.str() + " has invalid value '" + std::string(type) + "', allowed are 'Disk' or 'DiskOrCreate'"});
  }
  if (type == "Disk") {
    const std::optional<Quantity> capacity = quantity_at(host_disk, "capacity");
    if (capacity && capacity->sign() != 0) {
      const FieldPath capacity_field = volume_path.child("hostDisk").child("capacity");
      causes.push_back(
          {CauseType::field_value_invalid, capacity_field.str(),
           capacity_field.str() + " is allowed to pass only with " + type_field.str() + " equal to 'DiskOrCreate'"});
    }
  }
}

void require_name(const json::Value& volume, std::string_view source, std::string_view key,
                  const FieldPath& volume_path, ErrorList& causes) {
  const json::Value* value = json::find_object(volume, source);
  if (value != nullptr && json::find_string(*value, key).empty()) {
    const std::string field = volume_path.child(source).child(key).str();
    causes.push_back({CauseType::field_value_invalid, field, field + " is a required field"});
  }
}

}  // namespace

ErrorList validate_volumes(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* volumes = json::find_array(spec, "volumes");
  if (volumes == nullptr) {
    return causes;
  }
  const FieldPath volumes_path = path.child("volumes");
  constexpr std::array<std::string_view, 16> sources{"persistentVolumeClaim",
                                                     "sysprep",
                                                     "cloudInitNoCloud",
                                                     "cloudInitConfigDrive",
                                                     "containerDisk",
                                                     "ephemeral",
                                                     "emptyDisk",
                                                     "hostDisk",
                                                     "dataVolume",
                                                     "configMap",
                                                     "secret",
                                                     "downwardAPI",
                                                     "serviceAccount",
                                                     "downwardMetrics",
                                                     "memoryDump",
                                                     "containerPath"};
  std::unordered_map<std::string_view, rapidjson::SizeType> first_index;
  int service_accounts = 0;
  int downward_metrics = 0;
  int memory_dumps = 0;
  for (rapidjson::SizeType i = 0; i < volumes->Size(); ++i) {
    const json::Value& volume = (*volumes)[i];
    if (!volume.IsObject()) {
      continue;  // a type error reported by the structure check
    }
    const FieldPath volume_path = volumes_path.index(i);
    const std::string_view name = json::find_string(volume, "name");
    if (auto [it, inserted] = first_index.emplace(name, i); !inserted) {
      causes.push_back(
          {CauseType::field_value_invalid, volume_path.child("name").str(),
           volume_path.str() + " and " + volumes_path.index(it->second).str() + " must not have the same Name."});
    }
    int set = 0;
    for (std::string_view source : sources) {
      set += json::has(volume, source) ? 1 : 0;
    }
    if (const json::Value* data_volume = json::find_object(volume, "dataVolume");
        data_volume != nullptr && json::find_string(*data_volume, "name").empty()) {
      causes.push_back(
          {CauseType::field_value_required, volume_path.child("name").str(), "DataVolume 'name' must be set"});
    }
    service_accounts += json::has(volume, "serviceAccount") ? 1 : 0;
    downward_metrics += json::has(volume, "downwardMetrics") ? 1 : 0;
    memory_dumps += json::has(volume, "memoryDump") ? 1 : 0;
    if (set != 1) {
      causes.push_back({CauseType::field_value_invalid, volume_path.str(),
                        volume_path.str() + " must have exactly one source type set"});
    }
    for (std::string_view type : {"cloudInitNoCloud", "cloudInitConfigDrive"}) {
      if (const json::Value* source = json::find_object(volume, type)) {
        validate_cloud_init(*source, type, volume_path, causes);
        break;  // KubeVirt reads NoCloud when both are set
      }
    }
    if (json::has(volume, "downwardMetrics") && !config.feature_gate_enabled("DownwardMetrics")) {
      causes.push_back({CauseType::field_value_invalid, volume_path.str(),
                        "downwardMetrics disks are not allowed: DownwardMetrics feature gate is not enabled."});
    }
    if (const json::Value* host_disk = json::find_object(volume, "hostDisk")) {
      validate_host_disk(*host_disk, volume_path, config, causes);
    }
    require_name(volume, "configMap", "name", volume_path, causes);
    require_name(volume, "secret", "secretName", volume_path, causes);
    require_name(volume, "serviceAccount", "serviceAccountName", volume_path, causes);
  }
  const auto at_most_one = [&](int count, std::string_view what) {
    if (count > 1) {
      causes.push_back({CauseType::field_value_invalid, volumes_path.str(),
                        volumes_path.str() + " must have max one " + std::string(what) + " volume set"});
    }
  };
  at_most_one(service_accounts, "serviceAccount");
  at_most_one(downward_metrics, "downwardMetric");
  at_most_one(memory_dumps, "memory dump");
  return causes;
}

}  // namespace vmgate::admission::validation
