// The compute part of the domain (KubeVirt's converter/compute): name and metadata, memory,
// CPU, machine and firmware, features, clock.
#include "converter_core.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vmgate/admission/quantity.hpp"
#include "vmgate/launcher/pod_layout.hpp"

namespace vmgate::launcher::detail {

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

namespace {

// The virtio-mem block: 2 MiB (a transparent huge page, QEMU's recommendation), or 1 GiB with 1 GiB
// huge pages (pkg/liveupdate/memory HotplugBlockAlignmentBytes, Hotplug1GHugePagesBlockAlignmentBytes).
constexpr std::int64_t hotplug_block_bytes = 2LL << 20;
constexpr std::int64_t hotplug_1g_block_bytes = 1LL << 30;

std::string mebibytes(std::int64_t bytes) {
  return bytes % (1LL << 30) == 0 ? std::to_string(bytes >> 30) + "Gi" : std::to_string(bytes >> 20) + "Mi";
}

}  // namespace

// A positive memory quantity in bytes, or a failure naming `path`.
std::optional<std::int64_t> Converter::memory_bytes(const std::string& text, const std::string& path) {
  auto quantity = admission::Quantity::parse(text);
  if (!quantity) {
    fail(path, quantity.error().message);
    return std::nullopt;
  }
  auto bytes = quantity->value();
  if (!bytes || *bytes <= 0) {
    fail(path, "must be a positive quantity");
    return std::nullopt;
  }
  return *bytes;
}

// memory.guest, else requests.memory, else limits.memory, written in bytes as upstream does
// (converter.go: vmi.Spec.Domain.Memory.Guest → <memory unit='b'>). Hugepages: memory backing
// with the explicit page size. Memory hotplug (maxGuest above guest): see map_memory_hotplug.
void Converter::map_memory(XmlElement& domain, const Value& spec_domain) {
  const Value* memory = json::find(spec_domain, "memory");
  std::optional<std::string> text;
  std::optional<std::string> max_text;
  std::string path = "spec.domain.memory.guest";
  if (check_keys(memory, "spec.domain.memory", {"guest", "hugepages", "maxGuest"})) {
    text = get_string(*memory, "guest", "spec.domain.memory");
    max_text = get_string(*memory, "maxGuest", "spec.domain.memory");
  }
  const bool guest_given = text.has_value();
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
  const std::optional<std::int64_t> bytes = memory_bytes(*text, path);
  if (!bytes) {
    return;
  }

  std::int64_t page_bytes = 0;
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
    page_bytes = *size_bytes;
  }

  std::optional<std::int64_t> max_bytes;
  if (max_text) {
    if (!guest_given) {
      fail("spec.domain.memory.guest", "required with spec.domain.memory.maxGuest (memory hotplug)");
      return;
    }
    max_bytes = memory_bytes(*max_text, "spec.domain.memory.maxGuest");
    if (!max_bytes) {
      return;
    }
    if (*max_bytes < *bytes) {
      fail("spec.domain.memory.maxGuest", "must not be less than spec.domain.memory.guest");
      return;
    }
  }
  if (max_bytes && *max_bytes > *bytes) {
    map_memory_hotplug(domain, *bytes, *max_bytes, page_bytes == hotplug_1g_block_bytes);
  } else {
    // maxGuest equal to guest: no hotplug, as upstream (compute/memory.go).
    domain.add_child("memory").set_attribute("unit", "b").set_text(std::to_string(*bytes));
  }
  guest_bytes_ = *bytes;
  // virtiofs needs the guest's memory shared with virtiofsd (memory_backing.go): memfd, shared,
  // and a NUMA cell for it (cpu.go configureSyntheticNUMA; map_cpu writes it).
  const Value* filesystems = json::find_path(spec_domain, {"devices", "filesystems"});
  shared_memory_ = filesystems != nullptr && filesystems->IsArray() && !filesystems->Empty();
  page_bytes_ = page_bytes;  // <memoryBacking>: map_memory_backing, after map_cpu's NUMA cells
}

// Memory hotplug as KubeVirt's launcher laid it out for libvirt 9 (setupDomainMemory of "virt-launcher:
// setup memory hotplug"; docs/launcher.md, "Memory and CPU hotplug"): <maxMemory slots='1'>
// maxGuest (libvirt 9.0 refuses a maxMemory without slots), <memory> maxGuest (libvirt counts
// the memory devices in it), one NUMA cell of the boot memory (memory devices need a NUMA node;
// written in map_cpu, which knows the vCPUs), and a virtio-mem device of maxGuest - guestAtBoot
// whose requested size is guest - guestAtBoot: the guest sees `guest`.
void Converter::map_memory_hotplug(XmlElement& domain, std::int64_t guest, std::int64_t max_guest, bool gigantic) {
  std::int64_t boot = guest;
  std::string boot_path = "spec.domain.memory.guest";
  if (const Value* status = json::find(vmi_, "status"); status != nullptr && status->IsObject()) {
    if (const Value* memory = json::find(*status, "memory"); memory != nullptr && memory->IsObject()) {
      if (auto at_boot = get_string(*memory, "guestAtBoot", "status.memory")) {
        boot_path = "status.memory.guestAtBoot";
        const std::optional<std::int64_t> parsed = memory_bytes(*at_boot, boot_path);
        if (!parsed) {
          return;
        }
        boot = *parsed;
      }
    }
  }
  if (boot > guest) {
    fail(boot_path, "above spec.domain.memory.guest: hotplugged memory cannot go below the boot memory");
    return;
  }
  const std::int64_t block = gigantic ? hotplug_1g_block_bytes : hotplug_block_bytes;
  for (const auto& [value, field] :
       {std::pair{guest, std::string("spec.domain.memory.guest")},
        std::pair{max_guest, std::string("spec.domain.memory.maxGuest")}, std::pair{boot, boot_path}}) {
    if (value % block != 0) {
      fail(field, "must be a multiple of " + mebibytes(block) + " (the virtio-mem block) for memory hotplug");
      return;
    }
  }
  domain.add_child("maxMemory")
      .set_attribute("slots", "1")
      .set_attribute("unit", "b")
      .set_text(std::to_string(max_guest));
  domain.add_child("memory").set_attribute("unit", "b").set_text(std::to_string(max_guest));
  memory_hotplug_ = MemoryHotplug{boot, max_guest - boot, block, guest - boot};
}

void Converter::map_memory_device(XmlElement& devices) {
  if (!memory_hotplug_) {
    return;
  }
  auto& target = devices.add_child("memory").set_attribute("model", "virtio-mem").add_child("target");
  target.add_child("size").set_attribute("unit", "b").set_text(std::to_string(memory_hotplug_->device_bytes));
  target.add_child("node").set_text("0");
  target.add_child("block").set_attribute("unit", "b").set_text(std::to_string(memory_hotplug_->block_bytes));
  target.add_child("requested").set_attribute("unit", "b").set_text(std::to_string(memory_hotplug_->requested_bytes));
}

// cpu.go: host-model (the cluster default) / host-passthrough / a named model with mpx
// disabled unless the user set it; topology and <vcpu> = sockets*cores*threads. CPU hotplug
// (maxSockets, which the admission core sets under KubeVirt's LiveUpdate rollout): the topology
// has maxSockets sockets, <vcpu> counts them all with `current` the enabled ones, and <vcpus>
// lists each vCPU: the first `sockets` sockets enabled, the first socket not hotpluggable
// (configureCPUTopology).
void Converter::map_cpu(XmlElement& domain, const Value& spec_domain) {
  const Value* cpu = json::find(spec_domain, "cpu");
  std::int64_t sockets = 1;
  std::int64_t cores = 1;
  std::int64_t threads = 1;
  std::int64_t max_sockets = 0;
  std::string model = "host-model";
  std::vector<std::pair<std::string, std::string>> features;
  const std::string path = "spec.domain.cpu";
  bool isolate_emulator_thread = false;
  if (check_keys(cpu, path,
                 {"sockets", "cores", "threads", "model", "features", "maxSockets", "dedicatedCpuPlacement",
                  "isolateEmulatorThread", "numa", "realtime"})) {
    // realtime (vcpu.go): the PMU off, and with NUMA passthrough no shared pages. The vCPU threads'
    // FIFO scheduling is virt-handler's, outside the domain (docs/launcher.md, "Dedicated CPUs").
    if (const Value* realtime = json::find(*cpu, "realtime"); check_keys(realtime, path + ".realtime", {"mask"})) {
      realtime_ = true;
    }
    if (const Value* numa = json::find(*cpu, "numa"); check_keys(numa, path + ".numa", {"guestMappingPassthrough"})) {
      numa_passthrough_ =
          check_keys(json::find(*numa, "guestMappingPassthrough"), path + ".numa.guestMappingPassthrough", {});
    }
    dedicated_cpus_ = get_bool(*cpu, "dedicatedCpuPlacement", path).value_or(false);
    isolate_emulator_thread = get_bool(*cpu, "isolateEmulatorThread", path).value_or(false);
    sockets = get_int(*cpu, "sockets", path).value_or(1);
    cores = get_int(*cpu, "cores", path).value_or(1);
    threads = get_int(*cpu, "threads", path).value_or(1);
    max_sockets = get_int(*cpu, "maxSockets", path).value_or(0);
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
          if (std::any_of(features.begin(), features.end(), [&](const auto& f) { return f.first == *name; })) {
            // A preference's features are appended to the VM's (KubeVirt does the same).
            fail(item + ".name",
                 "\"" + *name + "\" is listed twice (libvirt: \"CPU feature specified more than once\")");
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
  if (max_sockets != 0 && max_sockets < sockets) {
    fail(path + ".maxSockets", "must not be less than sockets");
    return;
  }
  // libvirt and QEMU have no use for more vCPUs than this (QEMU's q35 maximum is 288; KVM's 1024).
  constexpr std::int64_t vcpu_limit = 4096;
  if (sockets > vcpu_limit || cores > vcpu_limit || threads > vcpu_limit ||
      std::max(sockets, max_sockets) * cores * threads > vcpu_limit) {
    fail(path, "more than " + std::to_string(vcpu_limit) + " vCPUs");
    return;
  }
  const std::int64_t enabled = sockets * cores * threads;
  enabled_vcpus_ = enabled;
  vcpus_ = max_sockets != 0 ? max_sockets * cores * threads : enabled;
  auto& vcpu = domain.add_child("vcpu").set_attribute("placement", "static");
  if (max_sockets != 0) {
    vcpu.set_attribute("current", std::to_string(enabled));
  }
  vcpu.set_text(std::to_string(vcpus_));
  if (max_sockets != 0) {
    auto& list = domain.add_child("vcpus");
    for (std::int64_t id = 0; id < vcpus_; ++id) {
      list.add_child("vcpu")
          .set_attribute("id", std::to_string(id))
          .set_attribute("enabled", id < enabled ? "yes" : "no")
          .set_attribute("hotpluggable", id >= cores * threads ? "yes" : "no");
    }
  }

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
      .set_attribute("sockets", std::to_string(max_sockets != 0 ? max_sockets : sockets))
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
  if (numa_passthrough_) {
    map_numa_passthrough(element);
  }
  if (memory_hotplug_ && !numa_passthrough_) {
    // Memory devices need a NUMA node: one cell with every vCPU and the boot memory.
    element.add_child("numa")
        .add_child("cell")
        .set_attribute("id", "0")
        .set_attribute("cpus", "0-" + std::to_string(vcpus_ - 1))
        .set_attribute("memory", std::to_string(memory_hotplug_->boot_bytes))
        .set_attribute("unit", "b");
  }
  if (shared_memory_ && !memory_hotplug_ && !numa_passthrough_) {
    element.add_child("numa")
        .add_child("cell")
        .set_attribute("id", "0")
        .set_attribute("cpus", "0-" + std::to_string(vcpus_ - 1))
        .set_attribute("memory", std::to_string(guest_bytes_))
        .set_attribute("unit", "b");
  }
  // After the last use of `element`: a new child of `domain` may move it.
  if (dedicated_cpus_) {
    map_cpu_pinning(domain, isolate_emulator_thread);
  }
}

// dedicatedCpuPlacement: every enabled vCPU pinned to its own CPU of the pod's cpuset (the CPUs the
// kubelet's static CPU manager gave the pod for them), in order (hotpluggable vCPUs are not: the
// pod has no CPUs for them yet, as KubeVirt counts it), and an isolated emulator thread to the
// CPU after them; KubeVirt's virt-launcher pins from the same cpuset (vcpu.go
// AdjustDomainForTopologyAndCPUSet, which also follows the host's thread siblings: vmgate pins in
// cpuset order; docs/launcher.md, "Dedicated CPUs").
void Converter::map_cpu_pinning(XmlElement& domain, bool isolate_emulator_thread) {
  const auto& cpuset = options_.cpuset;
  const std::int64_t needed = enabled_vcpus_ + (isolate_emulator_thread ? 1 : 0);
  if (static_cast<std::int64_t>(cpuset.size()) < needed) {
    fail("spec.domain.cpu.dedicatedCpuPlacement",
         "needs " + std::to_string(needed) + " CPUs in the pod's cpuset, which has " + std::to_string(cpuset.size()));
    return;
  }
  auto& cputune = domain.add_child("cputune");
  for (std::int64_t vcpu = 0; vcpu < enabled_vcpus_; ++vcpu) {
    cputune.add_child("vcpupin")
        .set_attribute("vcpu", std::to_string(vcpu))
        .set_attribute("cpuset", std::to_string(cpuset[static_cast<std::size_t>(vcpu)]));
  }
  if (isolate_emulator_thread) {
    cputune.add_child("emulatorpin")
        .set_attribute("cpuset", std::to_string(cpuset[static_cast<std::size_t>(enabled_vcpus_)]));
  }
}

// numa.guestMappingPassthrough (vcpu.go numaMapping): the guest gets one NUMA cell per host NUMA
// node its pinned vCPUs run on, in host order, with those vCPUs and an equal share of the memory
// (whole huge pages; the first cells take the pages left over), bound there strictly
// (<numatune>), backed by huge pages of that cell. Without a reported host topology KubeVirt maps
// nothing, and neither does vmgate. The host topology is ConvertOptions::cpu_numa_nodes.
void Converter::map_numa_passthrough(XmlElement& cpu) {
  const std::string field = "spec.domain.cpu.numa.guestMappingPassthrough";
  if (!dedicated_cpus_) {
    fail(field, "needs spec.domain.cpu.dedicatedCpuPlacement");
    return;
  }
  if (page_bytes_ == 0) {
    fail(field,
         "needs spec.domain.memory.hugepages (KubeVirt: \"passing through a numa topology is restricted to VMIs "
         "with hugepages enabled\")");
    return;
  }
  if (options_.cpu_numa_nodes.empty() || static_cast<std::int64_t>(options_.cpuset.size()) < enabled_vcpus_) {
    return;  // no topology reported (or the pinning failed, which map_cpu_pinning names)
  }
  // host node → the vCPUs pinned to its CPUs
  std::map<int, std::vector<std::int64_t>> by_node;
  for (std::int64_t vcpu = 0; vcpu < enabled_vcpus_; ++vcpu) {
    const int host_cpu = options_.cpuset[static_cast<std::size_t>(vcpu)];
    auto node = options_.cpu_numa_nodes.find(host_cpu);
    if (node == options_.cpu_numa_nodes.end()) {
      fail(field, "host CPU " + std::to_string(host_cpu) + " is in no NUMA node of the reported topology");
      return;
    }
    by_node[node->second].push_back(vcpu);
  }
  const auto cells = static_cast<std::int64_t>(by_node.size());
  std::int64_t memory = guest_bytes_;
  if (memory < cells * page_bytes_) {
    fail(field, "not enough memory for one huge page per NUMA node");
    return;
  }
  if (memory % page_bytes_ != 0) {
    fail(field, "the memory is not a whole number of huge pages");
    return;
  }
  const std::int64_t left_over = memory % (page_bytes_ * cells) / page_bytes_;
  memory -= left_over * page_bytes_;
  auto& numa = cpu.add_child("numa");
  std::int64_t id = 0;
  for (const auto& [node, vcpus] : by_node) {
    std::string list;
    for (const std::int64_t vcpu : vcpus) {
      list += (list.empty() ? "" : ",") + std::to_string(vcpu);
    }
    numa.add_child("cell")
        .set_attribute("id", std::to_string(id))
        .set_attribute("cpus", list)
        .set_attribute("memory", std::to_string(memory / cells + (id < left_over ? page_bytes_ : 0)))
        .set_attribute("unit", "b");
    numa_host_nodes_.push_back(node);
    ++id;
  }
}

// <numatune> and <memoryBacking>, once the NUMA cells are known.
void Converter::map_memory_backing(XmlElement& domain) {
  if (!numa_host_nodes_.empty()) {
    auto& numatune = domain.add_child("numatune");
    std::string nodeset;
    for (const int node : numa_host_nodes_) {
      nodeset += (nodeset.empty() ? "" : ",") + std::to_string(node);
    }
    numatune.add_child("memory").set_attribute("mode", "strict").set_attribute("nodeset", nodeset);
    for (std::size_t cell = 0; cell < numa_host_nodes_.size(); ++cell) {
      numatune.add_child("memnode")
          .set_attribute("cellid", std::to_string(cell))
          .set_attribute("mode", "strict")
          .set_attribute("nodeset", std::to_string(numa_host_nodes_[cell]));
    }
  }
  if (page_bytes_ == 0 && !shared_memory_) {
    return;
  }
  auto& backing = domain.add_child("memoryBacking");
  if (page_bytes_ != 0) {
    auto& hugepages = backing.add_child("hugepages");
    if (numa_host_nodes_.empty()) {
      hugepages.add_child("page")
          .set_attribute("size", std::to_string(page_bytes_ / 1024))
          .set_attribute("unit", "KiB");
    }
    for (std::size_t cell = 0; cell < numa_host_nodes_.size(); ++cell) {
      hugepages.add_child("page")
          .set_attribute("size", std::to_string(page_bytes_ / 1024))
          .set_attribute("unit", "KiB")
          .set_attribute("nodeset", std::to_string(cell));
    }
  }
  if (shared_memory_) {
    backing.add_child("source").set_attribute("type", "memfd");
    backing.add_child("access").set_attribute("mode", "shared");
  }
  if (!numa_host_nodes_.empty() && realtime_) {
    backing.add_child("nosharepages");
  }
  if (!numa_host_nodes_.empty()) {
    backing.add_child("allocation").set_attribute("mode", "immediate");
  }
}

// I/O threads (iothreads.go GetIOThreadsCountType): the shared policy (or none, with a disk that
// asks for a dedicated thread) has one thread for every disk, auto two per requested CPU; each
// dedicatedIOThread disk gets its own. Only virtio disks use them (map_disks).
void Converter::map_iothreads(XmlElement& domain, const Value& spec_domain) {
  const std::string policy = get_string(spec_domain, "ioThreadsPolicy", "spec.domain").value_or("");
  if (!policy.empty() && policy != "shared" && policy != "auto") {
    // supplementalPool gives a disk a pool (<driver><iothreads>), which libvirt 9.0 cannot express.
    fail("spec.domain.ioThreadsPolicy", "must be shared or auto (libvirt 9.0 has no disk thread pools)");
    return;
  }
  if (json::find(spec_domain, "ioThreads") != nullptr) {
    fail("spec.domain.ioThreads", "needs ioThreadsPolicy supplementalPool (libvirt 9.0 has no disk thread pools)");
    return;
  }
  std::int64_t dedicated = 0;
  std::int64_t automatic = 0;
  const Value* disks = json::find_path(spec_domain, {"devices", "disks"});
  if (disks != nullptr && disks->IsArray()) {
    for (const Value& disk : disks->GetArray()) {
      const bool own = disk.IsObject() && json::find(disk, "dedicatedIOThread") != nullptr &&
                       json::find(disk, "dedicatedIOThread")->IsBool() &&
                       json::find(disk, "dedicatedIOThread")->GetBool();
      ++(own ? dedicated : automatic);
    }
  }
  if (policy.empty() && dedicated == 0) {
    return;
  }
  std::int64_t limit = 1;
  if (policy == "auto") {
    const Value* cpu = json::find(spec_domain, "cpu");
    const bool isolated =
        cpu != nullptr && cpu->IsObject() && dedicated_cpus_ && json::find(*cpu, "isolateEmulatorThread") != nullptr &&
        json::find(*cpu, "isolateEmulatorThread")->IsBool() && json::find(*cpu, "isolateEmulatorThread")->GetBool();
    std::int64_t cpus = 1;
    for (const char* kind : {"limits", "requests"}) {
      const Value* quantity = json::find_path(spec_domain, {"resources", kind, "cpu"});
      if (quantity != nullptr && quantity->IsString()) {
        if (auto parsed = admission::Quantity::parse(json::as_view(*quantity)); parsed && parsed->value()) {
          cpus = std::max<std::int64_t>(1, *parsed->value());  // requests win: read last
        }
      }
    }
    limit = isolated ? 1 : cpus * 2;
  }
  if (automatic + dedicated > limit) {
    automatic = std::max<std::int64_t>(1, limit - dedicated);
  }
  auto_threads_ = automatic;
  iothreads_ = automatic + dedicated;
  next_dedicated_thread_ = automatic + 1;
  domain.add_child("iothreads").set_text(std::to_string(iothreads_));
}

// Machine type, firmware (BIOS/EFI/kernel boot) and SMBIOS sysinfo (os.go, sysinfo.go).
void Converter::map_os(XmlElement& domain, const Value& spec_domain) {
  std::string machine = "q35";
  if (const Value* m = json::find(spec_domain, "machine"); check_keys(m, "spec.domain.machine", {"type"})) {
    machine = get_string(*m, "type", "spec.domain.machine").value_or("q35");
  }
  if (machine.empty()) {
    machine = "q35";  // the converter's defaulter: q35 when the VMI has no machine type
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
      // persistent: KubeVirt keeps the NVRAM on a backend-storage PVC mounted at the NVRAM
      // directory; the launcher's NVRAM file already outlives a restart (docs/launcher.md).
      (void)get_bool(*efi, "persistent", fw_path + ".bootloader.efi");
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
      for (const auto& [key, element] : {std::pair{"kernelPath", "kernel"}, std::pair{"initrdPath", "initrd"}}) {
        const std::string field = kb_path + ".container";
        const std::optional<std::string> file = get_string(*container, key, field);
        if (!file || file->empty()) {
          continue;
        }
        if (Result<std::string> resolved = kernel_boot_file(options_.layout, *file); resolved) {
          os.add_child(element).set_text(*resolved);
        } else {
          fail(field + "." + key, resolved.error().message);
        }
      }
    }
    if (auto args = get_string(*kernel_boot, "kernelArgs", kb_path); args && !args->empty()) {
      os.add_child("cmdline").set_text(*args);
    }
  }
  if (uuid || serial) {
    os.add_child("smbios").set_attribute("mode", "sysinfo");
  }
  if (start_paused_) {
    // startStrategy Paused: a boot menu gives whoever unpauses it time to choose (os.go).
    os.add_child("bootmenu").set_attribute("enable", "yes").set_attribute("timeout", "10000");
  }
}

// features.go: acpi on unless disabled, apic, smm, hyperv enlightenments; vmport off on amd64.
void Converter::map_features(XmlElement& domain, const Value& spec_domain) {
  const Value* features = json::find(spec_domain, "features");
  const std::string path = "spec.domain.features";
  auto& element = domain.add_child("features");
  bool acpi = true;
  if (check_keys(features, path, {"acpi", "apic", "smm", "hyperv", "kvm", "pvspinlock", "hypervPassthrough"})) {
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
  if ((features == nullptr || !features->IsObject()) && dedicated_cpus_) {
    element.add_child("kvm").add_child("hint-dedicated").set_attribute("state", "on");
  }
  if (features != nullptr && features->IsObject()) {
    if (const Value* v = json::find(*features, "apic"); check_keys(v, path + ".apic", {"enabled", "endOfInterrupt"})) {
      if (feature_enabled(*v, path + ".apic")) {
        element.add_child("apic");
      }
    }
    const Value* hyperv = json::find(*features, "hyperv");
    const Value* passthrough_state = json::find(*features, "hypervPassthrough");
    if (passthrough_state != nullptr && passthrough_state->IsObject() &&
        get_bool(*passthrough_state, "enabled", path + ".hypervPassthrough").value_or(false)) {
      hyperv = nullptr;  // passthrough gives the guest every enlightenment (hypervisor_features.go)
    }
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
          // 4096 is the API default (api defaults.go); libvirt refuses fewer than 4095 retries.
          const std::int64_t retries = get_int(*v, "spinlocks", item).value_or(4096);
          if (retries < 4095) {
            fail(item + ".spinlocks",
                 "must be at least 4095 (libvirt: \"HyperV spinlock retry count must be at least 4095\")");
          }
          child.set_attribute("retries", std::to_string(retries));
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
      auto& kvm_element = element.add_child("kvm");
      kvm_element.add_child("hidden").set_attribute("state", hidden ? "on" : "off");
      if (dedicated_cpus_) {
        kvm_element.add_child("hint-dedicated").set_attribute("state", "on");
      }
    } else if (dedicated_cpus_) {
      // The guest may assume its vCPUs are never preempted (hypervisor_features.go).
      element.add_child("kvm").add_child("hint-dedicated").set_attribute("state", "on");
    }
    if (const Value* passthrough = json::find(*features, "hypervPassthrough");
        check_keys(passthrough, path + ".hypervPassthrough", {"enabled"})) {
      if (get_bool(*passthrough, "enabled", path + ".hypervPassthrough").value_or(false)) {
        element.add_child("hyperv").set_attribute("mode", "passthrough");
      }
    }
    if (const Value* v = json::find(*features, "pvspinlock"); check_keys(v, path + ".pvspinlock", {"enabled"})) {
      element.add_child("pvspinlock").set_attribute("state", feature_enabled(*v, path + ".pvspinlock") ? "on" : "off");
    }
  }
  if (smm_) {
    element.add_child("smm").set_attribute("state", "on");
  }
  if (realtime_) {
    element.add_child("pmu").set_attribute("state", "off");
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
  // Both set: UTC wins, as in clock.go (the API's union is not enforced by the webhook).
  if (timezone && utc == nullptr) {
    // libvirt's schema: [a-zA-Z0-9_.+-/]+ (an IANA name such as Europe/Berlin).
    const bool valid = !timezone->empty() && std::all_of(timezone->begin(), timezone->end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::string_view("_.+-/").find(c) != std::string_view::npos;
    });
    if (!valid) {
      fail(path + ".timezone",
           "must be a time zone name such as Europe/Berlin (libvirt's schema refuses \"" + *timezone + "\")");
    }
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

}  // namespace vmgate::launcher::detail
