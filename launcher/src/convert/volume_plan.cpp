// Follows KubeVirt's volume preparation in virt-launcher: container-disk.go (overlays),
// emptydisk.go (qcow2 of the capacity), hostdisk.go (DiskOrCreate), cloud-init.go (NoCloud ISO
// contents and meta-data). Runs after convert(), which already rejected unmapped fields, yet
// checks every type it reads so that no input can make it misbehave.
#include "vmgate/launcher/volume_plan.hpp"

#include <optional>
#include <string_view>

#include "vmgate/common/base64.hpp"
#include "vmgate/admission/quantity.hpp"

namespace vmgate::launcher {
namespace {

using json::Value;

constexpr std::uint64_t mebibyte = 1024ULL * 1024ULL;

Error field_error(const std::string& field, std::string_view message) {
  return Error{field + ": " + std::string(message)};
}

// A positive quantity of bytes, rounded down to whole MiB when `round_to_mebibyte`.
Result<std::uint64_t> capacity_bytes(const Value& source, const std::string& field, bool round_to_mebibyte) {
  const Value* capacity = json::find(source, "capacity");
  if (capacity == nullptr || !capacity->IsString()) {
    return field_error(field + ".capacity", "a quantity such as \"2Gi\" is required");
  }
  Result<admission::Quantity> parsed = admission::Quantity::parse(json::as_view(*capacity));
  if (!parsed) {
    return field_error(field + ".capacity", parsed.error().message);
  }
  Result<std::int64_t> bytes = parsed->value();
  if (!bytes || *bytes <= 0) {
    return field_error(field + ".capacity", "must be a positive quantity");
  }
  auto result = static_cast<std::uint64_t>(*bytes);
  if (round_to_mebibyte) {
    result -= result % mebibyte;
    if (result == 0) {
      return field_error(field + ".capacity", "must be at least 1Mi");
    }
  }
  return result;
}

// cloud-init.go readRawOrBase64Data: the raw text wins over its base64 twin.
Result<std::string> raw_or_base64(const Value& source, std::string_view raw_key, std::string_view base64_key,
                                  const std::string& field) {
  if (const Value* raw = json::find(source, raw_key); raw != nullptr && raw->IsString() && raw->GetStringLength() > 0) {
    return std::string(json::as_view(*raw));
  }
  const Value* encoded = json::find(source, base64_key);
  if (encoded == nullptr || !encoded->IsString() || encoded->GetStringLength() == 0) {
    return std::string();
  }
  std::optional<std::string> decoded = common::base64_decode(json::as_view(*encoded));
  if (!decoded) {
    return field_error(field + "." + std::string(base64_key), "is not valid base64");
  }
  return *decoded;
}

// dns.SanitizeHostname: spec.hostname, else the name up to its first dot, at most 63 bytes.
std::string hostname_of(const Value& vmi, std::string_view name) {
  const std::string_view hostname = json::find_string(*json::find(vmi, "spec"), "hostname");
  if (!hostname.empty()) {
    return std::string(hostname);
  }
  std::string_view label = name.substr(0, name.find('.'));
  return std::string(label.substr(0, 63));
}

// NoCloudMetadata as encoding/json writes it: instance-type (omitempty), instance-id (the
// firmware UUID admission set), local-hostname (omitempty).
std::string no_cloud_meta_data(const Value& vmi, std::string_view name) {
  json::Document meta(rapidjson::kObjectType);
  auto& allocator = meta.GetAllocator();
  const Value* annotations = json::find_path(vmi, {"metadata", "annotations"});
  std::string_view instancetype;
  if (annotations != nullptr) {
    instancetype = json::find_string(*annotations, "kubevirt.io/cluster-instancetype-name");
    if (instancetype.empty()) {
      instancetype = json::find_string(*annotations, "kubevirt.io/instancetype-name");
    }
  }
  if (!instancetype.empty()) {
    json::set_string(meta, "instance-type", instancetype, allocator);
  }
  const Value* firmware = json::find_path(vmi, {"spec", "domain", "firmware"});
  json::set_string(meta, "instance-id", firmware != nullptr ? json::find_string(*firmware, "uuid") : "", allocator);
  if (const std::string hostname = hostname_of(vmi, name); !hostname.empty()) {
    json::set_string(meta, "local-hostname", hostname, allocator);
  }
  return json::to_string(meta);
}

// ConfigDriveMetadata as encoding/json writes it when the source has none (cloud-init.go):
// instance_type (omitempty), instance_id "<name>.<namespace>", uuid the firmware UUID.
std::string config_drive_meta_data(const Value& vmi, std::string_view name, std::string_view namespace_name) {
  json::Document meta(rapidjson::kObjectType);
  auto& allocator = meta.GetAllocator();
  const Value* annotations = json::find_path(vmi, {"metadata", "annotations"});
  std::string_view instancetype;
  if (annotations != nullptr) {
    instancetype = json::find_string(*annotations, "kubevirt.io/cluster-instancetype-name");
    if (instancetype.empty()) {
      instancetype = json::find_string(*annotations, "kubevirt.io/instancetype-name");
    }
  }
  if (!instancetype.empty()) {
    json::set_string(meta, "instance_type", instancetype, allocator);
  }
  json::set_string(meta, "instance_id", std::string(name) + "." + std::string(namespace_name), allocator);
  const Value* firmware = json::find_path(vmi, {"spec", "domain", "firmware"});
  if (const std::string_view uuid = firmware != nullptr ? json::find_string(*firmware, "uuid") : ""; !uuid.empty()) {
    json::set_string(meta, "uuid", uuid, allocator);
  }
  return json::to_string(meta);
}

}  // namespace

bool is_claim(const json::Value& volume) {
  return json::find_object(volume, "persistentVolumeClaim") != nullptr ||
         json::find_object(volume, "dataVolume") != nullptr;
}

Result<VolumePlan> plan_volumes(const json::Value& vmi, const PodLayout& layout) {
  VolumePlan plan;
  const Value* spec = json::find(vmi, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    return field_error("spec", "must be an object");
  }
  const Value* volumes = json::find(*spec, "volumes");
  if (volumes == nullptr) {
    return plan;
  }
  if (!volumes->IsArray()) {
    return field_error("spec.volumes", "must be an array");
  }
  const Value* metadata = json::find_object(vmi, "metadata");
  const std::string_view name = metadata != nullptr ? json::find_string(*metadata, "name") : std::string_view();
  std::string_view namespace_name = metadata != nullptr ? json::find_string(*metadata, "namespace") : "";
  if (namespace_name.empty()) {
    namespace_name = "default";
  }
  // Volumes shared through virtiofs are served by virtiofsd from the pod's mount, not as disks.
  std::set<std::string, std::less<>> filesystems;
  if (const Value* list = json::find_path(*spec, {"domain", "devices", "filesystems"});
      list != nullptr && list->IsArray()) {
    for (const Value& filesystem : list->GetArray()) {
      if (filesystem.IsObject()) {
        filesystems.insert(std::string(json::find_string(filesystem, "name")));
      }
    }
  }
  for (rapidjson::SizeType i = 0; i < volumes->Size(); ++i) {
    const Value& volume = (*volumes)[i];
    const std::string field = "spec.volumes[" + std::to_string(i) + "]";
    if (!volume.IsObject()) {
      return field_error(field, "must be an object");
    }
    const std::string_view volume_name = json::find_string(volume, "name");
    if (volume_name.empty()) {
      return field_error(field + ".name", "required");
    }
    if (!is_file_name(volume_name)) {
      return field_error(field + ".name", "cannot name a file in the pod (contains '/' or is '.' or '..')");
    }
    if (filesystems.count(volume_name) != 0) {
      continue;
    }
    bool config = false;
    for (const char* kind : {"configMap", "secret", "downwardAPI", "serviceAccount", "sysprep"}) {
      if (const Value* source = json::find_object(volume, kind); source != nullptr) {
        const std::optional<ConfigDisk> disk = config_disk(layout, kind, volume_name);
        const std::string_view label = json::find_string(*source, "volumeLabel");
        plan.config_isos.push_back({field + "." + kind, disk->source_dir, disk->iso,
                                    label.empty() ? std::string("cfgdata") : std::string(label)});
        config = true;
      }
    }
    if (config) {
      continue;
    }
    if (const Value* source = json::find_object(volume, "containerDisk"); source != nullptr) {
      plan.overlays.push_back(
          {field + ".containerDisk", container_disk_volume(layout, i), container_disk_overlay(layout, volume_name)});
    } else if (const Value* empty = json::find_object(volume, "emptyDisk"); empty != nullptr) {
      Result<std::uint64_t> bytes = capacity_bytes(*empty, field + ".emptyDisk", true);
      if (!bytes) {
        return bytes.error();
      }
      plan.empty_disks.push_back({field + ".emptyDisk", empty_disk_file(layout, volume_name), *bytes});
    } else if (is_claim(volume)) {
      const std::string claim_field =
          field + (json::has(volume, "dataVolume") ? ".dataVolume" : ".persistentVolumeClaim");
      plan.files.push_back({claim_field,
                            layout.block_pvcs.count(std::string(volume_name)) != 0
                                ? pvc_block_device(layout, volume_name)
                                : pvc_disk_file(layout, volume_name),
                            0});
    } else if (const Value* host = json::find_object(volume, "hostDisk"); host != nullptr) {
      const std::string host_field = field + ".hostDisk";
      const std::string_view node_path = json::find_string(*host, "path");
      if (node_path.empty()) {
        return field_error(host_field + ".path", "required");
      }
      if (kube::pod_paths::host_disk_file_name(node_path).empty()) {
        return field_error(host_field + ".path", "must be an absolute path to a file of the node");
      }
      const std::string path = host_disk_file(layout, volume_name, node_path);
      const std::string_view type = json::find_string(*host, "type");
      if (type == "DiskOrCreate") {
        Result<std::uint64_t> bytes = capacity_bytes(*host, host_field, false);
        if (!bytes) {
          return bytes.error();
        }
        plan.files.push_back({host_field, path, *bytes});
      } else if (type == "Disk") {
        plan.files.push_back({host_field, path, 0});
      } else {
        return field_error(host_field + ".type", "must be Disk or DiskOrCreate");
      }
    } else if (const Value* cloud = json::find_object(volume, "cloudInitNoCloud"),
               *drive = json::find_object(volume, "cloudInitConfigDrive");
               cloud != nullptr || drive != nullptr) {
      const bool config_drive = cloud == nullptr;
      const Value& cloud_source = config_drive ? *drive : *cloud;
      const std::string cloud_field = field + (config_drive ? ".cloudInitConfigDrive" : ".cloudInitNoCloud");
      if (!plan.no_cloud.empty()) {
        return field_error(cloud_field, "only one cloud-init volume is supported");
      }
      Result<std::string> user_data = raw_or_base64(cloud_source, "userData", "userDataBase64", cloud_field);
      if (!user_data) {
        return user_data.error();
      }
      Result<std::string> network_data = raw_or_base64(cloud_source, "networkData", "networkDataBase64", cloud_field);
      if (!network_data) {
        return network_data.error();
      }
      // A secretRef's data is read from the pod's mount when the ISO is built.
      const bool user_secret = json::find_object(cloud_source, "secretRef") != nullptr;
      const bool network_secret = json::find_object(cloud_source, "networkDataSecretRef") != nullptr;
      if (user_data->empty() && network_data->empty() && !user_secret && !network_secret) {
        return field_error(cloud_field,
                           "userDataBase64, userData, networkDataBase64 or networkData is required for a cloud-init "
                           "data source");
      }
      if (!is_file_name(name) || !is_file_name(namespace_name)) {
        // The ISO's directory is named after them.
        return field_error("metadata", "a name and a namespace that can name files in the pod are required");
      }
      NoCloudIso iso{
          cloud_field,
          config_drive ? config_drive_iso(layout, namespace_name, name) : no_cloud_iso(layout, namespace_name, name),
          config_drive ? config_drive_meta_data(vmi, name, namespace_name) : no_cloud_meta_data(vmi, name),
          std::move(*user_data),
          std::move(*network_data),
          config_drive,
          user_secret ? cloud_init_secret_dir(layout, volume_name) : std::string(),
          network_secret ? cloud_init_secret_dir(layout, volume_name) : std::string()};
      plan.no_cloud.push_back(std::move(iso));
    }
  }
  return plan;
}

}  // namespace vmgate::launcher
