#pragma once
// `vmgate-launcher --vmi-name NS/NAME` and its VirtualMachineInstance (docs/launcher.md, "Status
// in the VMI"): the supervisor's phases written back to the VMI (Scheduled while the domain
// starts, Running, Succeeded or Failed at the end; a Ready condition; the domain's state in the
// vmgate.kubevirt.io/domain-state annotation), and a watch of the VMI whose deletion stops the
// guest as SIGTERM does (ACPI, then the grace period).
// The VMI has no status subresource (KubeVirt's CRD), so the status is a JSON merge patch of the
// object, carrying the VMI's uid: a VMI deleted and created again under the name refuses it.
// Thread-safety: report() and the deletion callback from any thread.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/vmi_status.hpp"

namespace vmgate::launcher {

// The patch itself is the kube layer's, shared with vmgate-node (which reports from the
// launcher's status file).
using kube::domain_state_annotation;
using kube::vmi_status_patch;

class VmiLink {
 public:
  /// `vmi`: the VMI as read (its namespace, name, uid and resourceVersion). Errors: the TLS
  /// settings of `config` unusable.
  static Result<std::unique_ptr<VmiLink>> create(const kube::ClientConfig& config, const json::Value& vmi,
                                                 std::ostream& log);
  VmiLink(const VmiLink&) = delete;
  VmiLink& operator=(const VmiLink&) = delete;
  ~VmiLink();  // finish()

  /// Starts writing reports and watching the VMI; `on_deleted` runs once when the VMI is marked
  /// for deletion, disappears, or is replaced by another of the same name.
  void start(std::function<void()> on_deleted);
  /// The supervisor's phase; the latest is written (earlier ones may be skipped), retried on
  /// failure until written or finish().
  void report(const std::string& phase, const std::string& reason);
  /// Writes the last report (waits up to 10 s), stops the watch.
  void finish();

 private:
  struct Impl;
  explicit VmiLink(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The client configuration for --vmi-name: --kubeconfig (and --context), else the pod's service
/// account. Errors: neither usable.
Result<kube::ClientConfig> vmi_client_config(const std::string& kubeconfig, const std::string& context);

}  // namespace vmgate::launcher
