// Disks and their volume sources (KubeVirt's converter/storage and the volume converters).
#include "converter_core.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "vmgate/launcher/pod_layout.hpp"

namespace vmgate::launcher::detail {

std::optional<std::string> config_source(const Value& volume) {
  for (const char* kind : {"configMap", "secret", "downwardAPI", "serviceAccount", "sysprep"}) {
    if (json::find(volume, kind) != nullptr) {
      return std::string(kind);
    }
  }
  return std::nullopt;
}

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
    if (!check_keys(
            &disk, item,
            {"name", "disk", "cdrom", "lun", "bootOrder", "cache", "serial", "io", "dedicatedIOThread", "blockSize"})) {
      continue;
    }
    const std::string name = get_string(disk, "name", item).value_or("");
    const Value* as_disk = json::find(disk, "disk");
    const Value* as_cdrom = json::find(disk, "cdrom");
    const Value* as_lun = json::find(disk, "lun");
    if ((as_disk != nullptr) + (as_cdrom != nullptr) + (as_lun != nullptr) > 1) {
      fail(item, "disk, cdrom and lun are mutually exclusive");
      continue;
    }
    const bool cdrom = as_cdrom != nullptr;
    const bool lun = as_lun != nullptr;
    const Value* target_spec = cdrom ? as_cdrom : lun ? as_lun : as_disk;
    std::string bus = cdrom ? "sata" : lun ? "scsi" : "virtio";
    bool readonly = cdrom;
    const std::string target_path = item + (cdrom ? ".cdrom" : lun ? ".lun" : ".disk");
    if (target_spec != nullptr) {
      if (!(cdrom ? check_keys(target_spec, target_path, {"bus", "readonly", "tray"})
            : lun ? check_keys(target_spec, target_path, {"bus", "readonly", "reservation"})
                  : check_keys(target_spec, target_path, {"bus", "readonly", "pciAddress"}))) {
        continue;
      }
      if (auto address = get_string(*target_spec, "pciAddress", target_path); address && !address->empty()) {
        fail(target_path + ".pciAddress", unsupported);
      }
      if (lun && get_bool(*target_spec, "reservation", target_path).value_or(false)) {
        // Persistent reservations go through the node's qemu-pr-helper socket.
        fail(target_path + ".reservation", "needs the node's persistent-reservation helper");
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
    } else if (bus == "sata" || bus == "scsi" || (bus == "usb" && !lun)) {
      // KubeVirt names usb disks sd* too (storage/disk.go makeDeviceName).
      dev = "sd" + std::string(1, static_cast<char>('a' + sd_count++));
    } else {
      fail(target_path + ".bus", cdrom ? "must be sata, scsi or usb"
                                 : lun ? "must be virtio, scsi or sata"
                                       : "must be virtio, sata, scsi or usb");
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
    const std::string io = get_string(disk, "io", item).value_or("");
    if (!io.empty() && io != "native" && io != "threads" && io != "default") {
      fail(item + ".io", "must be native, threads or default");
    }
    DiskDriver driver{cache, io == "default" ? "" : io, 0, 0, lun};
    if (bus == "virtio" && iothreads_ > 0) {
      // storage/disk.go assignDiskIOThread: dedicated threads in order, the others round robin.
      if (get_bool(disk, "dedicatedIOThread", item).value_or(false)) {
        driver.iothread = next_dedicated_thread_++;
      } else {
        driver.iothread = next_auto_thread_;
        next_auto_thread_ = next_auto_thread_ % auto_threads_ + 1;
      }
    }
    if (bus == "virtio" && block_multi_queue_) {
      driver.queues = enabled_vcpus_;
    }
    auto& element = devices.add_child("disk");
    element.set_attribute("device", cdrom ? "cdrom" : lun ? "lun" : "disk");
    if (bus == "virtio") {
      element.set_attribute("model", virtio_model());
    }
    map_volume_source(element, *volume->second, "spec.volumes[" + std::to_string(volume_index[name]) + "]", cdrom,
                      driver);
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
    if (const Value* block_size = json::find(disk, "blockSize");
        check_keys(block_size, item + ".blockSize", {"custom", "matchVolume"})) {
      const Value* custom = json::find(*block_size, "custom");
      const Value* match = json::find(*block_size, "matchVolume");
      if (custom == nullptr && check_keys(match, item + ".blockSize.matchVolume", {"enabled"})) {
        // disk.go detectOptimalBlockIO: the sizes of the volume's device or file system.
        if (get_bool(*match, "enabled", item + ".blockSize.matchVolume").value_or(true)) {
          auto probed = options_.block_sizes.find(name);
          if (probed == options_.block_sizes.end()) {
            fail(item + ".blockSize.matchVolume", "the volume's block size was not probed");
          } else {
            element.add_child("blockio")
                .set_attribute("logical_block_size", std::to_string(probed->second.logical))
                .set_attribute("physical_block_size", std::to_string(probed->second.physical));
          }
        }
      } else if (custom == nullptr) {
        fail(item + ".blockSize", "custom or matchVolume is required");
      } else if (check_keys(custom, item + ".blockSize.custom", {"logical", "physical", "discardGranularity"})) {
        auto& blockio = element.add_child("blockio");
        for (const auto& [key, attribute] :
             {std::pair{"logical", "logical_block_size"}, std::pair{"physical", "physical_block_size"}}) {
          if (auto size = get_int(*custom, key, item + ".blockSize.custom")) {
            blockio.set_attribute(attribute, std::to_string(*size));
          }
        }
        if (json::find(*custom, "discardGranularity") != nullptr) {
          fail(item + ".blockSize.custom.discardGranularity", "libvirt 9.0 has no discard_granularity");
        }
      }
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
                                  const DiskDriver& disk_driver) {
  check_keys(
      &volume, path,
      {"name", "containerDisk", "persistentVolumeClaim", "dataVolume", "emptyDisk", "hostDisk", "cloudInitNoCloud",
       "cloudInitConfigDrive", "configMap", "secret", "downwardAPI", "serviceAccount", "sysprep"});
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
    const std::string node_path = get_string(*host, "path", path + ".hostDisk").value_or("");
    if (node_path.empty()) {
      fail(path + ".hostDisk.path", "required");
    } else if (kube::pod_paths::host_disk_file_name(node_path).empty()) {
      fail(path + ".hostDisk.path", "must be an absolute path to a file of the node");
    } else {
      // A path of the node, mounted into the pod by its directory: never a launcher file.
      file = host_disk_file(layout, name, node_path);
    }
  } else if (const Value* cloud = json::find(volume, "cloudInitNoCloud");
             check_keys(cloud, path + ".cloudInitNoCloud",
                        {"userData", "userDataBase64", "networkData", "networkDataBase64", "secretRef",
                         "networkDataSecretRef"})) {
    file = no_cloud_iso(layout, namespace_, name_);
  } else if (const Value* drive = json::find(volume, "cloudInitConfigDrive");
             check_keys(drive, path + ".cloudInitConfigDrive",
                        {"userData", "userDataBase64", "networkData", "networkDataBase64", "secretRef",
                         "networkDataSecretRef"})) {
    file = config_drive_iso(layout, namespace_, name_);
  } else if (const std::optional<std::string> kind = config_source(volume)) {
    // configMap, secret, downwardAPI, serviceAccount, sysprep: an ISO of the mounted files
    // (volume.go convert_v1_Config_To_api_Disk, convert_v1_SysprepSource_To_api_Disk).
    file = config_disk(layout, *kind, name)->iso;
  } else {
    fail(path,
         "a volume source (containerDisk, persistentVolumeClaim, dataVolume, emptyDisk, hostDisk, cloudInitNoCloud, "
         "cloudInitConfigDrive, "
         "configMap, secret, downwardAPI, serviceAccount, sysprep) is required");
  }
  if (block) {
    type = "block";
  }
  if (disk_driver.lun && !block) {
    // libvirt takes a lun only from a block device: a PVC of volumeMode Block.
    fail(path, "a lun disk needs a block volume (a persistentVolumeClaim or dataVolume of volumeMode Block)");
  }
  disk.set_attribute("type", type);
  auto& driver = disk.add_child("driver").set_attribute("name", "qemu").set_attribute("type", format);
  if (!disk_driver.cache.empty()) {
    driver.set_attribute("cache", disk_driver.cache);
  }
  if (!cdrom) {
    driver.set_attribute("error_policy", "stop");
  }
  if (!disk_driver.io.empty()) {
    driver.set_attribute("io", disk_driver.io);
  }
  if (disk_driver.iothread > 0) {
    driver.set_attribute("iothread", std::to_string(disk_driver.iothread));
  }
  if (disk_driver.queues > 0) {
    driver.set_attribute("queues", std::to_string(disk_driver.queues));
  }
  disk.add_child("source").set_attribute(block ? "dev" : "file", file);
}

}  // namespace vmgate::launcher::detail
