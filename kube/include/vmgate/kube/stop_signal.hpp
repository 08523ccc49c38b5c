#pragma once
// SIGTERM and SIGINT for the long-running commands that are not the HTTPS server (`vmgate
// certs`, `vmgate controller`): taken by a thread of their own while the object lives (the two
// signals are blocked in the constructing thread and every thread it starts afterwards), which
// calls `on_stop` once and wakes whoever waits. The destructor restores the signal mask.
// Thread-safety: stopped() and wait() may be called from any thread.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace vmgate::kube {

class StopSignal {
 public:
  explicit StopSignal(std::function<void()> on_stop);
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;
  ~StopSignal();

  /// Sleeps for `interval`; true when a signal came (before or during).
  bool wait(std::chrono::milliseconds interval);
  [[nodiscard]] bool stopped();

 private:
  sigset_t set_{};
  std::function<void()> on_stop_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace vmgate::kube
