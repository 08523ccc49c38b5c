// Reads: VMI spec.volumes, spec.domain.devices.{disks,filesystems}, memory fields, architecture,
// metadata.labels. Follows vmi-create-admitter.go Admit: validateVirtualMachineInstanceSpecVolumeDisks,
// ValidateVirtualMachineInstanceMandatoryFields, ValidateVirtualMachineInstanceMetadata and
// ValidateVirtualMachineInstancePerArch (pkg/virt-api/webhooks/{amd64,arm64,s390x}.go).
#include <algorithm>
#include <array>
#include <unordered_set>

#include "vmgate/admission/cpu/model.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

ErrorList volumes_need_disks(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* volumes = json::find_array(spec, "volumes");
  if (volumes == nullptr) {
    return causes;
  }
  std::unordered_set<std::string_view> targets;
  for (std::string_view list : {"disks", "filesystems"}) {
    const json::Value* entries = json::find_path(spec, {"domain", "devices", list});
    if (entries != nullptr && entries->IsArray()) {
      for (const json::Value& entry : entries->GetArray()) {
        targets.insert(json::find_string(entry, "name"));
      }
    }
  }
  for (rapidjson::SizeType i = 0; i < volumes->Size(); ++i) {
    const std::string_view name = json::find_string((*volumes)[i], "name");
    if (!targets.contains(name)) {
      const std::string field = path.child("domain").child("volumes").index(i).child("name").str();
      causes.push_back({CauseType::field_value_invalid, field, field + " '" + std::string(name) + "' not found."});
    }
  }
  return causes;
}

ErrorList memory_is_mandatory(const json::Value& spec, const FieldPath& path) {
  const json::Value* domain = json::find_object(spec, "domain");
  if (domain != nullptr) {
    if (std::optional<Quantity> requests = resource_quantity(*domain, "requests", "memory"); requests && !requests->is_zero()) {
      return {};
    }
    const json::Value* memory = json::find_object(*domain, "memory");
    if (memory != nullptr && (json::has(*memory, "guest") || json::has(*memory, "hugepages"))) {
      return {};
    }
  }
  const FieldPath domain_path = path.child("domain");
  // KubeVirt's cause carries no field for this rule.
  return {{CauseType::field_value_required, "",
           "no memory requested, at least one of '" + domain_path.child("memory").child("guest").str() + "', '" +
               domain_path.child("memory").child("hugepages").child("pageSize").str() + "' or '" +
               domain_path.child("resources").child("requests").child("memory").str() + "' must be set"}};
}

ErrorList reserved_labels(const json::Value& vmi, bool from_kubevirt_service_account) {
  if (from_kubevirt_service_account) {
    return {};
  }
  const json::Value* labels = json::find_path(vmi, {"metadata", "labels"});
  if (labels == nullptr || !labels->IsObject()) {
    return {};
  }
  // pkg/virt-api/webhooks/validating-webhook/admitters: restrictedVmiLabels.
  constexpr std::array<std::string_view, 5> reserved{"kubevirt.io/created-by", "kubevirt.io/nodeName",
                                                     "kubevirt.io/migrationJobUID", "kubevirt.io/migrationTargetNodeName",
                                                     "kubevirt.io/outdatedLauncherImage"};
  for (std::string_view label : reserved) {
    if (json::find(*labels, label) != nullptr) {
      return {{CauseType::field_value_not_supported, "metadata.labels",
               "creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited"}};
    }
  }
  return {};
}

ErrorList per_arch(const json::Value& spec, const FieldPath& path) {
  const std::string_view arch = json::find_string(spec, "architecture");
  const json::Value* devices = json::find_path(spec, {"domain", "devices"});
  if (arch == "amd64") {
    ErrorList causes;
    if (devices != nullptr) {
      if (const json::Value* watchdog = json::find_object(*devices, "watchdog");
          watchdog != nullptr && !json::has(*watchdog, "i6300esb")) {
        causes.push_back({CauseType::field_value_invalid, path.child("domain").child("devices").child("watchdog").str(),
                          "amd64 only supports I6300ESB watchdog device"});
      }
      if (const json::Value* video = json::find_object(*devices, "video")) {
        const std::string_view type = json::find_string(*video, "type");
        constexpr std::array<std::string_view, 5> types{"vga", "cirrus", "virtio", "ramfb", "bochs"};
        if (!type.empty() && std::find(types.begin(), types.end(), type) == types.end()) {
          causes.push_back({CauseType::field_value_not_supported,
                            path.child("domain").child("devices").child("video").child("type").str(),
                            "video model '" + std::string(type) + "' is not supported on amd64 architecture"});
        }
      }
    }
    return causes;
  }
  if (arch == "arm64") {
    return cpu::validate_arm64_model(spec, path);
  }
  if (arch == "s390x") {
    return {};
  }
  return {{CauseType::field_value_invalid, path.child("architecture").str(),
           "unsupported architecture: " + std::string(arch)}};
}

void append(ErrorList& to, ErrorList&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

ErrorList validate_vmi_only(const json::Value& vmi, const ClusterConfig& config, bool from_kubevirt_service_account) {
  (void)config;
  ErrorList causes;
  const json::Value* spec = json::find_object(vmi, "spec");
  const json::Value empty(rapidjson::kObjectType);
  const json::Value& s = spec != nullptr ? *spec : empty;
  const FieldPath path("spec");
  append(causes, volumes_need_disks(s, path));
  append(causes, memory_is_mandatory(s, path));
  append(causes, reserved_labels(vmi, from_kubevirt_service_account));
  append(causes, per_arch(s, path));
  return causes;
}

}  // namespace vmgate::admission::validation
