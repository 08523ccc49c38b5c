#pragma once
// One device plugin's gRPC server (private to node/src/agent). Thread-safety: start, stop,
// set_health and register_with from one thread; the gRPC handlers run on gRPC's threads.
#include <memory>
#include <string>

#include "vmgate/common/result.hpp"
#include "vmgate/node/device_plugin.hpp"
#include "vmgate/node/event_log.hpp"

namespace vmgate::node {

class PluginServer {
 public:
  PluginServer(DeviceKind kind, std::string permissions, int count, Health health, EventLog& log);
  ~PluginServer();
  PluginServer(const PluginServer&) = delete;
  PluginServer& operator=(const PluginServer&) = delete;
  PluginServer(PluginServer&&) noexcept;
  PluginServer& operator=(PluginServer&&) = delete;

  /// Serves the DevicePlugin service on the unix socket `socket_path` (a file already there is
  /// removed first). Returns the socket's identity. Errors: the socket cannot be bound.
  Result<FileId> start(const std::string& socket_path);
  /// Ends every ListAndWatch with an empty device list, shuts the server down (at most a second
  /// for the handlers) and removes the socket when it is still the one start() made. Idempotent.
  void stop();
  /// Sends the new health to every ListAndWatch stream when it changed.
  void set_health(Health health);
  /// Register(version v1beta1, endpoint = the socket's name, resource name) on `kubelet_socket`,
  /// within 5 s. Errors: the kubelet is unreachable or refuses (its message).
  [[nodiscard]] Status register_with(const std::string& kubelet_socket) const;

 private:
  struct Serving;
  DeviceKind kind_;
  std::string permissions_;
  int count_;
  Health health_;
  EventLog* log_;
  std::string socket_path_;
  std::unique_ptr<Serving> serving_;
};

}  // namespace vmgate::node
