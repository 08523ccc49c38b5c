// Reads: status.volumeRequests[*].{addVolumeOptions.{name, disk, volumeSource}, removeVolumeOptions.name},
// spec.template.spec. Follows vms-admitter.go validateVolumeRequests: each request well formed and
// not repeated, an added volume not conflicting with the template's volume of that name, a
// hotplugged disk on a permitted bus; then the template spec with every request applied
// (controller.go ApplyVolumeRequestOnVMISpec), without defaults, must pass the VMI spec rules.
// The running VMI is not consulted: the cluster view holds no VMIs.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "vmgate/admission/semantic_equal.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

const char* const requests_field = "Status.volumeRequests";

ErrorList one_cause(std::string message) {
  return {{CauseType::field_value_invalid, requests_field, std::move(message)}};
}

// storagehotplug.go ValidateHotplugDiskConfiguration: the first problem only.
ErrorList check_hotplug_disk(const json::Value* disk, const std::string& name) {
  const std::string prefix = "AddVolume request";
  if (disk == nullptr) {
    return one_cause(prefix + " for [" + name + "] requires the disk field to be set.");
  }
  std::string_view bus;
  if (const json::Value* target = json::find_object(*disk, "disk")) {
    bus = json::find_string(*target, "bus");
    if (bus != "scsi" && bus != "virtio") {
      return one_cause(prefix + " for disk [" + name + "] requires bus to be 'scsi' or 'virtio'. [" + std::string(bus) +
                       "] is not permitted.");
    }
  } else if (const json::Value* lun = json::find_object(*disk, "lun")) {
    bus = json::find_string(*lun, "bus");
    if (bus != "scsi") {
      return one_cause(prefix + " for LUN [" + name + "] requires bus to be 'scsi'. [" + std::string(bus) +
                       "] is not permitted.");
    }
  } else {
    return one_cause(prefix + " for [" + name + "] requires diskDevice of type 'disk' or 'lun' to be used.");
  }
  const json::Value* io_thread = json::find(*disk, "dedicatedIOThread");
  if (io_thread != nullptr && io_thread->IsBool() && io_thread->GetBool() && bus != "virtio") {
    return one_cause(prefix + " for [" + name + "] requires virtio bus for IOThreads.");
  }
  if (const json::Value* order = json::find(*disk, "bootOrder");
      order != nullptr && order->IsNumber() && order->GetDouble() < 1) {
    // KubeVirt's message and field name the second disk, whatever the request.
    return {{CauseType::field_value_invalid, "spec.domain.devices.disks[1].bootOrder",
             "spec.domain.devices.disks[1] must have a boot order > 0, if supplied"}};
  }
  return {};
}

// The volume an add request describes: its name and its claim or data volume source.
json::Value requested_volume(const json::Value& add, const std::string& name, json::Allocator& allocator) {
  json::Value volume(rapidjson::kObjectType);
  json::set_string(volume, "name", name, allocator);
  if (const json::Value* source = json::find_object(add, "volumeSource")) {
    for (std::string_view kind : {"persistentVolumeClaim", "dataVolume"}) {
      if (const json::Value* chosen = json::find_object(*source, kind)) {
        json::set(volume, kind, json::copy(*chosen, allocator), allocator);
        break;
      }
    }
  }
  return volume;
}

void remove_named(json::Value& list, std::string_view name) {
  for (auto it = list.Begin(); it != list.End();) {
    it = it->IsObject() && json::find_string(*it, "name") == name ? list.Erase(it) : it + 1;
  }
}

// controller.go ApplyVolumeRequestOnVMISpec.
void apply_request(json::Value& spec, const json::Value* add, const json::Value* remove, json::Allocator& allocator) {
  json::Value& volumes = json::ensure_array(spec, "volumes", allocator);
  json::Value& devices = json::ensure_object(json::ensure_object(spec, "domain", allocator), "devices", allocator);
  json::Value& disks = json::ensure_array(devices, "disks", allocator);
  if (add != nullptr) {
    const std::string name(json::find_string(*add, "name"));
    for (const json::Value& volume : volumes.GetArray()) {
      if (volume.IsObject() && json::find_string(volume, "name") == name) {
        return;  // already added
      }
    }
    json::Value volume = requested_volume(*add, name, allocator);
    for (std::string_view kind : {"persistentVolumeClaim", "dataVolume"}) {
      if (json::Value* source = json::find(volume, kind)) {
        json::set(*source, "hotpluggable", json::Value(true), allocator);
      }
    }
    volumes.PushBack(volume, allocator);
    if (const json::Value* disk = json::find_object(*add, "disk")) {
      json::Value copy = json::copy(*disk, allocator);
      json::set_string(copy, "name", name, allocator);
      disks.PushBack(copy, allocator);
    }
  } else if (remove != nullptr) {
    const std::string_view name = json::find_string(*remove, "name");
    remove_named(volumes, name);
    remove_named(disks, name);
  }
}

}  // namespace

ErrorList validate_vm_volume_requests(const json::Value& vm, const ClusterConfig& config) {
  const json::Value* requests = json::find_path(vm, {"status", "volumeRequests"});
  if (requests == nullptr || !requests->IsArray() || requests->Empty()) {
    return {};
  }
  const json::Value* template_spec = json::find_path(vm, {"spec", "template", "spec"});
  json::Document spec;
  if (template_spec != nullptr && template_spec->IsObject()) {
    spec.CopyFrom(*template_spec, spec.GetAllocator());
  } else {
    spec.SetObject();
  }
  std::unordered_map<std::string_view, const json::Value*> template_volumes;  // the last of a name wins
  if (const json::Value* volumes = template_spec != nullptr ? json::find_array(*template_spec, "volumes") : nullptr) {
    for (const json::Value& volume : volumes->GetArray()) {
      template_volumes[json::find_string(volume, "name")] = &volume;
    }
  }
  std::unordered_set<std::string> added;
  std::unordered_set<std::string> removed;
  for (const json::Value& request : requests->GetArray()) {
    const json::Value* add = request.IsObject() ? json::find_object(request, "addVolumeOptions") : nullptr;
    const json::Value* remove = request.IsObject() ? json::find_object(request, "removeVolumeOptions") : nullptr;
    if (add != nullptr && remove != nullptr) {
      return one_cause("VolumeRequests require either addVolumeOptions or removeVolumeOptions to be set, not both");
    }
    if (add != nullptr) {
      const std::string name(json::find_string(*add, "name"));
      if (!added.insert(name).second) {
        return one_cause("AddVolume request for [" + name + "] aleady exists");  // sic
      }
      if (ErrorList causes = check_hotplug_disk(json::find_object(*add, "disk"), name); !causes.empty()) {
        return causes;
      }
      json::Document scratch;
      const json::Value volume = requested_volume(*add, name, scratch.GetAllocator());
      if (const auto existing = template_volumes.find(name);
          existing != template_volumes.end() && !semantically_equal(volume, *existing->second)) {
        return one_cause("AddVolume request for [" + name +
                         "] conflicts with an existing volume of the same name on the vmi template.");
      }
    } else if (remove != nullptr) {
      const std::string name(json::find_string(*remove, "name"));
      if (!removed.insert(name).second) {
        return one_cause("RemoveVolume request for [" + name + "] aleady exists");  // sic
      }
    } else {
      return one_cause("VolumeRequests require one of either addVolumeOptions or removeVolumeOptions to be set");
    }
    apply_request(spec, add, remove, spec.GetAllocator());
  }
  return validate_vmi_spec(spec, FieldPath("spec.template.spec"), config);
}

}  // namespace vmgate::admission::validation
