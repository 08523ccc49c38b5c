#pragma once
// A TCP listener on 127.0.0.1 on a port the kernel picks, for the tests' own small servers
// (scripted API servers, TLS endpoints). Closed with the object.
#include <cstdint>

namespace vmgate::testing {

class LoopbackListener {
 public:
  /// Binds and listens; throws std::runtime_error when it cannot. Ignores SIGPIPE in the test
  /// process: a server's write to a client that has gone fails instead of killing the test.
  LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;
  ~LoopbackListener();

  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// Wakes a thread blocked in accept() on it (accept then fails): the way a test's server
  /// thread is told to end before it is joined.
  void shutdown();

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

/// A port on 127.0.0.1 that was free a moment ago: nothing listens on it.
std::uint16_t unused_loopback_port();

}  // namespace vmgate::testing
