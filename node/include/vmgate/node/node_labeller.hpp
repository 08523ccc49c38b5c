#pragma once
// The node labeller and heartbeat of vmgate-node (KubeVirt's virt-handler node-labeller and
// heartbeat): on a thread of its own, it asks libvirt's embedded QEMU driver what this node's
// CPU and QEMU offer, writes the labels node_labels.hpp derives to the Node, keeps
// kubevirt.io/schedulable and the kubevirt.io/heartbeat annotation fresh, and follows the
// KubeVirt CR of its namespace. Failures (libvirt, the API) are logged and retried with a
// back-off; they never stop the device plugins. docs/node.md, "Node labels".
#include <chrono>
#include <memory>
#include <string>

#include "vmgate/common/result.hpp"
#include "vmgate/node/event_log.hpp"

namespace vmgate::node {

struct LabellerSettings {
  std::string node_name;
  std::string kubeconfig;  // "": the pod's service account
  std::string kubevirt_namespace = "kubevirt";
  bool use_emulation = false;
  std::string libvirt_root;  // the embedded driver's root
  std::string dev_root;      // where /dev/kvm is seen ("" for the agent's own)
  std::string kubelet_root;  // the kubelet's directory (cpu_manager_state)
  std::chrono::seconds label_interval{180};
  std::chrono::seconds heartbeat_interval{60};
};

class NodeLabeller {
 public:
  /// Loads the API configuration. Errors: the kubeconfig or the service account unusable.
  static Result<std::unique_ptr<NodeLabeller>> create(LabellerSettings settings, EventLog& log);
  NodeLabeller(const NodeLabeller&) = delete;
  NodeLabeller& operator=(const NodeLabeller&) = delete;
  ~NodeLabeller();  // stop()

  /// Starts the thread; returns at once (libvirt's first connection probes QEMU for seconds).
  void start();
  /// Ends the thread, then marks the node kubevirt.io/schedulable=false as virt-handler does on
  /// its way out (a few tries within about 5 s). Idempotent. From the owner's thread.
  void stop();

 private:
  struct Impl;
  explicit NodeLabeller(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::node
