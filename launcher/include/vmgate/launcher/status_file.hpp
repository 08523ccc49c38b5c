#pragma once
// The launcher's status file (`--status-file`, docs/launcher.md "The status file"): one JSON
// object, replaced atomically, that says how far the guest got. In a launcher pod it is
// `/var/run/kubevirt-private/vmgate-status.json` (kube/pod_paths.hpp); guest-console-log reads
// it to know when to stop, and the node agent reads it through the kubelet's directory of the
// emptyDir to report the VMI's status. Changing a field here changes that contract: document it.
// Thread-safety: no shared state; one writer per file.
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::launcher {

struct LauncherStatus {
  /// "Scheduled" (the domain is being started), "Running", then "Succeeded" or "Failed".
  std::string phase;
  /// One line of words: why (the last line the launcher prints when it exits, for a final phase).
  std::string reason;
  std::string started;  // RFC 3339 UTC, when the launcher began to start the domain; may be empty
  std::string running;  // when the domain was created; empty until then
  std::string updated;  // when this status was written
  /// The domain is paused: started paused (startStrategy Paused) or paused through the control
  /// socket (virtctl pause), until unpaused. Written as `"paused"` (always, true or false).
  bool paused = false;
};

/// True for the phases after which the launcher writes nothing more: Succeeded and Failed.
bool is_final_phase(std::string_view phase);

/// Writes `status` to `path` as one JSON line: to `<path>.tmp` (mode 0644), fsync, then
/// rename over `path`, so that a reader never sees half a file. `started` and `updated` are
/// always written, `running` only when set. Errors name the file and the system's reason.
Status write_status_file(const std::string& path, const LauncherStatus& status);

/// Reads what write_status_file wrote. Errors: the file cannot be read (ENOENT included: the
/// launcher has not started yet), it is not a JSON object, or `phase` is not a string; each
/// names the file.
Result<LauncherStatus> read_status_file(const std::string& path);

}  // namespace vmgate::launcher
