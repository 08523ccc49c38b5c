#pragma once
// PID 1 of the launcher's container. A container's first process is its init: orphans are
// re-parented to it and only it can reap them. QEMU daemonizes, so the domain's QEMU (and the
// capability probes libvirt runs) become children of PID 1; unreaped, a QEMU that died stays a
// zombie whose pid libvirt still finds alive, and the launcher waits on a dead domain. KubeVirt
// runs virt-launcher-monitor as PID 1 for this; vmgate-launcher does the same in-process: as PID
// 1 it forks, the child runs the launcher, and PID 1 only reaps and passes signals on.
#include <optional>

namespace vmgate::launcher {

/// When this process is not PID 1: nothing happens, std::nullopt (go on as the launcher).
/// As PID 1: forks. The child gets std::nullopt with the signal mask it had and goes on as the
/// launcher. PID 1 never returns to the caller's work: it reaps every child, passes SIGTERM,
/// SIGINT and SIGHUP to the launcher, and once the launcher has exited returns its exit status
/// (128 + the signal when a signal ended it), which main returns.
/// A failed fork is reported on stderr and the launcher runs as PID 1 itself (std::nullopt).
std::optional<int> become_init_if_pid_one();

}  // namespace vmgate::launcher
