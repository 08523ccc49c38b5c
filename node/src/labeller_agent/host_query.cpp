// The host questions of host_query.hpp. KubeVirt: cmd/virt-launcher/node-labeller/node-labeller.sh
// (the virsh calls: domcapabilities --machine q35 --arch x86_64 --virttype T, its host-model
// piped into hypervisor-cpu-baseline --features, capabilities),
// pkg/virt-handler/node-labeller/kvm-caps-info-plugin_amd64.go, node_labeller.go
// (isNodeRealtimeCapable), pkg/virt-handler/heartbeat/heartbeat.go (isCPUManagerEnabled).
#include "host_query.hpp"

#include <fcntl.h>
#include <libvirt/virterror.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "vmgate/node/unique_fd.hpp"

namespace vmgate::node {

namespace {

std::string last_error() {
  const char* message = virGetLastErrorMessage();
  return message != nullptr ? std::string(message) : std::string("unknown libvirt error");
}

// libvirt prints every error to stderr unless an error function is set; ours are returned.
void ignore_error(void* /*user_data*/, virErrorPtr /*error*/) {}
void wake(int /*timer*/, void* /*user_data*/) {}

struct FreeString {
  void operator()(char* text) const { std::free(text); }  // NOLINT: libvirt's strings are malloc'ed
};
using LibvirtString = std::unique_ptr<char, FreeString>;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// KVM's answer to KVM_GET_MSR_INDEX_LIST: first the count (E2BIG), then the list.
std::set<std::uint32_t> msr_indices(int kvm) {
  kvm_msr_list probe{};
  if (::ioctl(kvm, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG) {
    return {};
  }
  const std::size_t count = probe.nmsrs;
  std::vector<std::uint32_t> buffer(1 + count);
  buffer[0] = static_cast<std::uint32_t>(count);  // the kvm_msr_list header: nmsrs, then indices
  if (::ioctl(kvm, KVM_GET_MSR_INDEX_LIST, buffer.data()) < 0) {
    return {};
  }
  return {buffer.begin() + 1,
          buffer.begin() + 1 + static_cast<std::ptrdiff_t>(std::min<std::size_t>(count, buffer[0]))};
}

}  // namespace

struct LibvirtEventLoop::Impl {
  std::atomic<bool> stop{false};
  int timer = -1;
  std::thread thread;
};

LibvirtEventLoop::LibvirtEventLoop() : impl_(std::make_unique<Impl>()) {
  virSetErrorFunc(nullptr, ignore_error);
  virEventRegisterDefaultImpl();
  // A periodic timer makes virEventRunDefaultImpl return regularly, so the thread sees `stop`.
  impl_->timer = virEventAddTimeout(100, wake, nullptr, nullptr);
  impl_->thread = std::thread([impl = impl_.get()] {
    while (!impl->stop.load()) {
      virEventRunDefaultImpl();
    }
  });
}

LibvirtEventLoop::~LibvirtEventLoop() {
  impl_->stop.store(true);
  impl_->thread.join();
  if (impl_->timer >= 0) {
    virEventRemoveTimeout(impl_->timer);
  }
}

Result<LibvirtConnection> open_embedded(const std::string& root) {
  const std::filesystem::path etc = std::filesystem::path(root) / "etc";
  const std::filesystem::path conf = etc / "qemu.conf";
  std::error_code error;
  std::filesystem::create_directories(etc, error);
  if (error) {
    return Error{"cannot create " + etc.string() + ": " + error.message()};
  }
  if (!std::filesystem::exists(conf, error)) {
    std::ofstream out(conf);
    out << "# Written by vmgate-node for the node labeller's embedded QEMU driver: QEMU probed as root\n"
           "# (another user makes every connect probe QEMU again).\n"
           "user = \"root\"\n"
           "group = \"root\"\n";
    if (!out) {
      return Error{"cannot write " + conf.string()};
    }
  }
  const std::string uri = "qemu:///embed?root=" + root;
  LibvirtConnection connection(virConnectOpen(uri.c_str()));
  if (!connection) {
    return Error{"cannot connect to " + uri + ": " + last_error()};
  }
  return connection;
}

Result<NodeFacts> query_libvirt(virConnectPtr connection, std::string_view virttype) {
  utsname host{};
  ::uname(&host);
  const std::string arch = host.machine;
  if (arch != "x86_64") {
    // node-labeller.sh labels x86_64 (and, partly, aarch64 and s390x); vmgate runs x86_64 only.
    return Error{"node labels: architecture " + arch + " is not supported"};
  }
  constexpr const char* machine = "q35";
  const std::string type(virttype);
  LibvirtString domain_xml(
      virConnectGetDomainCapabilities(connection, nullptr, arch.c_str(), machine, type.c_str(), 0));
  if (!domain_xml) {
    return Error{"virConnectGetDomainCapabilities (" + type + "): " + last_error()};
  }
  LibvirtString host_xml(virConnectGetCapabilities(connection));
  if (!host_xml) {
    return Error{"virConnectGetCapabilities: " + last_error()};
  }
  Result<DomainCapabilities> domain = parse_domain_capabilities(domain_xml.get());
  if (!domain) {
    return domain.error();
  }
  Result<HostCapabilities> host_caps = parse_host_capabilities(host_xml.get());
  if (!host_caps) {
    return host_caps.error();
  }
  NodeFacts facts;
  const std::string cpu = host_model_cpu_xml(domain->host_model);
  if (!cpu.empty()) {
    const char* cpus[] = {cpu.c_str()};  // NOLINT: libvirt's C array of documents
    LibvirtString baseline(virConnectBaselineHypervisorCPU(connection, nullptr, arch.c_str(), machine, type.c_str(),
                                                           cpus, 1, VIR_CONNECT_BASELINE_CPU_EXPAND_FEATURES));
    if (!baseline) {
      return Error{"virConnectBaselineHypervisorCPU (" + type + "): " + last_error()};
    }
    Result<std::vector<std::string>> features = parse_baseline_features(baseline.get());
    if (!features) {
      return features.error();
    }
    facts.supported_features = std::move(*features);
  }
  facts.domain = std::move(*domain);
  facts.host = std::move(*host_caps);
  return facts;
}

std::vector<std::string> hyperv_capabilities(const std::string& kvm_path) {
  const UniqueFd kvm(::open(kvm_path.c_str(), O_RDWR | O_CLOEXEC));
  if (!kvm.valid()) {
    return {};
  }
  // KubeVirt's CapsDesc: an extension decides when it has one, else the MSR's presence.
  struct Capability {
    const char* name;
    int extension;
    std::uint32_t msr;
  };
  constexpr std::uint32_t vp_index = 0x40000002;
  constexpr std::uint32_t reset = 0x40000003;
  constexpr std::uint32_t vp_runtime = 0x40000010;
  constexpr std::uint32_t tsc_frequency = 0x40000022;
  constexpr std::uint32_t scontrol = 0x40000080;
  constexpr std::uint32_t stimer0_config = 0x400000B0;
  constexpr std::uint32_t reenlightenment_control = 0x40000106;
  const Capability capabilities[] = {
      // NOLINT: a fixed table
      {"base", KVM_CAP_HYPERV, 0},
      {"time", KVM_CAP_HYPERV_TIME, 0},
      {"vpindex", KVM_CAP_HYPERV_VP_INDEX, vp_index},
      {"tlbflush", KVM_CAP_HYPERV_TLBFLUSH, 0},
      {"ipi", KVM_CAP_HYPERV_SEND_IPI, 0},
      {"synic", KVM_CAP_HYPERV_SYNIC, scontrol},
      {"synic2", KVM_CAP_HYPERV_SYNIC2, scontrol},
      {"frequencies", 0, tsc_frequency},
      {"reset", 0, reset},
      {"runtime", 0, vp_runtime},
      {"synictimer", 0, stimer0_config},
      {"reenlightenment", 0, reenlightenment_control},
  };
  const std::set<std::uint32_t> msrs = msr_indices(kvm.get());
  std::vector<std::string> names;
  for (const Capability& capability : capabilities) {
    const bool offered = capability.extension != 0 ? ::ioctl(kvm.get(), KVM_CHECK_EXTENSION, capability.extension) > 0
                                                   : msrs.count(capability.msr) != 0;
    if (offered) {
      names.emplace_back(capability.name);
    }
  }
  return names;
}

bool realtime_capable() {
  std::string value = read_file("/proc/sys/kernel/sched_rt_runtime_us");
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) {
    value.pop_back();
  }
  return value == "-1";
}

bool kubelet_cpu_manager_static(const std::string& kubelet_root) {
  return cpu_manager_static(read_file(kubelet_root + "/cpu_manager_state"));
}

bool hardware_kvm_module() {
  std::error_code error;
  return std::filesystem::exists("/sys/module/kvm_intel", error) ||
         std::filesystem::exists("/sys/module/kvm_amd", error);
}

}  // namespace vmgate::node
