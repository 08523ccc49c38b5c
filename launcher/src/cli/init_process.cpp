#include "vmgate/launcher/init_process.hpp"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

namespace vmgate::launcher {
namespace {

// The exit status a shell reports for `status` from waitpid.
int exit_status(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace

std::optional<int> become_init_if_pid_one() {
  if (::getpid() != 1) {
    return std::nullopt;
  }
  // Blocked before the fork, so that no signal is lost between the fork and sigwait; the
  // child gets its own mask back.
  sigset_t handled;
  sigemptyset(&handled);
  for (const int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) {
    sigaddset(&handled, signal);
  }
  sigset_t previous;
  sigprocmask(SIG_BLOCK, &handled, &previous);
  const pid_t launcher = ::fork();
  if (launcher < 0) {
    std::cerr << "vmgate-launcher: fork of the launcher under its init failed: " << std::strerror(errno)
              << "; running as PID 1 without reaping\n";
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return std::nullopt;
  }
  if (launcher == 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return std::nullopt;
  }
  for (;;) {
    int signal = 0;
    if (sigwait(&handled, &signal) != 0) {
      continue;
    }
    if (signal != SIGCHLD) {
      ::kill(launcher, signal);
      continue;
    }
    int status = 0;
    for (pid_t reaped = ::waitpid(-1, &status, WNOHANG); reaped > 0; reaped = ::waitpid(-1, &status, WNOHANG)) {
      if (reaped == launcher) {
        // Whatever else is left in the container dies with PID 1, as the kernel ends a PID
        // namespace whose init exits.
        return exit_status(status);
      }
    }
  }
}

}  // namespace vmgate::launcher
