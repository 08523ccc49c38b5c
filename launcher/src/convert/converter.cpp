// VMI → libvirt domain XML. Follows KubeVirt pkg/virt-launcher/virtwrap/converter/converter.go
// and its configurators (cpu, memory, clock, features, disks, network, inputs, watchdog, rng,
// graphics, sysinfo, os); the mapping table is launcher-libvirt.md A.1. Every object is checked
// against the keys this file maps, so an unmapped field becomes an error naming its path.
#include "vmgate/launcher/converter.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vmgate/admission/quantity.hpp"
#include "vmgate/common/json_field.hpp"
#include "vmgate/launcher/xml.hpp"

namespace vmgate::launcher {
namespace {

using json::Value;

constexpr std::string_view unsupported = "not supported by vmgate-launcher";

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
  void map_cpu(XmlElement& domain, const Value& spec_domain);
  void map_os(XmlElement& domain, const Value& spec_domain);
  void map_features(XmlElement& domain, const Value& spec_domain);
  void map_clock(XmlElement& domain, const Value& spec_domain);
  void map_devices(XmlElement& domain, const Value& spec_domain);
  void map_disks(XmlElement& devices, const Value& device_spec);
  void map_volume_source(XmlElement& disk, const Value& volume, const std::string& path, bool cdrom,
                         std::string_view disk_driver_cache);
  void map_interfaces(XmlElement& devices, const Value& device_spec);

  const Value& vmi_;
  const ConvertOptions& options_;
  std::optional<std::string> error_;
  std::string namespace_;
  std::string name_;
  std::string domain_name_;
  std::int64_t vcpus_ = 1;
  bool virtio_transitional_ = false;
  bool smm_ = false;
  bool bios_use_serial_ = false;
};

bool Converter::check_keys(const Value* object, const std::string& path,
                           std::initializer_list<std::string_view> allowed) {
  if (object == nullptr) {
    return false;
  }
  if (!object->IsObject()) {
    fail(path, "must be an object, not " + std::string(json::type_name(*object)));
    return false;
  }
  for (auto member = object->MemberBegin(); member != object->MemberEnd(); ++member) {
    const std::string_view key = json::as_view(member->name);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      fail(path + "." + std::string(key), unsupported);
    }
  }
  return true;
}

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

bool Converter::feature_enabled(const Value& state, const std::string& path) {
  return get_bool(state, "enabled", path).value_or(true);
}

Result<std::string> Converter::run() {
  if (!vmi_.IsObject()) {
    return Error{"the VMI must be a JSON object, not " + std::string(json::type_name(vmi_))};
  }
  const Value* spec = json::find(vmi_, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    return Error{"spec: required"};
  }
  // Pod-level fields (scheduling, probes) do not reach the domain; the rest must be mapped.
  check_keys(
      spec, "spec",
      {"domain", "volumes", "networks", "terminationGracePeriodSeconds", "nodeSelector", "affinity", "tolerations",
       "topologySpreadConstraints", "evictionStrategy", "schedulerName", "priorityClassName", "hostname", "subdomain",
       "dnsConfig", "dnsPolicy", "architecture", "startStrategy", "livenessProbe", "readinessProbe"});
  if (auto strategy = get_string(*spec, "startStrategy", "spec"); strategy && !strategy->empty()) {
    fail("spec.startStrategy", unsupported);
  }
  if (auto arch = get_string(*spec, "architecture", "spec"); arch && *arch != "amd64") {
    fail("spec.architecture", "only amd64 is supported by vmgate-launcher");
  }
  const Value* spec_domain = json::find(*spec, "domain");
  if (spec_domain == nullptr || !spec_domain->IsObject()) {
    return Error{"spec.domain: required"};
  }
  check_keys(spec_domain, "spec.domain",
             {"resources", "cpu", "memory", "machine", "firmware", "clock", "features", "devices"});

  XmlElement domain("domain");
  domain.set_attribute("type", options_.software_emulation ? "qemu" : "kvm");
  map_metadata(domain);
  map_memory(domain, *spec_domain);
  map_cpu(domain, *spec_domain);
  map_os(domain, *spec_domain);
  map_features(domain, *spec_domain);
  map_clock(domain, *spec_domain);
  map_devices(domain, *spec_domain);
  if (error_) {
    return Error{*error_};
  }
  return domain.to_string();
}

// KubeVirt names the domain <namespace>_<name> and keeps the uid and grace period in its own
// metadata namespace (converter.go Convert_v1_VirtualMachineInstance_To_api_Domain).
void Converter::map_metadata(XmlElement& domain) {
  const Value* metadata = json::find(vmi_, "metadata");
  if (metadata == nullptr || !metadata->IsObject()) {
    fail("metadata", "required");
    return;
  }
  name_ = get_string(*metadata, "name", "metadata").value_or("");
  namespace_ = get_string(*metadata, "namespace", "metadata").value_or("default");
  if (name_.empty()) {
    fail("metadata.name", "required");
  } else if (!is_file_name(name_)) {
    fail("metadata.name", "cannot name a file in the pod (contains '/' or is '.' or '..')");
  }
  if (!is_file_name(namespace_)) {
    fail("metadata.namespace", "cannot name a file in the pod (contains '/' or is '.' or '..')");
  }
  domain_name_ = namespace_ + "_" + name_;
  domain.add_child("name").set_text(domain_name_);
  auto& kubevirt = domain.add_child("metadata").add_child("kubevirt");
  kubevirt.set_attribute("xmlns", "http://kubevirt.io");
  if (auto uid = get_string(*metadata, "uid", "metadata"); uid && !uid->empty()) {
    kubevirt.add_child("uid").set_text(*uid);
  }
  const Value& spec = *json::find(vmi_, "spec");
  const std::int64_t grace = get_int(spec, "terminationGracePeriodSeconds", "spec").value_or(30);
  kubevirt.add_child("graceperiod").add_child("deletionGracePeriodSeconds").set_text(std::to_string(grace));
}

// memory.guest, else requests.memory, else limits.memory, written in bytes as upstream does
// (converter.go: vmi.Spec.Domain.Memory.Guest → <memory unit='b'>). Hugepages: memory backing
// with the explicit page size (launcher-libvirt.md A.1 "Memory").
void Converter::map_memory(XmlElement& domain, const Value& spec_domain) {
  const Value* memory = json::find(spec_domain, "memory");
  std::optional<std::string> text;
  std::string path = "spec.domain.memory.guest";
  if (check_keys(memory, "spec.domain.memory", {"guest", "hugepages"})) {
    text = get_string(*memory, "guest", "spec.domain.memory");
  }
  const Value* resources = json::find(spec_domain, "resources");
  if (check_keys(resources, "spec.domain.resources", {"requests", "limits", "overcommitGuestOverhead"})) {
    for (const std::string_view kind : {"requests", "limits"}) {
      const Value* list = json::find(*resources, kind);
      if (!text && list != nullptr && list->IsObject()) {
        text = get_string(*list, "memory", "spec.domain.resources." + std::string(kind));
        path = "spec.domain.resources." + std::string(kind) + ".memory";
      }
    }
  }
  if (!text) {
    fail("spec.domain.memory.guest", "required (or spec.domain.resources.requests.memory)");
    return;
  }
  auto quantity = admission::Quantity::parse(*text);
  if (!quantity) {
    fail(path, quantity.error().message);
    return;
  }
  auto bytes = quantity->value();
  if (!bytes || *bytes <= 0) {
    fail(path, "must be a positive quantity");
    return;
  }
  domain.add_child("memory").set_attribute("unit", "b").set_text(std::to_string(*bytes));

  const Value* hugepages = memory != nullptr ? json::find(*memory, "hugepages") : nullptr;
  if (check_keys(hugepages, "spec.domain.memory.hugepages", {"pageSize"})) {
    auto size_text = get_string(*hugepages, "pageSize", "spec.domain.memory.hugepages");
    if (!size_text) {
      fail("spec.domain.memory.hugepages.pageSize", "required");
      return;
    }
    auto size = admission::Quantity::parse(*size_text);
    auto size_bytes = size ? size->value() : Result<std::int64_t>(Error{""});
    if (!size_bytes || *size_bytes < 1024) {
      fail("spec.domain.memory.hugepages.pageSize", "must be a page size such as 2Mi or 1Gi");
      return;
    }
    domain.add_child("memoryBacking")
        .add_child("hugepages")
        .add_child("page")
        .set_attribute("size", std::to_string(*size_bytes / 1024))
        .set_attribute("unit", "KiB");
  }
}

// cpu.go: host-model (the cluster default) / host-passthrough / a named model with mpx
// disabled unless the user set it; topology and <vcpu> = sockets*cores*threads.
void Converter::map_cpu(XmlElement& domain, const Value& spec_domain) {
  const Value* cpu = json::find(spec_domain, "cpu");
  std::int64_t sockets = 1;
  std::int64_t cores = 1;
  std::int64_t threads = 1;
  std::string model = "host-model";
  std::vector<std::pair<std::string, std::string>> features;
  const std::string path = "spec.domain.cpu";
  // maxSockets is defaulted by the VM controller for CPU hotplug (api defaults); vmgate offers
  // no hotplug, so the guest gets `sockets` and the ceiling is accepted without effect.
  if (check_keys(cpu, path, {"sockets", "cores", "threads", "model", "features", "maxSockets"})) {
    sockets = get_int(*cpu, "sockets", path).value_or(1);
    cores = get_int(*cpu, "cores", path).value_or(1);
    threads = get_int(*cpu, "threads", path).value_or(1);
    model = get_string(*cpu, "model", path).value_or("host-model");
    if (const Value* list = json::find(*cpu, "features"); list != nullptr) {
      if (!list->IsArray()) {
        fail(path + ".features", "must be an array");
      } else {
        for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
          const std::string item = path + ".features[" + std::to_string(i) + "]";
          const Value& feature = (*list)[i];
          if (!check_keys(&feature, item, {"name", "policy"})) {
            continue;
          }
          auto name = get_string(feature, "name", item);
          const std::string policy = get_string(feature, "policy", item).value_or("require");
          static constexpr std::string_view policies[] = {"force", "require", "optional", "disable", "forbid"};
          if (std::find(std::begin(policies), std::end(policies), policy) == std::end(policies)) {
            fail(item + ".policy", "must be one of force, require, optional, disable, forbid");
          }
          if (!name || name->empty()) {
            fail(item + ".name", "required");
            continue;
          }
          features.emplace_back(*name, policy);
        }
      }
    }
  }
  if (sockets < 1 || cores < 1 || threads < 1) {
    fail(path, "sockets, cores and threads must be at least 1");
    return;
  }
  vcpus_ = sockets * cores * threads;
  domain.add_child("vcpu").set_attribute("placement", "static").set_text(std::to_string(vcpus_));

  auto& element = domain.add_child("cpu");
  if (model == "host-model" || model == "host-passthrough") {
    element.set_attribute("mode", model);
  } else if (model.empty()) {
    fail(path + ".model", "must not be empty");
  } else {
    element.set_attribute("mode", "custom");
    element.add_child("model").set_text(model);
  }
  element.add_child("topology")
      .set_attribute("sockets", std::to_string(sockets))
      .set_attribute("cores", std::to_string(cores))
      .set_attribute("threads", std::to_string(threads));
  bool has_mpx = false;
  for (const auto& [name, policy] : features) {
    element.add_child("feature").set_attribute("policy", policy).set_attribute("name", name);
    has_mpx = has_mpx || name == "mpx";
  }
  // libvirt's cpu_map still lists mpx for models QEMU dropped it from (converter.go).
  if (element.name() == "cpu" && model != "host-model" && model != "host-passthrough" && !has_mpx) {
    element.add_child("feature").set_attribute("policy", "disable").set_attribute("name", "mpx");
  }
}

// Machine type, firmware (BIOS/EFI/kernel boot) and SMBIOS sysinfo (os.go, sysinfo.go).
void Converter::map_os(XmlElement& domain, const Value& spec_domain) {
  std::string machine = "q35";
  if (const Value* m = json::find(spec_domain, "machine"); check_keys(m, "spec.domain.machine", {"type"})) {
    machine = get_string(*m, "type", "spec.domain.machine").value_or("q35");
  }
  const Value* firmware = json::find(spec_domain, "firmware");
  const std::string fw_path = "spec.domain.firmware";
  std::optional<std::string> uuid;
  std::optional<std::string> serial;
  const Value* bootloader = nullptr;
  const Value* kernel_boot = nullptr;
  if (check_keys(firmware, fw_path, {"uuid", "serial", "bootloader", "kernelBoot"})) {
    uuid = get_string(*firmware, "uuid", fw_path);
    serial = get_string(*firmware, "serial", fw_path);
    bootloader = json::find(*firmware, "bootloader");
    kernel_boot = json::find(*firmware, "kernelBoot");
  }
  if (uuid || serial) {
    auto& system = domain.add_child("sysinfo").set_attribute("type", "smbios").add_child("system");
    if (uuid) {
      system.add_child("entry").set_attribute("name", "uuid").set_text(*uuid);
    }
    if (serial) {
      system.add_child("entry").set_attribute("name", "serial").set_text(*serial);
    }
  }
  auto& os = domain.add_child("os");
  auto& type = os.add_child("type");
  type.set_attribute("arch", "x86_64").set_attribute("machine", machine).set_text("hvm");
  if (check_keys(bootloader, fw_path + ".bootloader", {"bios", "efi"})) {
    const Value* bios = json::find(*bootloader, "bios");
    const Value* efi = json::find(*bootloader, "efi");
    if (bios != nullptr && efi != nullptr) {
      fail(fw_path + ".bootloader", "bios and efi are mutually exclusive");
    }
    if (check_keys(bios, fw_path + ".bootloader.bios", {"useSerial"})) {
      if (get_bool(*bios, "useSerial", fw_path + ".bootloader.bios").value_or(false)) {
        os.add_child("bios").set_attribute("useserial", "yes");
        bios_use_serial_ = true;
      }
    }
    if (check_keys(efi, fw_path + ".bootloader.efi", {"secureBoot", "persistent"})) {
      if (get_bool(*efi, "persistent", fw_path + ".bootloader.efi").value_or(false)) {
        fail(fw_path + ".bootloader.efi.persistent", unsupported);
      }
      // KubeVirt defaults secureBoot to true when efi is set (api defaults.go).
      const bool secure = get_bool(*efi, "secureBoot", fw_path + ".bootloader.efi").value_or(true);
      const auto& fw = options_.firmware;
      os.add_child("loader")
          .set_attribute("readonly", "yes")
          .set_attribute("secure", secure ? "yes" : "no")
          .set_attribute("type", "pflash")
          .set_text(secure ? fw.secure_boot_code : fw.efi_code);
      os.add_child("nvram")
          .set_attribute("template", secure ? fw.secure_boot_vars : fw.efi_vars)
          .set_text(options_.layout.nvram_dir + "/" + domain_name_ + "_VARS.fd");
      if (secure) {
        smm_ = true;  // libvirt: "Secure boot requires SMM feature enabled"
      }
    }
  }
  const std::string kb_path = fw_path + ".kernelBoot";
  if (check_keys(kernel_boot, kb_path, {"kernelArgs", "container"})) {
    const Value* container = json::find(*kernel_boot, "container");
    if (check_keys(container, kb_path + ".container",
                   {"image", "imagePullPolicy", "imagePullSecret", "kernelPath", "initrdPath"})) {
      const std::string& base = options_.layout.kernel_boot_dir;
      auto in_pod = [&base](const std::string& file) {
        return file.empty() || file.front() != '/' ? base + "/" + file : base + file;
      };
      if (auto kernel = get_string(*container, "kernelPath", kb_path + ".container"); kernel && !kernel->empty()) {
        os.add_child("kernel").set_text(in_pod(*kernel));
      }
      if (auto initrd = get_string(*container, "initrdPath", kb_path + ".container"); initrd && !initrd->empty()) {
        os.add_child("initrd").set_text(in_pod(*initrd));
      }
    }
    if (auto args = get_string(*kernel_boot, "kernelArgs", kb_path); args && !args->empty()) {
      os.add_child("cmdline").set_text(*args);
    }
  }
  if (uuid || serial) {
    os.add_child("smbios").set_attribute("mode", "sysinfo");
  }
}

// features.go: acpi on unless disabled, apic, smm, hyperv enlightenments; vmport off on amd64.
void Converter::map_features(XmlElement& domain, const Value& spec_domain) {
  const Value* features = json::find(spec_domain, "features");
  const std::string path = "spec.domain.features";
  auto& element = domain.add_child("features");
  bool acpi = true;
  if (check_keys(features, path, {"acpi", "apic", "smm", "hyperv", "kvm", "pvspinlock"})) {
    if (const Value* v = json::find(*features, "acpi"); v != nullptr) {
      acpi = feature_enabled(*v, path + ".acpi");
    }
    if (const Value* v = json::find(*features, "smm"); v != nullptr) {
      smm_ = smm_ || feature_enabled(*v, path + ".smm");
    }
  }
  if (acpi) {
    element.add_child("acpi");
  }
  if (features != nullptr && features->IsObject()) {
    if (const Value* v = json::find(*features, "apic"); check_keys(v, path + ".apic", {"enabled", "endOfInterrupt"})) {
      if (feature_enabled(*v, path + ".apic")) {
        element.add_child("apic");
      }
    }
    const Value* hyperv = json::find(*features, "hyperv");
    if (check_keys(hyperv, path + ".hyperv",
                   {"relaxed", "vapic", "spinlocks", "vpindex", "runtime", "synic", "synictimer", "reset", "vendorid",
                    "frequencies", "reenlightenment", "tlbflush", "ipi", "evmcs"})) {
      auto& hv = element.add_child("hyperv");
      // libvirt's element order (domaincommon.rng hypervfeatures).
      static constexpr std::pair<std::string_view, std::string_view> simple[] = {{"relaxed", "relaxed"},
                                                                                 {"vapic", "vapic"},
                                                                                 {"spinlocks", "spinlocks"},
                                                                                 {"vpindex", "vpindex"},
                                                                                 {"runtime", "runtime"},
                                                                                 {"synic", "synic"},
                                                                                 {"synictimer", "stimer"},
                                                                                 {"reset", "reset"},
                                                                                 {"vendorid", "vendor_id"},
                                                                                 {"frequencies", "frequencies"},
                                                                                 {"reenlightenment", "reenlightenment"},
                                                                                 {"tlbflush", "tlbflush"},
                                                                                 {"ipi", "ipi"},
                                                                                 {"evmcs", "evmcs"}};
      for (const auto& [key, tag] : simple) {
        const Value* v = json::find(*hyperv, key);
        const std::string item = path + ".hyperv." + std::string(key);
        if (v == nullptr) {
          continue;
        }
        if (key == "spinlocks") {
          check_keys(v, item, {"enabled", "spinlocks"});
        } else if (key == "vendorid") {
          check_keys(v, item, {"enabled", "vendorid"});
        } else if (key == "synictimer") {
          check_keys(v, item, {"enabled", "direct"});
        } else {
          check_keys(v, item, {"enabled"});
        }
        if (!v->IsObject()) {
          continue;
        }
        const bool on = feature_enabled(*v, item);
        auto& child = hv.add_child(std::string(tag));
        child.set_attribute("state", on ? "on" : "off");
        if (key == "spinlocks" && on) {
          // 4096 is the API default and minimum (api defaults.go).
          child.set_attribute("retries", std::to_string(get_int(*v, "spinlocks", item).value_or(4096)));
        } else if (key == "vendorid" && on) {
          child.set_attribute("value", get_string(*v, "vendorid", item).value_or(""));
        } else if (key == "synictimer") {
          // tlbflush.direct/extended have no element in libvirt 9.0's schema: rejected above.
          const Value* direct = json::find(*v, "direct");
          if (check_keys(direct, item + ".direct", {"enabled"})) {
            child.add_child("direct").set_attribute("state", feature_enabled(*direct, item + ".direct") ? "on" : "off");
          }
        }
      }
    }
    const Value* kvm = json::find(*features, "kvm");
    if (check_keys(kvm, path + ".kvm", {"hidden"})) {
      const bool hidden = get_bool(*kvm, "hidden", path + ".kvm").value_or(false);
      element.add_child("kvm").add_child("hidden").set_attribute("state", hidden ? "on" : "off");
    }
    if (const Value* v = json::find(*features, "pvspinlock"); check_keys(v, path + ".pvspinlock", {"enabled"})) {
      element.add_child("pvspinlock").set_attribute("state", feature_enabled(*v, path + ".pvspinlock") ? "on" : "off");
    }
  }
  if (smm_) {
    element.add_child("smm").set_attribute("state", "on");
  }
  element.add_child("vmport").set_attribute("state", "off");
}

// clock.go: written only when spec.domain.clock is set.
void Converter::map_clock(XmlElement& domain, const Value& spec_domain) {
  const Value* clock = json::find(spec_domain, "clock");
  const std::string path = "spec.domain.clock";
  if (!check_keys(clock, path, {"utc", "timezone", "timer"})) {
    return;
  }
  auto& element = domain.add_child("clock");
  const Value* utc = json::find(*clock, "utc");
  auto timezone = get_string(*clock, "timezone", path);
  if (utc != nullptr && timezone) {
    fail(path, "utc and timezone are mutually exclusive");
  }
  if (timezone) {
    element.set_attribute("offset", "timezone").set_attribute("timezone", *timezone);
  } else {
    element.set_attribute("offset", "utc");
    std::string adjustment = "reset";
    if (check_keys(utc, path + ".utc", {"offsetSeconds"})) {
      if (auto offset = get_int(*utc, "offsetSeconds", path + ".utc")) {
        adjustment = std::to_string(*offset);
      }
    }
    element.set_attribute("adjustment", adjustment);
  }
  const Value* timers = json::find(*clock, "timer");
  if (!check_keys(timers, path + ".timer", {"hpet", "kvm", "pit", "rtc", "hyperv"})) {
    return;
  }
  static constexpr std::pair<std::string_view, std::string_view> names[] = {
      {"rtc", "rtc"}, {"pit", "pit"}, {"hpet", "hpet"}, {"kvm", "kvmclock"}, {"hyperv", "hypervclock"}};
  for (const auto& [key, libvirt_name] : names) {
    const Value* timer = json::find(*timers, key);
    const std::string item = path + ".timer." + std::string(key);
    const bool has_policy = key == "rtc" || key == "pit" || key == "hpet";
    // Timers spell FeatureState's "enabled" as "present" (api core/v1 schema.go).
    if (!(key == "rtc" ? check_keys(timer, item, {"present", "tickPolicy", "track"})
          : has_policy ? check_keys(timer, item, {"present", "tickPolicy"})
                       : check_keys(timer, item, {"present"}))) {
      continue;
    }
    auto& t = element.add_child("timer").set_attribute("name", libvirt_name);
    if (has_policy) {
      if (auto policy = get_string(*timer, "tickPolicy", item); policy && !policy->empty()) {
        if (*policy != "delay" && *policy != "catchup" && *policy != "merge" && *policy != "discard") {
          fail(item + ".tickPolicy", "must be one of delay, catchup, merge, discard");
        }
        t.set_attribute("tickpolicy", *policy);
      }
    }
    if (auto track = get_string(*timer, "track", item); track && !track->empty()) {
      t.set_attribute("track", *track);
    }
    t.set_attribute("present", get_bool(*timer, "present", item).value_or(true) ? "yes" : "no");
  }
}

void Converter::map_devices(XmlElement& domain, const Value& spec_domain) {
  const Value* device_spec = json::find(spec_domain, "devices");
  const std::string path = "spec.domain.devices";
  static const Value empty_object(rapidjson::kObjectType);
  if (device_spec == nullptr) {
    device_spec = &empty_object;
  }
  check_keys(device_spec, path,
             {"disks", "interfaces", "inputs", "watchdog", "rng", "autoattachGraphicsDevice", "autoattachMemBalloon",
              "autoattachSerialConsole", "autoattachPodInterface", "useVirtioTransitional", "logSerialConsole"});
  if (!device_spec->IsObject()) {
    return;
  }
  virtio_transitional_ = get_bool(*device_spec, "useVirtioTransitional", path).value_or(false);
  auto& devices = domain.add_child("devices");
  map_disks(devices, *device_spec);
  map_interfaces(devices, *device_spec);

  // The serial console (console.go), logged to a file for `--console-log` and the tests.
  if (get_bool(*device_spec, "autoattachSerialConsole", path).value_or(true)) {
    const std::string log = options_.layout.serial_log.empty() ? options_.layout.private_dir + "/virt-serial0-log"
                                                               : options_.layout.serial_log;
    auto& serial = devices.add_child("serial").set_attribute("type", "file");
    serial.add_child("source").set_attribute("path", log).set_attribute("append", "on");
    serial.add_child("target").set_attribute("port", "0");
    devices.add_child("console").set_attribute("type", "file").add_child("target").set_attribute("type", "serial");
  } else if (bios_use_serial_) {
    // libvirt: "need at least one serial port to use BIOS serial output".
    fail("spec.domain.firmware.bootloader.bios.useSerial", "needs the serial console (autoattachSerialConsole)");
  }
  const Value* inputs = json::find(*device_spec, "inputs");
  if (inputs != nullptr && inputs->IsArray()) {
    for (rapidjson::SizeType i = 0; i < inputs->Size(); ++i) {
      const std::string item = path + ".inputs[" + std::to_string(i) + "]";
      const Value& input = (*inputs)[i];
      if (!check_keys(&input, item, {"name", "type", "bus"})) {
        continue;
      }
      const std::string type = get_string(input, "type", item).value_or("tablet");
      const std::string bus = get_string(input, "bus", item).value_or("usb");
      if (type != "tablet") {
        fail(item + ".type", "only tablet is supported");
      }
      if (bus != "usb" && bus != "virtio") {
        fail(item + ".bus", "must be usb or virtio");
      }
      // No virtio model on a tablet: libvirt 9.0's QEMU driver rejects it (launcher-libvirt.md B.7 #14).
      auto& element = devices.add_child("input").set_attribute("type", "tablet").set_attribute("bus", bus);
      if (auto name = get_string(input, "name", item)) {
        element.add_child("alias").set_attribute("name", "ua-" + *name);
      }
    }
  } else if (inputs != nullptr) {
    fail(path + ".inputs", "must be an array");
  }
  if (get_bool(*device_spec, "autoattachGraphicsDevice", path).value_or(true)) {
    devices.add_child("graphics")
        .set_attribute("type", "vnc")
        .add_child("listen")
        .set_attribute("type", "socket")
        .set_attribute("socket", options_.layout.private_dir + "/virt-vnc");
    devices.add_child("video")
        .add_child("model")
        .set_attribute("type", "vga")
        .set_attribute("vram", "16384")
        .set_attribute("heads", "1");
  }
  if (const Value* watchdog = json::find(*device_spec, "watchdog");
      check_keys(watchdog, path + ".watchdog", {"name", "i6300esb"})) {
    const Value* esb = json::find(*watchdog, "i6300esb");
    if (esb == nullptr) {
      fail(path + ".watchdog.i6300esb", "required");
    } else if (check_keys(esb, path + ".watchdog.i6300esb", {"action"})) {
      const std::string action = get_string(*esb, "action", path + ".watchdog.i6300esb").value_or("reset");
      if (action != "reset" && action != "poweroff" && action != "shutdown") {
        fail(path + ".watchdog.i6300esb.action", "must be reset, poweroff or shutdown");
      }
      auto& element = devices.add_child("watchdog").set_attribute("model", "i6300esb").set_attribute("action", action);
      if (auto name = get_string(*watchdog, "name", path + ".watchdog")) {
        element.add_child("alias").set_attribute("name", "ua-" + *name);
      }
    }
  }
  if (const Value* rng = json::find(*device_spec, "rng"); check_keys(rng, path + ".rng", {})) {
    devices.add_child("rng")
        .set_attribute("model", virtio_model())
        .add_child("backend")
        .set_attribute("model", "random")
        .set_text("/dev/urandom");
  }
  if (get_bool(*device_spec, "autoattachMemBalloon", path).value_or(true)) {
    auto& balloon = devices.add_child("memballoon").set_attribute("model", virtio_model());
    balloon.set_attribute("freePageReporting", "off");
    balloon.add_child("stats").set_attribute("period", "10");
  } else {
    devices.add_child("memballoon").set_attribute("model", "none");
  }
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

// Interfaces (network/ configurators): the pod network on a tap the pod prepared
// (bridge/masquerade → type='ethernet'), or QEMU user networking (slirp → type='user').
void Converter::map_interfaces(XmlElement& devices, const Value& device_spec) {
  const std::string path = "spec.domain.devices.interfaces";
  const Value& spec = *json::find(vmi_, "spec");
  if (const Value* networks = json::find(spec, "networks"); networks != nullptr && networks->IsArray()) {
    for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
      check_keys(&(*networks)[i], "spec.networks[" + std::to_string(i) + "]", {"name", "pod"});
    }
  }
  const Value* interfaces = json::find(device_spec, "interfaces");
  if (interfaces == nullptr) {
    return;
  }
  if (!interfaces->IsArray()) {
    fail(path, "must be an array");
    return;
  }
  for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    const Value& iface = (*interfaces)[i];
    if (!check_keys(&iface, item, {"name", "bridge", "masquerade", "slirp", "macAddress", "model", "bootOrder"})) {
      continue;
    }
    const bool user = json::find(iface, "slirp") != nullptr;
    auto& element = devices.add_child("interface").set_attribute("type", user ? "user" : "ethernet");
    if (auto mac = get_string(iface, "macAddress", item)) {
      element.add_child("mac").set_attribute("address", *mac);
    }
    if (!user) {
      element.add_child("target")
          .set_attribute("dev", options_.layout.tap_prefix + std::to_string(i))
          .set_attribute("managed", "no");
    }
    const std::string model = get_string(iface, "model", item).value_or("virtio");
    element.add_child("model").set_attribute("type", model == "virtio" ? virtio_model() : model);
    if (auto order = get_int(iface, "bootOrder", item)) {
      element.add_child("boot").set_attribute("order", std::to_string(*order));
    }
    element.add_child("rom").set_attribute("enabled", "no");
    if (auto name = get_string(iface, "name", item)) {
      element.add_child("alias").set_attribute("name", "ua-" + *name);
    }
  }
}

}  // namespace

Result<std::string> convert(const json::Value& vmi, const ConvertOptions& options) {
  return Converter(vmi, options).run();
}

}  // namespace vmgate::launcher
