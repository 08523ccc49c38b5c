#include "launcher/launcher_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>
#include <thread>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX

namespace vmgate::testing {

LauncherProcess::LauncherProcess(const std::string& launcher_binary, const std::vector<std::string>& args,
                                 const std::filesystem::path& stderr_file) {
  std::vector<std::string> argv{launcher_binary};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  for (std::string& arg : argv) {
    pointers.push_back(arg.data());
  }
  pointers.push_back(nullptr);
  // Under ASan, the launcher runs without LeakSanitizer: at exit LSan's tracer crashes (SIGSEGV
  // scanning dynamic TLS) in a process where libvirt dlopen'ed its storage-file backend, as it
  // does for a qcow2 disk (clang 14). Memory errors are still caught; the launcher's leaks are
  // checked in-process by the supervisor and define tests.
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    if (!std::string_view(*variable).starts_with("ASAN_OPTIONS=")) {
      environment.emplace_back(*variable);
    }
  }
  const char* asan_options = std::getenv("ASAN_OPTIONS");
  environment.push_back("ASAN_OPTIONS=" + std::string(asan_options != nullptr ? asan_options : "") + ":detect_leaks=0");
  std::vector<char*> environment_pointers;
  for (std::string& variable : environment) {
    environment_pointers.push_back(variable.data());
  }
  environment_pointers.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, pointers.data(), environment_pointers.data()) != 0) {
    pid_ = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
}

LauncherProcess::~LauncherProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool LauncherProcess::running() {
  if (pid_ > 0 && !status_) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
    }
  }
  return pid_ > 0 && !status_;
}

void LauncherProcess::signal(int number) {
  if (running()) {
    ::kill(pid_, number);
  }
}

void LauncherProcess::kill_hard() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

std::optional<int> LauncherProcess::wait(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!status_) {
    return std::nullopt;
  }
  pid_ = -1;
  return WIFEXITED(*status_) ? std::optional<int>(WEXITSTATUS(*status_)) : std::nullopt;
}

}  // namespace vmgate::testing
