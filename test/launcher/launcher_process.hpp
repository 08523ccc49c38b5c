#pragma once
// The real vmgate-launcher binary as a child process, for tests that need its signals and exit
// status (the boot tests, the command line on test:///default).
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vmgate::testing {

/// vmgate-launcher started with `args`, stderr to `stderr_file`; killed if still running when
/// destroyed. Under ASan it runs without LeakSanitizer (see the constructor).
class LauncherProcess {
 public:
  LauncherProcess(const std::string& launcher_binary, const std::vector<std::string>& args,
                  const std::filesystem::path& stderr_file);
  ~LauncherProcess();
  LauncherProcess(const LauncherProcess&) = delete;
  LauncherProcess& operator=(const LauncherProcess&) = delete;

  [[nodiscard]] bool started() const { return pid_ > 0; }
  /// Reaps the process when it has exited, keeping its status for wait().
  [[nodiscard]] bool running();
  void signal(int number);
  void kill_hard();
  /// The exit status, or nullopt when it is still running after `timeout` (or died of a signal).
  std::optional<int> wait(std::chrono::seconds timeout);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace vmgate::testing
