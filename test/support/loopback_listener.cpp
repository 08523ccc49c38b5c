#include "loopback_listener.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vmgate::testing {

namespace {

// A socket bound to 127.0.0.1:0, and the port the kernel gave it.
int bind_loopback(std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||  // NOLINT: C API
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {   // NOLINT: C API
    const std::string reason = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("bind 127.0.0.1: " + reason);
  }
  port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

LoopbackListener::LoopbackListener() {
  // The tests' servers write with OpenSSL (write(2)): one answering a client that has already
  // gone must get EPIPE, not a SIGPIPE that kills the test (seen under load: ctest reported
  // ObjectInformer.ARefusedListIsLoggedOnceAndRetried as "SIGPIPE").
  std::signal(SIGPIPE, SIG_IGN);
  fd_ = bind_loopback(port_);
  if (::listen(fd_, 8) != 0) {
    const std::string reason = std::strerror(errno);
    ::close(fd_);
    throw std::runtime_error("listen: " + reason);
  }
}

LoopbackListener::~LoopbackListener() {
  ::close(fd_);
}

void LoopbackListener::shutdown() {
  ::shutdown(fd_, SHUT_RDWR);
}

std::uint16_t unused_loopback_port() {
  std::uint16_t port = 0;
  ::close(bind_loopback(port));
  return port;
}

}  // namespace vmgate::testing
