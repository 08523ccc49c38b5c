#pragma once
// The node agent's I/O: the device plugins served over gRPC on unix sockets in the kubelet's
// device-plugin directory, registered with kubelet.sock, kept healthy and registered. The
// decisions are device_plugin.hpp's; this part only looks at files and moves bytes.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"
#include "vmgate/node/device_plugin.hpp"
#include "vmgate/node/event_log.hpp"
#include "vmgate/node/node_options.hpp"

namespace vmgate::node {

/// cgroup v2 when /sys/fs/cgroup is the unified hierarchy, else v1.
CgroupMode detect_cgroup_mode();

/// Which of `kinds`' device nodes exist under `dev_root` ("" for the agent's own root).
DeviceScan scan_devices(std::string_view dev_root, std::span<const DeviceKind> kinds);

/// The identity of the file at `path`, nullopt when there is none.
std::optional<FileId> file_id(const std::string& path);

/// Serves one plugin per device in `options` until `stop_fd` (a signalfd, eventfd or pipe)
/// becomes readable: each on <dir>/kubevirt-<name>.sock, registered with <dir>/kubelet.sock as
/// devices.kubevirt.io/<name>; again whenever the kubelet restarts (its socket replaced, ours
/// removed); ListAndWatch reports Unhealthy while the device node is missing. On stop, the
/// streams get an empty device list (the kubelet's cue that the plugin is gone), the servers
/// stop and the sockets are removed. A kubelet that is not there (yet) is waited for.
/// Errors: the inotify instance cannot be created, polling fails. Not thread-safe: one caller.
Status run_agent(const NodeOptions& options, std::string_view permissions, int stop_fd, EventLog& log);

}  // namespace vmgate::node
