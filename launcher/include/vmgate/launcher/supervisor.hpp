#pragma once
// Runs one domain for its whole life (docs/launcher.md, "Exit status and supervision"): create,
// wait until running, follow lifecycle events; guest poweroff → 0; crash or QEMU death → 1 with
// one line why; a stop request → ACPI shutdown re-sent every 5 s (a press the guest is not yet
// listening for is lost: docs/launcher.md, "ACPI shutdown and the grace period"), destroy when
// the grace period ends. Follows KubeVirt pkg/virt-launcher/monitor.go and the
// shutdown loop of pkg/virt-handler/vm.go.
// Thread-safety: request_stop() may be called from any thread; run() from one thread once.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vmgate/launcher/control_socket.hpp"
#include "vmgate/launcher/libvirt.hpp"

namespace vmgate::launcher {

struct SupervisorConfig {
  std::chrono::seconds grace_period{30};
  std::chrono::milliseconds shutdown_resend{5000};
  std::chrono::milliseconds poll_interval{100};
  /// Empty: no status file. JSON {phase, reason, timestamps} replaced atomically.
  std::string status_file;
  /// startStrategy Paused: the domain starts paused (VIR_DOMAIN_START_PAUSED) until someone
  /// resumes it (virsh resume, KubeVirt's virtctl unpause).
  bool start_paused = false;
  /// Called once from run() when the domain is running (the launcher logs a line).
  std::function<void(const std::string& domain_name)> on_running;
  /// The taps the domain names with managed='no' are made by the node (vmgate-node builds the
  /// pod network, as KubeVirt's virt-handler does): run() waits this long for each to exist in
  /// the launcher's network namespace before it creates the domain, then fails naming it.
  std::chrono::seconds tap_wait{240};
  std::chrono::seconds tap_wait_note{10};
  /// Whether a network interface of that name exists here (default: if_nametoindex).
  std::function<bool(const std::string& name)> link_exists;
  /// The control socket (control_socket.hpp) served while the domain runs: pause, unpause.
  /// Empty: none. One that cannot be bound is noted (on_note) and the guest runs without it.
  std::string control_socket;
  /// A line for the launcher's log (the taps still missing while waiting, pause and unpause).
  std::function<void(const std::string& line)> on_note;
};

struct Outcome {
  int exit_code = 0;
  /// One line: why the launcher ended.
  std::string reason;
};

/// The tap names of the interfaces `xml` gives as <target dev='NAME' managed='no'/>, in order.
std::vector<std::string> unmanaged_taps(const std::string& xml);

class Supervisor {
 public:
  Supervisor(virConnectPtr connection, SupervisorConfig config);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  /// Creates the transient domain from `xml` (after destroying a leftover domain of the same
  /// name, as a previous crashed launcher in the same root would leave) and supervises it.
  /// The domain never outlives run(): every exit path destroys it if still active.
  Outcome run(const std::string& xml);

  /// Asks for a graceful stop (SIGTERM).
  void request_stop() { stop_requested_.store(true); }

 private:
  static int on_lifecycle(virConnectPtr connection, virDomainPtr domain, int event, int detail, void* opaque);
  static void free_opaque(void* opaque);
  void write_status(const std::string& phase, const std::string& reason);
  /// Waits for the unmanaged taps of `xml`: all there (nothing set), one still missing at the
  /// deadline (`missing`), or a stop requested while one was missing (`stopped`).
  struct TapWait {
    std::string missing;
    bool stopped = false;
  };
  TapWait wait_for_taps(const std::string& xml);
  /// The control socket's pause and unpause on `domain`: "" when done (and the status file says
  /// so), else why not ("domain is already paused", "domain is not paused", libvirt's words).
  std::string pause_or_unpause(virDomainPtr domain, ControlCommand command, bool stopping);

  virConnectPtr connection_;
  SupervisorConfig config_;
  std::atomic<bool> stop_requested_{false};
  // STOPPED details and crashes by domain id, recorded by the event callback. Keyed by id, so a
  // leftover of the same name and UUID is not taken for ours, and an event that arrives before
  // run() knows its domain's id is not lost. Shared with the callback's registration: libvirt's
  // event loop thread may still be inside the callback when ~Supervisor deregisters it (the
  // deregistration only marks it), so what the callback touches lives until libvirt frees it.
  struct LifecycleEvents;
  [[nodiscard]] int stopped_detail(unsigned int id) const;
  [[nodiscard]] bool crashed(unsigned int id) const;
  std::shared_ptr<LifecycleEvents> events_;
  int callback_id_ = -1;
  std::string started_at_;
  std::string running_at_;
  bool paused_ = false;  // the domain is paused (startStrategy Paused, or a pause request)
};

}  // namespace vmgate::launcher
