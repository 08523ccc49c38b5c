#include "vmgate/kube/utc_time.hpp"
#include "vmgate/launcher/supervisor.hpp"

#include <net/if.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "vmgate/launcher/control_socket.hpp"
#include "vmgate/launcher/status_file.hpp"

namespace vmgate::launcher {
namespace {

// The domain's name from its XML, read back from libvirt after create (no XML parsing here).
std::string name_of(virDomainPtr domain) {
  const char* name = virDomainGetName(domain);
  return name != nullptr ? std::string(name) : std::string();
}

// The text of the domain's <name> element, the first one in the XML the converter writes
// (nothing before it has a <name> child); empty when there is none.
std::string domain_name_in(const std::string& xml) {
  const std::size_t open = xml.find("<name>");
  const std::size_t close = open == std::string::npos ? open : xml.find("</name>", open);
  return close == std::string::npos ? std::string() : xml.substr(open + 6, close - open - 6);
}

bool is_active(virDomainPtr domain) {
  return virDomainIsActive(domain) == 1;
}

// virDomainGetState's shutoff reasons are numbered differently from the STOPPED event details.
int stopped_detail_from_reason(int reason) {
  switch (reason) {
    case VIR_DOMAIN_SHUTOFF_SHUTDOWN:
      return VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN;
    case VIR_DOMAIN_SHUTOFF_DESTROYED:
      return VIR_DOMAIN_EVENT_STOPPED_DESTROYED;
    case VIR_DOMAIN_SHUTOFF_CRASHED:
      return VIR_DOMAIN_EVENT_STOPPED_CRASHED;
    case VIR_DOMAIN_SHUTOFF_FAILED:
      return VIR_DOMAIN_EVENT_STOPPED_FAILED;
    default:
      return -1;
  }
}

// The value of attribute `name` in the tag text `tag` ("<target dev='tap0' managed='no'/>"),
// either quote; "" when absent.
std::string attribute(std::string_view tag, std::string_view name) {
  for (std::size_t at = tag.find(name); at != std::string_view::npos; at = tag.find(name, at + 1)) {
    const std::size_t quote = at + name.size() + 1;
    if (at > 0 && tag[at - 1] == ' ' && quote < tag.size() && tag[quote - 1] == '=' &&
        (tag[quote] == '\'' || tag[quote] == '"')) {
      const std::size_t end = tag.find(tag[quote], quote + 1);
      return end == std::string_view::npos ? std::string() : std::string(tag.substr(quote + 1, end - quote - 1));
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> unmanaged_taps(const std::string& xml) {
  std::vector<std::string> taps;
  for (std::size_t at = xml.find("<target "); at != std::string::npos; at = xml.find("<target ", at + 1)) {
    const std::size_t end = xml.find('>', at);
    if (end == std::string::npos) {
      break;
    }
    const std::string_view tag = std::string_view(xml).substr(at, end - at);
    if (attribute(tag, "managed") == "no") {
      if (std::string dev = attribute(tag, "dev"); !dev.empty()) {
        taps.push_back(std::move(dev));
      }
    }
  }
  return taps;
}

Supervisor::TapWait Supervisor::wait_for_taps(const std::string& xml) {
  const std::vector<std::string> taps = unmanaged_taps(xml);
  const auto exists = [this](const std::string& name) {
    return config_.link_exists ? config_.link_exists(name) : ::if_nametoindex(name.c_str()) != 0;
  };
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + config_.tap_wait;
  auto next_note = clock::now();
  for (;;) {
    std::string missing;
    for (const std::string& tap : taps) {
      if (!exists(tap)) {
        missing = tap;
        break;
      }
    }
    const auto now = clock::now();
    if (missing.empty()) {
      return {};
    }
    if (stop_requested_.load()) {
      return {"", true};
    }
    if (now >= deadline) {
      return {missing, false};
    }
    if (now >= next_note && config_.on_note) {
      config_.on_note("waiting for the tap " + missing + " (the node agent builds the pod network)");
      next_note = now + config_.tap_wait_note;
    }
    std::this_thread::sleep_for(std::min<clock::duration>(config_.poll_interval, deadline - now));
  }
}

struct Supervisor::LifecycleEvents {
  std::mutex mutex;
  std::map<unsigned int, int> stopped_details;
  std::set<unsigned int> crashed_ids;
};

Supervisor::Supervisor(virConnectPtr connection, SupervisorConfig config)
    : connection_(connection), config_(std::move(config)), events_(std::make_shared<LifecycleEvents>()) {
  // libvirt owns the opaque from here and frees it (free_opaque) once the callback is removed
  // and no dispatch is running it; a failed registration leaves it ours.
  auto opaque = std::make_unique<std::shared_ptr<LifecycleEvents>>(events_);
  callback_id_ = virConnectDomainEventRegisterAny(connection_, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                                  VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), opaque.get(), free_opaque);
  if (callback_id_ >= 0) {
    (void)opaque.release();
  }
}

Supervisor::~Supervisor() {
  if (callback_id_ >= 0) {
    virConnectDomainEventDeregisterAny(connection_, callback_id_);
  }
}

void Supervisor::free_opaque(void* opaque) {
  delete static_cast<std::shared_ptr<LifecycleEvents>*>(opaque);
}

int Supervisor::on_lifecycle(virConnectPtr /*connection*/, virDomainPtr domain, int event, int detail, void* opaque) {
  LifecycleEvents& events = **static_cast<std::shared_ptr<LifecycleEvents>*>(opaque);
  const unsigned int id = virDomainGetID(domain);
  const std::lock_guard lock(events.mutex);
  if (event == VIR_DOMAIN_EVENT_STOPPED) {
    events.stopped_details[id] = detail;
  } else if (event == VIR_DOMAIN_EVENT_CRASHED) {
    events.crashed_ids.insert(id);
  }
  return 0;
}

int Supervisor::stopped_detail(unsigned int id) const {
  const std::lock_guard lock(events_->mutex);
  const auto found = events_->stopped_details.find(id);
  return found != events_->stopped_details.end() ? found->second : -1;
}

bool Supervisor::crashed(unsigned int id) const {
  const std::lock_guard lock(events_->mutex);
  return events_->crashed_ids.count(id) != 0;
}

void Supervisor::write_status(const std::string& phase, const std::string& reason) {
  if (config_.status_file.empty()) {
    return;
  }
  // A status that cannot be written must not stop the supervision: the guest runs on, and the
  // reason still goes to stderr at exit.
  LauncherStatus status{phase, reason, started_at_, running_at_, {}, paused_};
  (void)write_status_file(config_.status_file, status);
}

std::string Supervisor::pause_or_unpause(virDomainPtr domain, ControlCommand command, bool stopping) {
  if (stopping) {
    return "domain is shutting down";
  }
  int state = VIR_DOMAIN_NOSTATE;
  int reason = 0;
  if (virDomainGetState(domain, &state, &reason, 0) != 0) {
    return "cannot read the domain's state: " + last_libvirt_error();
  }
  if (command == ControlCommand::pause) {
    if (state == VIR_DOMAIN_PAUSED) {
      return "domain is already paused";
    }
    if (state != VIR_DOMAIN_RUNNING) {
      return "domain is not running (libvirt state " + std::to_string(state) + ")";
    }
    if (virDomainSuspend(domain) != 0) {
      return "cannot pause the domain: " + last_libvirt_error();
    }
    paused_ = true;
    write_status("Running", "domain paused by user");
  } else {
    if (state != VIR_DOMAIN_PAUSED) {
      return "domain is not paused";
    }
    if (virDomainResume(domain) != 0) {
      return "cannot unpause the domain: " + last_libvirt_error();
    }
    paused_ = false;
    write_status("Running", "domain running");
  }
  if (config_.on_note) {
    config_.on_note(command == ControlCommand::pause ? "domain paused by user" : "domain unpaused by user");
  }
  return {};
}

Outcome Supervisor::run(const std::string& xml) {
  started_at_ = kube::utc_now();
  write_status("Scheduled", "starting the domain");
  const TapWait taps = wait_for_taps(xml);
  if (!taps.missing.empty()) {
    const std::string reason = "tap device " + taps.missing + " not created within " +
                               std::to_string(config_.tap_wait.count()) + " s (the node agent builds the pod network)";
    write_status("Failed", reason);
    return {1, reason};
  }
  if (taps.stopped) {
    write_status("Succeeded", "stop requested before the domain started");
    return {0, "stop requested before the domain started"};
  }

  // A domain of the same name in this root was left by a launcher that died: QEMU outlives an
  // embedding process (docs/launcher.md, "No autodestroy in embed mode"), and the next
  // embedded driver re-attaches to it. Remove it (keeping its EFI variables) before starting ours.
  if (const std::string name = domain_name_in(xml); !name.empty()) {
    if (const DomainHandle leftover(virDomainLookupByName(connection_, name.c_str())); leftover) {
      if (is_active(leftover.get())) {
        virDomainDestroy(leftover.get());
      }
      virDomainUndefineFlags(leftover.get(), VIR_DOMAIN_UNDEFINE_KEEP_NVRAM);
    }
  }
  const DomainHandle created(
      virDomainCreateXML(connection_, xml.c_str(), config_.start_paused ? VIR_DOMAIN_START_PAUSED : VIR_DOMAIN_NONE));
  if (!created) {
    const std::string error = last_libvirt_error();
    write_status("Failed", error);
    return {1, "cannot start the domain: " + error};
  }
  const unsigned int domain_id = virDomainGetID(created.get());
  running_at_ = kube::utc_now();
  paused_ = config_.start_paused;
  write_status("Running", config_.start_paused ? "domain started paused (startStrategy Paused)" : "domain running");
  if (config_.on_running) {
    config_.on_running(name_of(created.get()));
  }

  using clock = std::chrono::steady_clock;
  bool stopping = false;
  clock::time_point deadline;
  clock::time_point last_shutdown;
  Outcome outcome;
  // The node agent's pause and unpause (virtctl's), served between two looks at the domain.
  std::optional<ControlSocket> control;
  if (!config_.control_socket.empty()) {
    if (Result<ControlSocket> listening = ControlSocket::listen(config_.control_socket); listening) {
      control.emplace(std::move(*listening));
    } else if (config_.on_note) {
      config_.on_note("no control socket (pause, unpause): " + listening.error().message);
    }
  }
  const ControlHandler control_handler = [&](ControlCommand command) {
    return pause_or_unpause(created.get(), command, stopping);
  };
  for (;;) {
    int detail = stopped_detail(domain_id);
    int state = VIR_DOMAIN_NOSTATE;
    int reason = 0;
    const bool known = virDomainGetState(created.get(), &state, &reason, 0) == 0;
    // A transient domain vanishes when it stops, possibly before its STOPPED event arrives
    // through the event loop: give the event a moment to say why.
    for (int i = 0; !known && detail < 0 && i < 50; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      detail = stopped_detail(domain_id);
    }
    if (detail >= 0 || !known || state == VIR_DOMAIN_SHUTOFF) {
      const int why = detail >= 0 ? detail : (known ? stopped_detail_from_reason(reason) : -1);
      if (why == VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN) {
        outcome = {0, stopping ? "guest shut down after the stop request" : "guest powered off"};
      } else if (why == VIR_DOMAIN_EVENT_STOPPED_CRASHED) {
        outcome = {1, "guest crashed"};
      } else if (why == VIR_DOMAIN_EVENT_STOPPED_FAILED) {
        outcome = {1, "QEMU failed"};
      } else if (why == VIR_DOMAIN_EVENT_STOPPED_DESTROYED) {
        outcome = {1, "domain destroyed outside the launcher"};
      } else {
        outcome = {1, "domain stopped (libvirt reason " + std::to_string(why) + ")"};
      }
      break;
    }
    if (crashed(domain_id) || state == VIR_DOMAIN_CRASHED) {
      virDomainDestroy(created.get());
      outcome = {1, "guest crashed"};
      break;
    }
    const auto now = clock::now();
    if (stop_requested_.load() && !stopping) {
      stopping = true;
      deadline = now + config_.grace_period;
      write_status("Running", "stop requested: ACPI shutdown");
      if (config_.grace_period.count() > 0) {
        virDomainShutdown(created.get());
        last_shutdown = now;
      }
    }
    if (stopping && now >= deadline) {
      virDomainDestroy(created.get());
      outcome = {1, "grace period of " + std::to_string(config_.grace_period.count()) + " s expired: domain destroyed"};
      break;
    }
    if (stopping && now - last_shutdown >= config_.shutdown_resend) {
      virDomainShutdown(created.get());
      last_shutdown = now;
    }
    if (control) {
      control->serve(config_.poll_interval, control_handler);
    } else {
      std::this_thread::sleep_for(config_.poll_interval);
    }
  }
  // Never leave QEMU behind, whatever ended the loop.
  if (is_active(created.get())) {
    virDomainDestroy(created.get());
  }
  write_status(outcome.exit_code == 0 ? "Succeeded" : "Failed", outcome.reason);
  return outcome;
}

}  // namespace vmgate::launcher
