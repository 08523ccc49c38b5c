#include "vmgate/kube/stop_signal.hpp"

#include <pthread.h>

namespace vmgate::kube {

StopSignal::StopSignal(std::function<void()> on_stop) : on_stop_(std::move(on_stop)) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGUSR2);  // the destructor's wake-up
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  thread_ = std::thread([this] {
    int signal = 0;
    while (sigwait(&set_, &signal) == 0 && signal == SIGUSR2) {
      if (finished_.load()) {
        return;
      }
    }
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    if (!finished_.load()) {
      on_stop_();
    }
    wake_.notify_all();
  });
}

StopSignal::~StopSignal() {
  finished_ = true;
  {
    std::lock_guard lock(mutex_);
    if (!stopped_) {
      pthread_kill(thread_.native_handle(), SIGUSR2);  // ends the sigwait
    }
  }
  thread_.join();
  pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
}

bool StopSignal::wait(std::chrono::milliseconds interval) {
  std::unique_lock lock(mutex_);
  return wake_.wait_for(lock, interval, [this] { return stopped_; });
}

bool StopSignal::stopped() {
  std::lock_guard lock(mutex_);
  return stopped_;
}

}  // namespace vmgate::kube
