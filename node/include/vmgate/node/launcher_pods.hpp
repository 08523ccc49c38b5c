#pragma once
// The launcher pods of this node, watched through the API (docs/node.md, "VMI status" and "Pod
// network"): each one's status file is followed and reported to its VMI, and its pod network is
// built once. One informer (pods with fieldSelector spec.nodeName=<node> and label
// kubevirt.io=virt-launcher) and one worker thread, woken by the informer and at least every
// second. Writes are bounded: one patch per change of the file, a failed patch retried with
// backoff (1 s doubling to 30 s), nothing after a final phase.
// Thread-safety: start() and stop() from the owner.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/node/event_log.hpp"
#include "vmgate/node/launcher_status.hpp"

namespace vmgate::node {

struct LauncherPodsConfig {
  std::string node_name;
  std::string kubelet_root = "/var/lib/kubelet";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string proc_root = "/proc";
  bool pod_network = true;  // build the pod networks (needs root, hostPID)
  std::string nft_path;     // "" : find_nft()
};

/// Reads the status file in `private_dir` (pods/<uid>/volumes/kubernetes.io~empty-dir/private):
/// the directory opened without following a final symbolic link, the file opened relative to it
/// with O_NOFOLLOW and O_NONBLOCK (a FIFO does not block), refused unless a regular file of at
/// most max_status_file_bytes. nullopt: no file (yet). Errors: a symbolic link, not a regular
/// file, too large, unreadable.
Result<std::optional<std::string>> read_status_file(const std::string& private_dir);

class LauncherPods {
 public:
  /// Errors: the TLS settings of `client` unusable, no node name.
  static Result<std::unique_ptr<LauncherPods>> create(const kube::ClientConfig& client, LauncherPodsConfig config,
                                                      EventLog& log);
  LauncherPods(const LauncherPods&) = delete;
  LauncherPods& operator=(const LauncherPods&) = delete;
  ~LauncherPods();  // stop()

  void start();
  void stop();  // idempotent; interrupts the request in flight

  /// The launcher pods of this node as the informer last saw them (launcher_pod()). Thread-safe:
  /// the subresource endpoint asks from its own thread.
  [[nodiscard]] std::vector<LauncherPod> current() const;

 private:
  struct Impl;
  explicit LauncherPods(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::node
