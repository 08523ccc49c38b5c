#include "vmgate/kube/utc_time.hpp"
#include "vmgate/launcher/launcher_main.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <filesystem>
#include <csignal>
#include <iostream>
#include <thread>

#include "vmgate/kube/command_frame.hpp"
#include "vmgate/launcher/console_tail.hpp"
#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/host_topology.hpp"
#include "vmgate/launcher/options.hpp"
#include "vmgate/launcher/status_file.hpp"
#include "vmgate/launcher/vmi_source.hpp"
#include "vmgate/launcher/volume_plan.hpp"
#include "vmgate/launcher/volume_prepare.hpp"
#ifdef VMGATE_LAUNCHER_HAS_LIBVIRT
#include "vmgate/launcher/libvirt.hpp"
#include "vmgate/launcher/supervisor.hpp"
#endif

namespace vmgate::launcher {
namespace {

// The launcher gives up before the supervisor runs: one line on stderr and, with --status-file,
// a Failed status, so that whoever follows the file (guest-console-log, the node agent) learns
// the guest will never run instead of waiting for it.
int give_up(const LauncherOptions& options, std::ostream& err, int exit_code, const std::string& message) {
  err << "vmgate-launcher: " << message << '\n';
  if (!options.status_file.empty()) {
    const std::string now = kube::utc_now();
    if (Status written = write_status_file(options.status_file, {"Failed", message, now, {}, now}); !written) {
      err << "vmgate-launcher: " << written.error().message << '\n';
    }
  }
  return exit_code;
}

// SIGTERM and SIGINT blocked here (and in every thread started later), taken by sigtimedwait:
// no handler, no global flag.
void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// --tail-console: the guest-console-log container.
int tail_console_until_stopped(const LauncherOptions& options, std::ostream& out, std::ostream& err) {
  block_stop_signals();
  ConsoleTailConfig config;
  config.log_file = options.tail_console;
  config.status_file = options.until_status;
  return tail_console(config, out, err, [](std::chrono::milliseconds timeout) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    const timespec wait{static_cast<time_t>(seconds.count()),
                        static_cast<long>(std::chrono::nanoseconds(timeout - seconds).count())};
    return sigtimedwait(&set, nullptr, &wait) > 0;
  });
}

}  // namespace

#ifdef VMGATE_LAUNCHER_HAS_LIBVIRT
namespace {

// SIGTERM/SIGINT are blocked in every thread (so libvirt's threads never take them) and
// collected by one thread that turns them into a stop request.
class SignalWatcher {
 public:
  explicit SignalWatcher(Supervisor& supervisor) : supervisor_(supervisor) {
    thread_ = std::thread([this] {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGTERM);
      sigaddset(&set, SIGINT);
      const timespec timeout{0, 200'000'000};
      while (!done_.load()) {
        if (sigtimedwait(&set, nullptr, &timeout) > 0) {
          supervisor_.request_stop();
        }
      }
    });
  }
  ~SignalWatcher() {
    done_.store(true);
    thread_.join();
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  Supervisor& supervisor_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

int boot(const LauncherOptions& options, const std::string& xml, long grace_seconds, bool start_paused,
         const std::string& private_dir, std::ostream& err) {
  block_stop_signals();

  std::string uri = options.connect;
  if (uri.empty()) {
    Result<std::string> conf = write_embed_qemu_conf(options.root);
    if (!conf) {
      return give_up(options, err, 1, conf.error().message);
    }
    uri = embed_uri(options.root);
  }
  const EventLoop loop;
  Result<ConnectHandle> connection = open_connection(uri);
  if (!connection) {
    return give_up(options, err, 1, connection.error().message);
  }
  SupervisorConfig config;
  config.grace_period = std::chrono::seconds(grace_seconds);
  config.status_file = options.status_file;
  config.start_paused = start_paused;
  // The node agent's pause and unpause (docs/launcher.md, "The control socket").
  config.control_socket = private_dir + "/" + std::string(kube::pod_paths::control_socket_name);
  config.on_note = [&err](const std::string& line) { err << "vmgate-launcher: " << line << std::endl; };
  // libvirt's test driver (--connect test:///...) opens no device: nobody makes its taps.
  if (uri.rfind("test:", 0) == 0) {
    config.link_exists = [](const std::string& /*name*/) { return true; };
  }
  config.on_running = [&err](const std::string& name) {
    err << "vmgate-launcher: domain " << name << " running" << std::endl;
  };
  Supervisor supervisor(connection->get(), config);
  Outcome outcome;
  {
    const SignalWatcher watcher(supervisor);
    outcome = supervisor.run(xml);
  }
  err << "vmgate-launcher: " << outcome.reason << '\n';
  return outcome.exit_code;
}

}  // namespace
#else
namespace {
int boot(const LauncherOptions& options, const std::string& /*xml*/, long /*grace_seconds*/, bool /*start_paused*/,
         const std::string& /*private_dir*/, std::ostream& err) {
  return give_up(options, err, 1, "built without libvirt; only --print-xml works");
}
}  // namespace
#endif

int run_launcher(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err) {
  using kube::exit_usage;
  kube::CommandStart<LauncherOptions> start = kube::start_command(
      parse_launcher_options(args), {"vmgate-launcher: ", "vmgate-launcher"}, launcher_usage, out, err);
  if (!start.options) {
    return start.exit_code;
  }
  std::optional<LauncherOptions>& options = start.options;
  if (!options->tail_console.empty()) {
    return tail_console_until_stopped(*options, out, err);
  }
  Result<json::Document> vmi = load_vmi(*options, in);
  if (!vmi) {
    return give_up(*options, err, exit_usage, vmi.error().message);
  }
  ConvertOptions convert_options;
  if (!options->pod_root.empty()) {
    convert_options.layout = layout_below(options->pod_root);
  }
  convert_options.layout.block_pvcs = block_volumes(*vmi, convert_options.layout);
  // The pod's CPUs, for dedicatedCpuPlacement: the launcher's own affinity is its cgroup cpuset.
  if (cpu_set_t set; sched_getaffinity(0, sizeof set, &set) == 0) {
    for (std::size_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) {
        convert_options.cpuset.push_back(static_cast<int>(cpu));
      }
    }
  }
  convert_options.software_emulation = use_software_emulation(options->emulation);
  convert_options.firmware = options->firmware;
  convert_options.layout.serial_log = options->console_log;
  if (options->connect.empty()) {
    // EFI variable stores live in the embedded driver's root, like its other state.
    convert_options.layout.nvram_dir = options->root + "/lib/qemu/nvram";
  }
  if (!options->kernel_boot_dir.empty()) {
    convert_options.layout.kernel_boot_dir = options->kernel_boot_dir;
  }
  convert_options.cpu_numa_nodes = host_cpu_numa_nodes();
  Result<std::map<std::string, BlockSizes>> block_sizes = probe_block_sizes(*vmi, convert_options.layout);
  if (!block_sizes) {
    return give_up(*options, err, exit_usage, block_sizes.error().message);
  }
  convert_options.block_sizes = std::move(*block_sizes);
  Result<std::string> xml = convert(*vmi, convert_options);
  if (!xml) {
    return give_up(*options, err, exit_usage, xml.error().message);
  }
  if (options->print_xml) {
    out << *xml;
    return 0;
  }
  // The files the volumes need, where the XML says they are (after conversion: a VMI the
  // converter refuses never touches the pod's disks).
  Result<VolumePlan> plan = plan_volumes(*vmi, convert_options.layout);
  if (!plan) {
    return give_up(*options, err, exit_usage, plan.error().message);
  }
  if (Status prepared = prepare_volumes(*plan); !prepared) {
    return give_up(*options, err, 1, prepared.error().message);
  }
  // QEMU binds the VNC socket (and the default serial log) in the private directory, which a
  // container started without KubeVirt's emptyDir there does not have.
  if (std::error_code error; !std::filesystem::create_directories(convert_options.layout.private_dir, error) && error) {
    err << "vmgate-launcher: " << convert_options.layout.private_dir << ": " << error.message() << '\n';
    return 1;
  }
  // --grace-period, else the VMI's terminationGracePeriodSeconds, else KubeVirt's default 30.
  long grace_seconds = options->grace_period_seconds.value_or(30);
  if (!options->grace_period_seconds) {
    if (const json::Value* grace = json::find_path(*vmi, {"spec", "terminationGracePeriodSeconds"});
        grace != nullptr && grace->IsInt64() && grace->GetInt64() >= 0) {
      grace_seconds = static_cast<long>(grace->GetInt64());
    }
  }
  const json::Value* strategy = json::find_path(*vmi, {"spec", "startStrategy"});
  const bool start_paused = strategy != nullptr && strategy->IsString() && json::as_view(*strategy) == "Paused";
  return boot(*options, *xml, grace_seconds, start_paused, convert_options.layout.private_dir, err);
}

}  // namespace vmgate::launcher
