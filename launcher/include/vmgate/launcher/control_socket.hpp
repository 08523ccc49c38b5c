#pragma once
// The launcher's control socket (docs/launcher.md, "The control socket"):
// `<private_dir>/vmgate-control.sock` (kube/pod_paths.hpp), mode 0600, on which the node agent
// asks the supervisor to pause or unpause its domain (`virtctl pause`/`unpause` through `vmgate
// serve` and vmgate-node, KubeVirt's virt-handler → virt-launcher command socket). One request
// line (`pause\n`, `unpause\n`, at most max_control_request_bytes), one answer line (`ok\n` or
// `error <message>\n`), then the connection is closed. One client at a time; the socket is
// non-blocking and served from the supervisor's loop, so a slow or silent client costs at most
// control_client_timeout and never blocks the supervision.
// Thread-safety: one thread owns a ControlSocket.
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"
#include "vmgate/launcher/unique_fd.hpp"

namespace vmgate::launcher {

enum class ControlCommand { pause, unpause };

/// A request longer than this (newline included) is refused.
inline constexpr std::size_t max_control_request_bytes = 64;
/// A client that has not sent its line by then is closed.
inline constexpr std::chrono::seconds control_client_timeout{5};

/// The command of one request line (without its '\n'): `pause` or `unpause` (a trailing '\r'
/// tolerated). Errors: anything else ("unknown command"), the text never echoed.
Result<ControlCommand> parse_control_command(std::string_view line);

/// What the supervisor answers: "" for done, else the reason it was not ("domain is already paused").
using ControlHandler = std::function<std::string(ControlCommand)>;

/// The answer line for a handler's result: "ok\n" or "error <message>\n" (newlines in the
/// message become spaces, so the answer is one line).
std::string control_answer(std::string_view error);

class ControlSocket {
 public:
  /// Listens on `path`: a socket file left there by an earlier launcher is removed first (any
  /// other file there is an error), mode 0600. Errors name the path and the system's reason,
  /// including a path longer than a unix socket address holds.
  static Result<ControlSocket> listen(const std::string& path);

  ControlSocket(ControlSocket&&) noexcept = default;
  ControlSocket& operator=(ControlSocket&&) noexcept = default;
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;
  ~ControlSocket();  // closes and unlinks the socket

  /// Waits at most `timeout` for a client or its bytes (poll), accepts one, reads what it sent
  /// and, once its line is complete, answers `handler`'s verdict and closes it. Never blocks
  /// longer than `timeout`.
  void serve(std::chrono::milliseconds timeout, const ControlHandler& handler);

 private:
  ControlSocket(UniqueFd listener, std::string path) : listener_(std::move(listener)), path_(std::move(path)) {}
  void answer_and_close(const std::string& answer);

  UniqueFd listener_;
  std::string path_;
  UniqueFd client_;
  std::string request_;
  std::chrono::steady_clock::time_point client_deadline_{};
};

}  // namespace vmgate::launcher
