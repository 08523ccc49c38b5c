#pragma once
// The state of one VMI → domain XML conversion, shared by the converter's parts (private to
// src/convert/): converter.cpp (the run and the helpers below), converter_compute.cpp,
// converter_storage.cpp, converter_network.cpp and converter_devices.cpp, split as KubeVirt
// splits pkg/virt-launcher/virtwrap/converter. One Converter per conversion; nothing shared.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/json_field.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/xml.hpp"

namespace vmgate::launcher::detail {

using json::Value;

inline constexpr std::string_view unsupported = "not supported by vmgate-launcher";

// The config volume source of `volume` ("configMap", "secret", "downwardAPI", "serviceAccount",
// "sysprep"), or nullopt.
std::optional<std::string> config_source(const Value& volume);

// One conversion. The first error wins; later steps still run but their output is discarded.
class Converter {
 public:
  Converter(const Value& vmi, const ConvertOptions& options) : vmi_(vmi), options_(options) {}

  Result<std::string> run();

 private:
  void fail(const std::string& path, std::string_view message) {
    if (!error_) {
      error_ = path + ": " + std::string(message);
    }
  }
  // Fails for every member of `object` not in `allowed`; false when `object` is not an object.
  bool check_keys(const Value* object, const std::string& path, std::initializer_list<std::string_view> allowed);
  template <class T>
  std::optional<T> get(const Value& object, std::string_view key, const std::string& path);
  std::optional<bool> get_bool(const Value& object, std::string_view key, const std::string& path) {
    return get<bool>(object, key, path);
  }
  std::optional<std::int64_t> get_int(const Value& object, std::string_view key, const std::string& path) {
    return get<std::int64_t>(object, key, path);
  }
  std::optional<std::string> get_string(const Value& object, std::string_view key, const std::string& path) {
    return get<std::string>(object, key, path);
  }
  // "on"/"off" from a KubeVirt FeatureState {enabled}: enabled unless `enabled: false`.
  bool feature_enabled(const Value& state, const std::string& path);
  std::string virtio_model() const { return virtio_transitional_ ? "virtio-transitional" : "virtio-non-transitional"; }

  void map_metadata(XmlElement& domain);
  void map_memory(XmlElement& domain, const Value& spec_domain);
  void map_memory_hotplug(XmlElement& domain, std::int64_t guest, std::int64_t max_guest, bool gigantic);
  std::optional<std::int64_t> memory_bytes(const std::string& text, const std::string& path);
  void map_cpu(XmlElement& domain, const Value& spec_domain);
  void map_cpu_pinning(XmlElement& domain, bool isolate_emulator_thread);
  void map_numa_passthrough(XmlElement& cpu);
  void map_memory_backing(XmlElement& domain);
  void map_iothreads(XmlElement& domain, const Value& spec_domain);
  void map_os(XmlElement& domain, const Value& spec_domain);
  void map_features(XmlElement& domain, const Value& spec_domain);
  void map_clock(XmlElement& domain, const Value& spec_domain);
  void map_devices(XmlElement& domain, const Value& spec_domain);
  void map_disks(XmlElement& devices, const Value& device_spec);
  // <driver> attributes a disk sets for its volume.
  struct DiskDriver {
    std::string cache;
    std::string io;
    std::int64_t iothread = 0;
    std::int64_t queues = 0;
    bool lun = false;
  };
  void map_volume_source(XmlElement& disk, const Value& volume, const std::string& path, bool cdrom,
                         const DiskDriver& disk_driver);
  void map_interfaces(XmlElement& devices, const Value& device_spec);
  // The virtio-mem device of memory hotplug (map_memory decided its sizes).
  void map_memory_device(XmlElement& devices);
  void map_filesystems(XmlElement& devices, const Value& device_spec);

  const Value& vmi_;
  const ConvertOptions& options_;
  std::optional<std::string> error_;
  std::string namespace_;
  std::string name_;
  std::string domain_name_;
  std::int64_t vcpus_ = 1;          // <vcpu>: every vCPU, hotpluggable ones included
  std::int64_t enabled_vcpus_ = 1;  // sockets·cores·threads: the vCPUs the guest starts with
  bool dedicated_cpus_ = false;
  bool block_multi_queue_ = false;
  bool interface_multi_queue_ = false;
  bool usb_needed_ = false;
  bool shared_memory_ = false;
  bool numa_passthrough_ = false;
  bool realtime_ = false;
  std::int64_t page_bytes_ = 0;       // hugepages.pageSize; 0 without
  std::vector<int> numa_host_nodes_;  // guest NUMA cell i → its host node (passthrough)
  std::int64_t guest_bytes_ = 0;
  bool start_paused_ = false;
  // I/O threads (iothreads.go): 0 without; disks take auto threads 1..auto_threads_ round robin
  // and dedicated ones after them.
  std::int64_t iothreads_ = 0;
  std::int64_t auto_threads_ = 0;
  std::int64_t next_auto_thread_ = 1;
  std::int64_t next_dedicated_thread_ = 1;
  // Memory hotplug (spec.domain.memory.maxGuest above guest), decided by map_memory: the boot
  // memory of the one NUMA cell, and the virtio-mem device's size, block and requested size.
  struct MemoryHotplug {
    std::int64_t boot_bytes = 0;
    std::int64_t device_bytes = 0;
    std::int64_t block_bytes = 0;
    std::int64_t requested_bytes = 0;
  };
  std::optional<MemoryHotplug> memory_hotplug_;
  bool virtio_transitional_ = false;
  bool smm_ = false;
  bool bios_use_serial_ = false;
};

// The member `key` of `object` as T (bool, int64 or string); nullopt when absent or null, and
// a failure naming the field when it has another type.
template <class T>
std::optional<T> Converter::get(const Value& object, std::string_view key, const std::string& path) {
  const auto field = [&] {
    if constexpr (std::is_same_v<T, bool>) {
      return json::read_bool(object, key);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      return json::read_int64(object, key);
    } else {
      return json::read_string(object, key);
    }
  }();
  if (!field) {
    fail(path + "." + std::string(key), "must be " + std::string(json::describe(field.error().expected)) + ", not " +
                                            std::string(field.error().found));
    return std::nullopt;
  }
  if (!field->has_value()) {
    return std::nullopt;
  }
  return T(**field);
}

}  // namespace vmgate::launcher::detail
