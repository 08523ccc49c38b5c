// The control socket (control_socket.hpp). KubeVirt's virt-handler reaches virt-launcher over a
// gRPC unix socket in the pod (pkg/virt-handler/cmd-client, cmd-server Pause/Unpause); vmgate's
// node agent sends one line on a unix socket the launcher listens on.
#include "vmgate/launcher/control_socket.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace vmgate::launcher {
namespace {

std::string system_error(const std::string& path, std::string_view what) {
  return path + ": " + std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

Result<ControlCommand> parse_control_command(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line == "pause") {
    return ControlCommand::pause;
  }
  if (line == "unpause") {
    return ControlCommand::unpause;
  }
  return Error{"unknown command (pause or unpause)"};
}

std::string control_answer(std::string_view error) {
  if (error.empty()) {
    return "ok\n";
  }
  std::string line = "error " + std::string(error);
  for (char& c : line) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return line + "\n";
}

Result<ControlSocket> ControlSocket::listen(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    return Error{path + ": longer than a unix socket path may be (" + std::to_string(sizeof address.sun_path - 1) +
                 " bytes)"};
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  // A socket left by a launcher that died is ours to replace; anything else is not.
  if (struct stat info{}; ::lstat(path.c_str(), &info) == 0) {
    if (!S_ISSOCK(info.st_mode)) {
      return Error{path + ": exists and is not a socket"};
    }
    ::unlink(path.c_str());
  }
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) {
    return Error{system_error(path, "cannot create a socket")};
  }
  // Bound under a umask that leaves the socket to its owner: no moment at which another user could connect.
  const mode_t previous = ::umask(0177);
  const int bound = ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address),  // NOLINT: C API
                           sizeof address);
  ::umask(previous);
  if (bound != 0) {
    return Error{system_error(path, "cannot bind")};
  }
  if (::chmod(path.c_str(), 0600) != 0 || ::listen(listener.get(), 4) != 0) {
    const std::string error = system_error(path, "cannot listen");
    ::unlink(path.c_str());
    return Error{error};
  }
  return ControlSocket(std::move(listener), path);
}

ControlSocket::~ControlSocket() {
  if (listener_) {
    ::unlink(path_.c_str());
  }
}

void ControlSocket::answer_and_close(const std::string& answer) {
  // A few bytes into an empty socket buffer: a client that does not read loses its answer, it
  // never blocks us.
  (void)::send(client_.get(), answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  client_.reset();
  request_.clear();
}

void ControlSocket::serve(std::chrono::milliseconds timeout, const ControlHandler& handler) {
  const auto now = std::chrono::steady_clock::now();
  if (client_ && now >= client_deadline_) {
    answer_and_close(
        control_answer("timeout: no request line within " + std::to_string(control_client_timeout.count()) + " s"));
  }
  pollfd watched{};
  watched.fd = client_ ? client_.get() : listener_.get();
  watched.events = POLLIN;
  if (client_) {
    timeout = std::min(timeout, std::chrono::duration_cast<std::chrono::milliseconds>(client_deadline_ - now) +
                                    std::chrono::milliseconds(1));
  }
  const int ready = ::poll(&watched, 1, static_cast<int>(std::max<std::int64_t>(timeout.count(), 0)));
  if (ready <= 0) {
    return;
  }
  if (!client_) {
    client_.reset(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client_) {
      return;
    }
    client_deadline_ = std::chrono::steady_clock::now() + control_client_timeout;
  }
  std::array<char, max_control_request_bytes + 1> buffer{};
  const ssize_t got = ::recv(client_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return;
  }
  if (got <= 0) {
    client_.reset();  // gone before its line
    request_.clear();
    return;
  }
  request_.append(buffer.data(), static_cast<std::size_t>(got));
  const std::size_t newline = request_.find('\n');
  if (newline == std::string::npos) {
    if (request_.size() >= max_control_request_bytes) {
      answer_and_close(control_answer("request longer than " + std::to_string(max_control_request_bytes) + " bytes"));
    }
    return;
  }
  if (newline + 1 > max_control_request_bytes) {
    answer_and_close(control_answer("request longer than " + std::to_string(max_control_request_bytes) + " bytes"));
    return;
  }
  Result<ControlCommand> command = parse_control_command(std::string_view(request_).substr(0, newline));
  answer_and_close(control_answer(command ? handler(*command) : command.error().message));
}

}  // namespace vmgate::launcher
