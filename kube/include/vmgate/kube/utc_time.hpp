#pragma once
// The wall-clock time as Kubernetes writes timestamps (RFC 3339, UTC, whole seconds:
// "2026-11-27T18:46:37Z"): conditions' lastTransitionTime, the launcher's status file. Header
// only, so that the launcher's status library and the node agent take it without linking the
// API client. Reads the clock: not for the pure layers.
#include <array>
#include <ctime>
#include <string>

namespace vmgate::kube {

inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

}  // namespace vmgate::kube
