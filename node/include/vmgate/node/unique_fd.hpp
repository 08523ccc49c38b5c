#pragma once
// A file descriptor that closes itself (inotify, signalfd, eventfd). Move-only.
#include <unistd.h>

#include <utility>

namespace vmgate::node {

class UniqueFd {
 public:
  /// Takes ownership of `fd`; a negative value owns nothing (a failed open: check valid()).
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      UniqueFd old(std::exchange(fd_, std::exchange(other.fd_, -1)));
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  /// Gives the descriptor up to the caller (an Asio socket that closes it itself).
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace vmgate::node
