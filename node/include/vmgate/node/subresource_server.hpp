#pragma once
// The node agent's subresource endpoint (docs/node.md, "The subresource endpoint"): HTTPS with
// client certificates on --subresource-listen, for `vmgate serve`'s pause, unpause and console
// (KubeVirt's virt-handler on port 8186 for virt-api). A request is relayed to the launcher pod of
// the VMI on this node through the unix sockets in the pod's `private` emptyDir, as the kubelet
// lays it out below --kubelet-root: `vmgate-control.sock` (one line each way) and the guest's
// serial console `virt-serial0` (a WebSocket of binary frames both ways). The decisions are
// subresource_request.hpp's.
// The certificate, key and client CA are loaded again when they change (looked at on each new
// connection; a failed load keeps the old ones).
// Limits: TLS >= 1.2; the handshake and the request head within handshake_timeout; a request
// body of at most 64 KiB; the launcher's answer within launcher_timeout; one console per VMI; the
// console relays with backpressure (one buffer of 16 KiB each way, a side read only once the
// other side took the previous bytes).
// Thread-safety: start() and stop() from the owner; the endpoint runs on a thread of its own.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/node/event_log.hpp"
#include "vmgate/node/launcher_status.hpp"
#include "vmgate/node/node_options.hpp"
#include "vmgate/node/subresource_request.hpp"
#include "vmgate/node/unique_fd.hpp"

namespace vmgate::node {

struct SubresourceConfig {
  ListenAddress listen;
  std::string tls_cert;   // PEM, the chain
  std::string tls_key;    // PEM
  std::string client_ca;  // PEM, the CAs a client certificate must chain to
  std::string client_name{default_subresource_client_name};
  std::string kubelet_root{default_kubelet_root};
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds launcher_timeout{10000};
};

/// The launcher pods of this node now (LauncherPods::current); called on the endpoint's thread.
using LauncherPodsSource = std::function<std::vector<LauncherPod>()>;

/// Connects to the unix socket `name` in the directory `directory` whatever the length of its path
/// (a kubelet pod directory is longer than sun_path's 108 bytes): the directory is opened
/// O_PATH|O_DIRECTORY|O_NOFOLLOW, the socket file O_PATH|O_NOFOLLOW relative to it and checked to be
/// a socket, then reached through /proc/self/fd/<its fd>. The tenant can write the directory (exec
/// into the pod), so a symbolic link is never followed: it could name a socket of the node.
/// Returns a connected, non-blocking socket. Errors: no such directory or socket, not a socket, the
/// connection refused or the listener's backlog full.
Result<UniqueFd> connect_pod_socket(const std::string& directory, std::string_view name);

class SubresourceServer {
 public:
  /// Loads the certificate, key and client CA and listens. Errors: unreadable or mismatched PEM
  /// files, an address that cannot be bound.
  static Result<std::unique_ptr<SubresourceServer>> start(SubresourceConfig config, LauncherPodsSource pods,
                                                          EventLog& log);
  SubresourceServer(const SubresourceServer&) = delete;
  SubresourceServer& operator=(const SubresourceServer&) = delete;
  ~SubresourceServer();  // stop()

  /// The port listened on (the one asked for, or the kernel's choice for port 0).
  [[nodiscard]] std::uint16_t port() const;
  /// Closes the listener and every connection, joins the thread. Idempotent.
  void stop();

  struct Impl;

 private:
  explicit SubresourceServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::node
