// The guest-console-log container's loop. KubeVirt's virt-tail (cmd/virt-tail) follows the log
// with a tail library (reopen on rotation) and ends on SIGTERM; vmgate's also ends by itself
// once the launcher's status file is final, so the container ends with the guest whatever the
// container's place in the pod.
#include "vmgate/launcher/console_tail.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "vmgate/launcher/status_file.hpp"
#include "vmgate/launcher/unique_fd.hpp"

namespace vmgate::launcher {
namespace {

constexpr std::size_t tail_buffer_bytes = std::size_t{64} * 1024;

class LogFollower {
 public:
  LogFollower(const std::string& path, std::ostream& out, std::ostream& err) : path_(path), out_(out), err_(err) {}

  // Everything appended since the last call, the old file read to its end when a new one took
  // its name. False after an error (already reported on err).
  bool drain() {
    for (;;) {
      if (!log_ && !open()) {
        return !failed_;
      }
      if (!read_to_end()) {
        return false;
      }
      if (!replaced()) {
        return true;
      }
      log_.reset();  // the new file is opened and read from its start at once
    }
  }

 private:
  bool open() {
    UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) {
      if (errno != ENOENT) {
        report("cannot open");
      }
      return false;
    }
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0) {
      report("cannot read its status");
      return false;
    }
    if (!S_ISREG(status.st_mode)) {
      failed_ = true;
      err_ << "vmgate-launcher: " << path_ << ": not a regular file\n";
      return false;
    }
    log_ = std::move(fd);
    device_ = status.st_dev;
    inode_ = status.st_ino;
    offset_ = 0;
    return true;
  }

  bool read_to_end() {
    struct stat status {};
    if (::fstat(log_.get(), &status) == 0 && status.st_size < offset_) {
      offset_ = 0;  // truncated: what is there now is new
    }
    for (;;) {
      const ssize_t count = ::pread(log_.get(), buffer_.data(), buffer_.size(), offset_);
      if (count < 0 && errno == EINTR) {
        continue;
      }
      if (count < 0) {
        report("cannot read");
        return false;
      }
      if (count == 0) {
        break;
      }
      offset_ += count;
      out_.write(buffer_.data(), count);
    }
    out_.flush();
    if (!out_) {
      failed_ = true;
      err_ << "vmgate-launcher: cannot write the console log to the standard output\n";
      return false;
    }
    return true;
  }

  // The name now names another file, or none: the one open is finished.
  [[nodiscard]] bool replaced() const {
    struct stat status {};
    return ::stat(path_.c_str(), &status) != 0 || status.st_dev != device_ || status.st_ino != inode_;
  }

  void report(std::string_view what) {
    failed_ = true;
    err_ << "vmgate-launcher: " << path_ << ": " << what << ": " << std::strerror(errno) << '\n';
  }

  const std::string& path_;
  std::ostream& out_;
  std::ostream& err_;
  UniqueFd log_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  off_t offset_ = 0;
  bool failed_ = false;
  std::array<char, tail_buffer_bytes> buffer_{};
};

bool status_is_final(const std::string& status_file) {
  if (status_file.empty()) {
    return false;
  }
  Result<LauncherStatus> status = read_status_file(status_file);  // absent or half-made: not final yet
  return status && is_final_phase(status->phase);
}

}  // namespace

int tail_console(const ConsoleTailConfig& config, std::ostream& out, std::ostream& err, const StopWait& wait_for_stop) {
  LogFollower follower(config.log_file, out, err);
  bool stop_requested = false;
  for (;;) {
    // Looked at before the drain: what the guest wrote before the status became final is all
    // in the log by then (the launcher writes the final status after QEMU has stopped).
    const bool last_round = stop_requested || status_is_final(config.status_file);
    if (!follower.drain()) {
      return 1;
    }
    if (last_round) {
      return 0;
    }
    stop_requested = wait_for_stop(config.poll_interval);
  }
}

}  // namespace vmgate::launcher
