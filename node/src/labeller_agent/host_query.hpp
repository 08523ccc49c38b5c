#pragma once
// The node labeller's questions to the host: libvirt's embedded QEMU driver (capabilities,
// domain capabilities, the host-model baseline), KVM's Hyper-V support, the realtime sysctl,
// the kubelet's CPU manager state. Not thread-safe: the labeller's thread only.
#include <libvirt/libvirt.h>

#include <memory>
#include <string>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/node/node_labels.hpp"

namespace vmgate::node {

struct ConnectClose {
  void operator()(virConnectPtr connection) const { virConnectClose(connection); }
};
using LibvirtConnection = std::unique_ptr<virConnect, ConnectClose>;

/// Runs libvirt's default event loop on a thread of its own while it lives (the embedded
/// driver wants one registered) and silences libvirt's printing of errors (they are returned).
class LibvirtEventLoop {
 public:
  LibvirtEventLoop();
  LibvirtEventLoop(const LibvirtEventLoop&) = delete;
  LibvirtEventLoop& operator=(const LibvirtEventLoop&) = delete;
  ~LibvirtEventLoop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Opens qemu:///embed?root=ROOT, writing ROOT/etc/qemu.conf first when there is none (QEMU as
/// root: another user would re-probe QEMU on every connect). Errors: libvirt's message.
Result<LibvirtConnection> open_embedded(const std::string& root);

/// Everything node_labels needs from libvirt for `virttype` on this architecture (q35).
/// Errors name the call and carry libvirt's message, or the XML's problem.
Result<NodeFacts> query_libvirt(virConnectPtr connection, std::string_view virttype);

/// The Hyper-V enlightenments KVM offers (kvm-caps-info-plugin_amd64.go), from `kvm_path`.
/// Empty when the device cannot be opened (as KubeVirt: logged there, no labels).
std::vector<std::string> hyperv_capabilities(const std::string& kvm_path);

/// kernel.sched_rt_runtime_us is -1 (isNodeRealtimeCapable).
bool realtime_capable();

/// The kubelet's CPU manager runs the static policy (heartbeat.go isCPUManagerEnabled).
bool kubelet_cpu_manager_static(const std::string& kubelet_root);

/// vmgate-launcher's `--emulation auto` test for a hardware KVM module.
bool hardware_kvm_module();

}  // namespace vmgate::node
