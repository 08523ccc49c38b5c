// Disks and their volume sources (KubeVirt's converter/storage and the volume converters).
#include "converter_core.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "vmgate/launcher/pod_layout.hpp"

namespace vmgate::launcher::detail {

// Disks and their volumes (converter.go Convert_v1_Disk_To_api_Disk and the volume converters).
// Target names are assigned in order per prefix: vd* for virtio, sd* for sata/scsi.
void Converter::map_disks(XmlElement& devices, const Value& device_spec) {
  const std::string path = "spec.domain.devices.disks";
  const Value* disks = json::find(device_spec, "disks");
  if (disks == nullptr) {
    return;
  }
  if (!disks->IsArray()) {
    fail(path, "must be an array");
    return;
  }
  std::map<std::string, const Value*> volumes;
  std::map<std::string, std::size_t> volume_index;
  const Value& spec = *json::find(vmi_, "spec");
  if (const Value* list = json::find(spec, "volumes"); list != nullptr && list->IsArray()) {
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& volume = (*list)[i];
      if (volume.IsObject()) {
        const std::string name = get_string(volume, "name", "spec.volumes[" + std::to_string(i) + "]").value_or("");
        volumes[name] = &volume;
        volume_index[name] = i;
      }
    }
  }
  int virtio_count = 0;
  int sd_count = 0;
  int scsi_unit = 0;
  for (rapidjson::SizeType i = 0; i < disks->Size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    const Value& disk = (*disks)[i];
    if (!check_keys(&disk, item, {"name", "disk", "cdrom", "bootOrder", "cache", "serial"})) {
      continue;
    }
    const std::string name = get_string(disk, "name", item).value_or("");
    const Value* as_disk = json::find(disk, "disk");
    const Value* as_cdrom = json::find(disk, "cdrom");
    if (as_disk != nullptr && as_cdrom != nullptr) {
      fail(item, "disk and cdrom are mutually exclusive");
      continue;
    }
    const bool cdrom = as_cdrom != nullptr;
    const Value* target_spec = cdrom ? as_cdrom : as_disk;
    std::string bus = cdrom ? "sata" : "virtio";
    bool readonly = cdrom;
    const std::string target_path = item + (cdrom ? ".cdrom" : ".disk");
    if (target_spec != nullptr) {
      if (!(cdrom ? check_keys(target_spec, target_path, {"bus", "readonly", "tray"})
                  : check_keys(target_spec, target_path, {"bus", "readonly"}))) {
        continue;
      }
      bus = get_string(*target_spec, "bus", target_path).value_or(bus);
      readonly = get_bool(*target_spec, "readonly", target_path).value_or(readonly);
      if (auto tray = get_string(*target_spec, "tray", target_path); tray && *tray != "closed") {
        fail(target_path + ".tray", "only closed is supported");
      }
    }
    std::string dev;
    if (bus == "virtio" && !cdrom) {
      dev = "vd" + std::string(1, static_cast<char>('a' + virtio_count++));
    } else if (bus == "sata" || bus == "scsi") {
      dev = "sd" + std::string(1, static_cast<char>('a' + sd_count++));
    } else {
      fail(target_path + ".bus", cdrom ? "must be sata or scsi" : "must be virtio, sata or scsi");
      continue;
    }
    if (virtio_count > 26 || sd_count > 26) {
      fail(item, "too many disks on one bus");
      continue;
    }
    const std::string cache = get_string(disk, "cache", item).value_or("");
    if (!cache.empty() && cache != "none" && cache != "writethrough" && cache != "writeback") {
      fail(item + ".cache", "must be none, writethrough or writeback");
    }
    auto volume = volumes.find(name);
    if (volume == volumes.end()) {
      fail(item + ".name", "no volume named \"" + name + "\" in spec.volumes");
      continue;
    }
    auto& element = devices.add_child("disk");
    element.set_attribute("device", cdrom ? "cdrom" : "disk");
    if (bus == "virtio") {
      element.set_attribute("model", virtio_model());
    }
    map_volume_source(element, *volume->second, "spec.volumes[" + std::to_string(volume_index[name]) + "]", cdrom,
                      cache);
    auto& target = element.add_child("target").set_attribute("dev", dev).set_attribute("bus", bus);
    if (cdrom) {
      target.set_attribute("tray", "closed");
    }
    if (readonly) {
      element.add_child("readonly");
    }
    if (auto serial = get_string(disk, "serial", item)) {
      element.add_child("serial").set_text(*serial);
    }
    if (auto order = get_int(disk, "bootOrder", item)) {
      if (*order < 1) {
        fail(item + ".bootOrder", "must be at least 1");
      }
      element.add_child("boot").set_attribute("order", std::to_string(*order));
    }
    if (bus == "scsi") {
      element.add_child("address")
          .set_attribute("type", "drive")
          .set_attribute("controller", "0")
          .set_attribute("bus", "0")
          .set_attribute("target", "0")
          .set_attribute("unit", std::to_string(scsi_unit++));
    }
    element.add_child("alias").set_attribute("name", "ua-" + name);
  }
  if (scsi_unit > 0) {
    devices.add_child("controller")
        .set_attribute("type", "scsi")
        .set_attribute("index", "0")
        .set_attribute("model", virtio_transitional_ ? "virtio-transitional" : "virtio-non-transitional");
  }
}

void Converter::map_volume_source(XmlElement& disk, const Value& volume, const std::string& path, bool cdrom,
                                  std::string_view cache) {
  check_keys(
      &volume, path,
      {"name", "containerDisk", "persistentVolumeClaim", "dataVolume", "emptyDisk", "hostDisk", "cloudInitNoCloud"});
  const std::string name = get_string(volume, "name", path).value_or("");
  if (!is_file_name(name)) {
    fail(path + ".name", "cannot name a file in the pod (contains '/' or is '.' or '..')");
  }
  const PodLayout& layout = options_.layout;
  std::string type = "file";
  std::string format = "raw";
  std::string file;
  bool block = false;
  if (const Value* source = json::find(volume, "containerDisk");
      check_keys(source, path + ".containerDisk", {"image", "imagePullPolicy", "imagePullSecret", "path"})) {
    // The writable qcow2 overlay over the image's disk file (container-disk.go).
    format = "qcow2";
    file = container_disk_overlay(layout, name);
  } else if (const Value* pvc = json::find(volume, "persistentVolumeClaim");
             check_keys(pvc, path + ".persistentVolumeClaim", {"claimName", "readOnly", "hotpluggable"}) ||
             check_keys(json::find(volume, "dataVolume"), path + ".dataVolume", {"name", "hotpluggable"})) {
    // A DataVolume is its PVC, mounted the same way (hostdisk.go, volumes in the pod spec).
    if (layout.block_pvcs.count(name) != 0) {
      block = true;
      file = pvc_block_device(layout, name);
    } else {
      file = pvc_disk_file(layout, name);
    }
  } else if (const Value* empty = json::find(volume, "emptyDisk");
             check_keys(empty, path + ".emptyDisk", {"capacity"})) {
    format = "qcow2";
    file = empty_disk_file(layout, name);
  } else if (const Value* host = json::find(volume, "hostDisk");
             check_keys(host, path + ".hostDisk", {"path", "type", "capacity", "shared"})) {
    file = get_string(*host, "path", path + ".hostDisk").value_or("");
    if (file.empty()) {
      fail(path + ".hostDisk.path", "required");
    }
  } else if (const Value* cloud = json::find(volume, "cloudInitNoCloud");
             check_keys(cloud, path + ".cloudInitNoCloud",
                        {"userData", "userDataBase64", "networkData", "networkDataBase64"})) {
    file = no_cloud_iso(layout, namespace_, name_);
  } else {
    fail(path,
         "a volume source (containerDisk, persistentVolumeClaim, dataVolume, emptyDisk, hostDisk, cloudInitNoCloud) is "
         "required");
  }
  if (block) {
    type = "block";
  }
  disk.set_attribute("type", type);
  auto& driver = disk.add_child("driver").set_attribute("name", "qemu").set_attribute("type", format);
  if (!cache.empty()) {
    driver.set_attribute("cache", cache);
  }
  if (!cdrom) {
    driver.set_attribute("error_policy", "stop");
  }
  disk.add_child("source").set_attribute(block ? "dev" : "file", file);
}

}  // namespace vmgate::launcher::detail
