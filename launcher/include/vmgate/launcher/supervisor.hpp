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
#include <map>
#include <mutex>
#include <set>
#include <string>

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
  /// Called from run() with each phase the status file gets ("Scheduled", "Running",
  /// "Succeeded", "Failed") and its reason (--vmi-name writes them to the VMI).
  std::function<void(const std::string& phase, const std::string& reason)> on_status;
};

struct Outcome {
  int exit_code = 0;
  /// One line: why the launcher ended.
  std::string reason;
};

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
  void write_status(const std::string& phase, const std::string& reason);

  virConnectPtr connection_;
  SupervisorConfig config_;
  std::atomic<bool> stop_requested_{false};
  // STOPPED details and crashes by domain id, recorded by the event callback. Keyed by id, so a
  // leftover of the same name and UUID is not taken for ours, and an event that arrives before
  // run() knows its domain's id is not lost.
  [[nodiscard]] int stopped_detail(unsigned int id);
  [[nodiscard]] bool crashed(unsigned int id);
  std::mutex events_mutex_;
  std::map<unsigned int, int> stopped_details_;
  std::set<unsigned int> crashed_ids_;
  int callback_id_ = -1;
  std::string started_at_;
  std::string running_at_;
};

}  // namespace vmgate::launcher
