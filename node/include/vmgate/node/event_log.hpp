#pragma once
// vmgate-node's log: one JSON object a line ({"ts","level","msg", fields...}), as vmgate serve's.
// Thread-safe (the gRPC handlers log too).
#include <initializer_list>
#include <mutex>
#include <ostream>
#include <string_view>
#include <utility>

namespace vmgate::node {

class EventLog {
 public:
  using Fields = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  /// `out` must outlive the log.
  explicit EventLog(std::ostream& out) : out_(out) {}

  void write(std::string_view level, std::string_view message, Fields fields = {});

 private:
  std::mutex mutex_;
  std::ostream& out_;
};

}  // namespace vmgate::node
