#pragma once
// `vmgate-launcher --tail-console LOG --until-status STATUS`: the guest-console-log container of
// a launcher pod (KubeVirt's virt-tail), which puts the guest's serial console on the
// container's stdout, so that `kubectl logs POD -c guest-console-log` shows it
// (docs/launcher.md, "The guest's console log"). Thread-safety: one call per thread; no shared state.
#include <chrono>
#include <functional>
#include <ostream>
#include <string>

namespace vmgate::launcher {

struct ConsoleTailConfig {
  std::string log_file;
  /// The launcher's status file; empty: follow until stopped.
  std::string status_file;
  /// How often the log and the status are looked at when nothing happens (no busy loop).
  std::chrono::milliseconds poll_interval{100};
};

/// Waits at most `timeout`; true when the tail was asked to stop (SIGTERM) meanwhile.
using StopWait = std::function<bool(std::chrono::milliseconds timeout)>;

/// Streams every byte appended to `log_file` to `out` (flushed after each batch) until the status
/// file shows a final phase (Succeeded or Failed) or `wait_for_stop` says stop, then streams what
/// is left and returns 0. The log may not exist yet (waited for), may be truncated (read again
/// from its start) or replaced by a new file (the old one read to its end first). Memory is
/// bounded (one 64 KiB buffer). Returns 1, with one line on `err`, when `out` fails or the log
/// cannot be read for another reason than not existing yet.
int tail_console(const ConsoleTailConfig& config, std::ostream& out, std::ostream& err, const StopWait& wait_for_stop);

}  // namespace vmgate::launcher
