// become_init_if_pid_one, as PID 1 of a PID namespace of the test's own (needs root, as the
// launcher's container gives it; skipped otherwise).
#include "vmgate/launcher/init_process.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

namespace vmgate::launcher {
namespace {

// Runs `launcher` as the launcher under a PID 1 in a new PID namespace; returns that PID 1's
// exit status as the test process sees it (-1: the namespace could not be made).
template <typename Launcher>
int run_under_init(Launcher launcher) {
  const pid_t outer = ::fork();
  if (outer == 0) {
    if (::unshare(CLONE_NEWPID) != 0) {
      ::_exit(99);
    }
    const pid_t init = ::fork();  // PID 1 of the new namespace
    if (init == 0) {
      if (const std::optional<int> status = become_init_if_pid_one(); status) {
        ::_exit(*status);
      }
      ::_exit(launcher());
    }
    int status = 0;
    ::waitpid(init, &status, 0);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 98);
  }
  int status = 0;
  ::waitpid(outer, &status, 0);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 98;
  return code == 99 ? -1 : code;
}

bool may_make_pid_namespaces() {
  return ::geteuid() == 0;
}

TEST(InitProcess, OutsidePidOneNothingHappens) {
  EXPECT_EQ(become_init_if_pid_one(), std::nullopt);
}

TEST(InitProcess, PidOneReturnsTheLaunchersExitStatus) {
  if (!may_make_pid_namespaces()) {
    GTEST_SKIP() << "a PID namespace needs root";
  }
  // The launcher is not PID 1 (PID 1 stays the init), and its exit status is PID 1's.
  EXPECT_EQ(run_under_init([] { return ::getpid() == 1 ? 1 : 7; }), 7);
}

TEST(InitProcess, PidOneReapsOrphans) {
  if (!may_make_pid_namespaces()) {
    GTEST_SKIP() << "a PID namespace needs root";
  }
  // A daemonizing child (as QEMU): its parent exits at once, the orphan exits a moment later.
  // Reaped by PID 1, the orphan's pid is gone (ESRCH); a zombie would still answer kill(0).
  const int status = run_under_init([] {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) {
      return 2;
    }
    const pid_t parent = ::fork();
    if (parent == 0) {
      const pid_t orphan = ::fork();
      if (orphan == 0) {
        ::usleep(100'000);
        ::_exit(0);
      }
      (void)::write(pipe_fds[1], &orphan, sizeof orphan);
      ::_exit(0);
    }
    pid_t orphan = 0;
    if (::read(pipe_fds[0], &orphan, sizeof orphan) != static_cast<ssize_t>(sizeof orphan)) {
      return 3;
    }
    ::waitpid(parent, nullptr, 0);
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (::kill(orphan, 0) != 0 && errno == ESRCH) {
        return 0;
      }
      ::usleep(10'000);
    }
    return 4;  // still there after 2 s: a zombie nobody reaps
  });
  EXPECT_EQ(status, 0);
}

TEST(InitProcess, PidOnePassesSigtermToTheLauncher) {
  if (!may_make_pid_namespaces()) {
    GTEST_SKIP() << "a PID namespace needs root";
  }
  const int status = run_under_init([] {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, nullptr);
    ::kill(1, SIGTERM);  // to PID 1, which passes it on
    const timespec timeout{5, 0};
    return sigtimedwait(&term, nullptr, &timeout) == SIGTERM ? 15 : 5;
  });
  EXPECT_EQ(status, 15);
}

}  // namespace
}  // namespace vmgate::launcher
