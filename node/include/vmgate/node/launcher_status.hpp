#pragma once
// VMI status from the launcher's status file (docs/node.md, "VMI status"): which pods on this
// node are launcher pods, which VMI each one reports to, what its status file says, and the
// patch that makes the VMI say it. The launcher pod holds no API token; vmgate-node reads the
// file the launcher writes into its `private` emptyDir and patches the VMI, as KubeVirt's
// virt-handler reports a domain's state (pkg/virt-handler/vm.go).
// The file is the tenant's: anyone who can exec into their pod can write it, so it is read with
// a size cap and parsed strictly, and it only ever reaches the VMI the pod's controller owner
// reference names, in the pod's namespace, with that VMI's uid as the precondition.
// Pure: no files, sockets, threads or clocks; thread-safe.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::node {

/// The kubelet's root directory (its --root-dir).
inline constexpr std::string_view default_kubelet_root = "/var/lib/kubelet";
/// The launcher's status file, relative to the pod's `private` emptyDir.
inline constexpr std::string_view status_file_name = "vmgate-status.json";
/// A status file is a few hundred bytes; anything above this is refused unread.
inline constexpr std::size_t max_status_file_bytes = std::size_t{64} * 1024;
/// A reason longer than this is refused (the launcher writes one line).
inline constexpr std::size_t max_status_reason_bytes = 4096;

/// What the launcher's supervisor says: "Scheduled", "Running", "Succeeded" or "Failed", and why.
struct LauncherStatus {
  std::string phase;
  std::string reason;
  /// The domain is paused (startStrategy Paused, virtctl pause): the file's `paused`, or for a
  /// launcher that does not write it, a reason saying "started paused".
  bool paused = false;
  bool operator==(const LauncherStatus&) const = default;
};

/// Parses the status file's text: a JSON object (the strict decoder: UTF-8, no duplicate keys,
/// depth 4) with `phase` (one of the four) and `reason` (a string of at most
/// max_status_reason_bytes, no control characters), and optionally `paused` (a boolean) and
/// `timestamps`, an object of strings; other members are ignored. Errors name what is wrong; the text is never echoed.
Result<LauncherStatus> parse_launcher_status(std::string_view text);

/// Succeeded and Failed: nothing is reported after them (the VMI's phase only moves forward).
bool is_final_phase(std::string_view phase);

/// A launcher pod as the node agent needs it, from the pod object the API returned.
struct LauncherPod {
  std::string namespace_name;
  std::string name;
  std::string uid;  // a path component of the kubelet's pods directory
  std::string vmi_name;
  std::string vmi_uid;
  bool host_network = false;
};

/// The pod if it is a launcher pod of `node_name`: label kubevirt.io=virt-launcher,
/// spec.nodeName == node_name, exactly one controller owner reference and it is a
/// kubevirt.io VirtualMachineInstance with a name and uid, a pod uid that is a UUID. Errors say
/// why the pod is not one (the caller logs it once).
Result<LauncherPod> launcher_pod(const json::Value& pod, std::string_view node_name);

/// <kubelet_root>/pods/<uid>/volumes/kubernetes.io~empty-dir/private: the directory the status
/// file is opened in (the file itself with O_NOFOLLOW, relative to it).
std::string private_dir(std::string_view kubelet_root, std::string_view pod_uid);

/// The merge patch for `status` of the VMI `vmi_uid` on `node_name`: kube::vmi_status_patch
/// (phase, reason, Ready/Paused conditions, the domain-state annotation, metadata.uid as the
/// precondition) plus status.nodeName, as virt-handler sets it. `now`: the conditions' time.
json::Document launcher_status_patch(std::string_view vmi_uid, const LauncherStatus& status, std::string_view node_name,
                                     std::string_view now);

/// What has been written for one pod, and the decision for what the file says now.
struct ReportState {
  std::optional<LauncherStatus> written;  // the last status the API accepted (or refused for good)
};
/// True when `current` must be patched: it differs from what was written, and nothing final was
/// written before (a tenant rewriting the file after Failed changes nothing).
bool needs_report(const ReportState& state, const LauncherStatus& current);

}  // namespace vmgate::node
