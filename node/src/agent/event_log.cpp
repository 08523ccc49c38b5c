#include "vmgate/node/event_log.hpp"

#include <chrono>
#include <span>
#include <string>

#include "vmgate/kube/log_line.hpp"

namespace vmgate::node {

void EventLog::write(std::string_view level, std::string_view message, Fields fields) {
  // The same line as vmgate serve's events (kube::event_line), written whole under the lock.
  const std::string line =
      kube::event_line(std::chrono::system_clock::now(), level, message, std::span(fields.begin(), fields.size()));
  const std::lock_guard lock(mutex_);
  out_ << line << std::flush;
}

}  // namespace vmgate::node
