// Runs qemu-img and xorrisofs the way KubeVirt's launcher does (exec with a timeout), without
// a shell: the arguments are file paths from the VMI and the pod and are passed as they are.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "vmgate/launcher/volume_prepare.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawnp

namespace vmgate::launcher {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  ~FileDescriptor() { reset(); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

 private:
  int fd_;
};

class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  const std::size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

Status run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  if (argv.empty()) {
    return Error{"no program to run"};
  }
  std::array<int, 2> pipe_ends{};
  if (::pipe2(pipe_ends.data(), O_CLOEXEC) != 0) {
    return Error{"cannot run " + argv[0] + ": " + std::strerror(errno)};
  }
  FileDescriptor read_end(pipe_ends[0]);
  FileDescriptor write_end(pipe_ends[1]);
  SpawnActions actions;
  posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDERR_FILENO);
  std::vector<char*> arguments;
  arguments.reserve(argv.size() + 1);
  for (const std::string& argument : argv) {
    arguments.push_back(const_cast<char*>(argument.c_str()));  // NOLINT: posix_spawn's signature
  }
  arguments.push_back(nullptr);
  pid_t child = 0;
  if (const int error = posix_spawnp(&child, argv[0].c_str(), actions.get(), nullptr, arguments.data(), environ);
      error != 0) {
    return Error{"cannot run " + argv[0] + ": " + std::strerror(error)};
  }
  write_end.reset();

  std::string errors;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd readable{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    std::array<char, 4096> buffer{};
    const ssize_t got = ::read(read_end.get(), buffer.data(), buffer.size());
    if (got <= 0) {
      break;  // EOF: the tool closed stderr (it is exiting)
    }
    errors.append(buffer.data(), static_cast<std::size_t>(got));
    if (errors.size() > 65536) {
      errors.erase(0, errors.size() - 65536);
    }
  }
  // A tool that closed stderr still gets only what is left of the timeout to exit.
  int status = 0;
  for (;;) {
    if (timed_out) {
      ::kill(child, SIGKILL);
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) {
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (timed_out) {
    return Error{argv[0] + " did not finish within " + std::to_string(timeout.count()) + " ms and was killed"};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    return Ok{};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return Error{"cannot run " + argv[0] + ": not found"};
  }
  const std::string why = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                            : "signal " + std::to_string(WTERMSIG(status));
  const std::string detail = last_line(errors);
  return Error{argv[0] + " failed (" + why + ")" + (detail.empty() ? "" : ": " + detail)};
}

}  // namespace vmgate::launcher
