#include "vmgate/node/agent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

#include "plugin_server.hpp"
#include "vmgate/node/unique_fd.hpp"

namespace vmgate::node {

namespace {

constexpr long cgroup2_super_magic = 0x63677270;  // linux/magic.h CGROUP2_SUPER_MAGIC

// KubeVirt's retry delays after a failed start or registration (device_controller.go).
constexpr std::array<std::chrono::seconds, 4> backoff{std::chrono::seconds(1), std::chrono::seconds(2),
                                                      std::chrono::seconds(5), std::chrono::seconds(10)};

struct Plugin {
  DeviceKind kind;
  PluginServer server;
  PluginState state;
  Health health;
  std::size_t failures = 0;
  std::chrono::steady_clock::time_point next_attempt{};
  std::optional<FileId> failed_with;  // the kubelet.sock of the last failure
};

// After a failure, the next attempt waits for the back-off, unless kubelet.sock is another file
// by now: a new kubelet is worth trying at once (a stale socket left by a dead kubelet would
// otherwise have pushed the back-off to 10 s). The back-off counts per kubelet.sock: a new
// kubelet's socket exists a moment before it accepts, and a refusal then waits 1 s, not 10.
void note_failure(Plugin& plugin, std::chrono::steady_clock::time_point now, const std::optional<FileId>& kubelet) {
  if (kubelet != plugin.failed_with) {
    plugin.failures = 0;
  }
  plugin.next_attempt = now + backoff[std::min(plugin.failures++, backoff.size() - 1)];
  plugin.failed_with = kubelet;
}

std::string errno_text() {
  return std::strerror(errno);
}

// The kernel auto-loads tun, vhost_net and vhost_vsock on the first open of their device node
// (KubeVirt's preOpen); a missing node is only reported as unhealthy later.
void pre_open(const std::string& dev_root, const DeviceKind& kind) {
  if (!kind.pre_open) {
    return;
  }
  const std::string path = dev_root + std::string(kind.host_path);
  const UniqueFd opened(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
}

// The directories whose entries tell health and registration: the device-plugin directory and
// the parents of the device nodes. Watches are (re-)added on every round, so that a directory
// recreated by a restarting kubelet is watched again; a missing one is simply not watched.
void watch_directories(int inotify, const NodeOptions& options) {
  constexpr std::uint32_t events = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;
  std::set<std::string> directories{options.device_plugin_dir};
  for (const DeviceKind& kind : options.devices) {
    directories.insert(std::filesystem::path(options.dev_root + std::string(kind.host_path)).parent_path().string());
  }
  for (const std::string& directory : directories) {
    ::inotify_add_watch(inotify, directory.c_str(), events);
  }
}

void drain(int fd) {
  std::array<char, 4096> buffer{};
  while (::read(fd, buffer.data(), buffer.size()) > 0) {
  }
}

void step(Plugin& plugin, const NodeOptions& options, const DeviceScan& devices, EventLog& log) {
  const std::string resource = resource_name(plugin.kind);
  const Health health = health_of(plugin.kind, devices);
  if (health != plugin.health) {
    plugin.health = health;
    plugin.server.set_health(health);
    log.write(health == Health::healthy ? "info" : "warning", "device health changed",
              {{"resource", resource}, {"health", health_name(health)}});
  }

  const std::string directory = options.device_plugin_dir + "/";
  const std::string kubelet_socket = directory + std::string(kubelet_socket_name);
  const std::string plugin_socket = directory + socket_name(plugin.kind);
  const SocketScan sockets{.kubelet = file_id(kubelet_socket), .plugin = file_id(plugin_socket)};
  const PluginAction action = plan_plugin(plugin.state, sockets);
  if (action == PluginAction::wait_for_kubelet) {
    plugin.state.registered_with.reset();
    return;
  }
  if (action == PluginAction::none) {
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now < plugin.next_attempt && sockets.kubelet == plugin.failed_with) {
    return;
  }
  if (action == PluginAction::serve_and_register) {
    if (plugin.state.serving) {
      log.write("info", "plugin socket gone: the kubelet restarted; serving again", {{"resource", resource}});
    }
    plugin.state = {};
    Result<FileId> serving = plugin.server.start(plugin_socket);
    if (!serving) {
      note_failure(plugin, now, sockets.kubelet);
      log.write("error", "cannot serve the device plugin",
                {{"resource", resource}, {"error", serving.error().message}});
      return;
    }
    plugin.state.serving = *serving;
  }
  const Status registered = plugin.server.register_with(kubelet_socket);
  if (!registered) {
    note_failure(plugin, now, sockets.kubelet);
    log.write("warning", "registration failed; retrying",
              {{"resource", resource}, {"error", registered.error().message}});
    return;
  }
  plugin.failures = 0;
  plugin.failed_with.reset();
  plugin.state.registered_with = sockets.kubelet;
  log.write("info", "registered with the kubelet",
            {{"resource", resource}, {"endpoint", socket_name(plugin.kind)}, {"health", health_name(plugin.health)}});
}

}  // namespace

CgroupMode detect_cgroup_mode() {
  struct statfs info {};
  if (::statfs("/sys/fs/cgroup", &info) == 0 && static_cast<long>(info.f_type) == cgroup2_super_magic) {
    return CgroupMode::v2;
  }
  return CgroupMode::v1;
}

DeviceScan scan_devices(std::string_view dev_root, std::span<const DeviceKind> kinds) {
  DeviceScan scan;
  for (const DeviceKind& kind : kinds) {
    struct stat info {};
    const std::string path = std::string(dev_root) + std::string(kind.host_path);
    if (::stat(path.c_str(), &info) == 0) {
      scan.present.emplace(kind.host_path);
    }
  }
  return scan;
}

std::optional<FileId> file_id(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return std::nullopt;
  }
  return FileId{.device = static_cast<std::uint64_t>(info.st_dev),
                .inode = static_cast<std::uint64_t>(info.st_ino),
                .change_seconds = static_cast<std::int64_t>(info.st_ctim.tv_sec),
                .change_nanoseconds = static_cast<std::int64_t>(info.st_ctim.tv_nsec)};
}

Status run_agent(const NodeOptions& options, std::string_view permissions, int stop_fd, EventLog& log) {
  const UniqueFd inotify(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify.valid()) {
    return Error{"inotify: " + errno_text()};
  }
  const DeviceScan initial = scan_devices(options.dev_root, options.devices);
  std::vector<Plugin> plugins;
  plugins.reserve(options.devices.size());
  for (const DeviceKind& kind : options.devices) {
    pre_open(options.dev_root, kind);
    const Health health = health_of(kind, initial);
    plugins.push_back({.kind = kind,
                       .server = PluginServer(kind, std::string(permissions), options.max_devices, health, log),
                       .state = {},
                       .health = health,
                       .failures = 0,
                       .next_attempt = {},
                       .failed_with = {}});
    if (health == Health::unhealthy) {
      log.write("warning", "device node missing: advertised as unhealthy",
                {{"resource", resource_name(kind)}, {"path", kind.host_path}});
    }
  }
  log.write("info", "vmgate-node started",
            {{"device_plugin_dir", options.device_plugin_dir}, {"permissions", permissions}});

  bool waiting_logged = false;
  while (true) {
    watch_directories(inotify.get(), options);
    const DeviceScan devices = scan_devices(options.dev_root, options.devices);
    for (Plugin& plugin : plugins) {
      step(plugin, options, devices, log);
    }
    const bool kubelet_missing =
        !file_id(options.device_plugin_dir + "/" + std::string(kubelet_socket_name)).has_value();
    if (kubelet_missing && !waiting_logged) {
      log.write("info", "waiting for the kubelet", {{"socket", std::string(kubelet_socket_name)}});
    }
    waiting_logged = kubelet_missing;

    // A second at most between rounds: inotify wakes us early; the timeout catches what a watch
    // cannot see (a directory that did not exist yet) and paces registration retries.
    std::array<pollfd, 2> fds{
        {{.fd = stop_fd, .events = POLLIN, .revents = 0}, {.fd = inotify.get(), .events = POLLIN, .revents = 0}}};
    const int ready = ::poll(fds.data(), fds.size(), 1000);
    if (ready < 0 && errno != EINTR) {
      return Error{"poll: " + errno_text()};
    }
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      break;
    }
    if (ready > 0 && (fds[1].revents & POLLIN) != 0) {
      drain(inotify.get());
    }
  }
  log.write("info", "stopping: ending the streams and removing the sockets");
  for (Plugin& plugin : plugins) {
    plugin.server.stop();
  }
  log.write("info", "vmgate-node stopped");
  return Ok{};
}

}  // namespace vmgate::node
