#pragma once
// Go's time.ParseDuration, which is how kube-apiserver writes `?timeout=` (client-go
// rest.Request.Timeout: "10s") and how vmgate's duration options read. Pure; thread-safe.
#include <chrono>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::kube {

/// "300ms", "1.5s", "2m30s", "1h", "0": a sequence of decimal numbers, each with an optional
/// fraction and a unit (ns, us, µs, ms, s, m, h). Negative durations are refused (a timeout
/// cannot be), as are durations above 290 years (Go's overflow limit) and empty strings.
Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

/// The value of a duration option `--NAME`, for the commands' messages: "--NAME: <why> (e.g.
/// 10s, 500ms, 2m)", and "--NAME must be longer than 0" for a zero unless `zero_allowed`.
Result<std::chrono::nanoseconds> parse_duration_option(std::string_view name, std::string_view text, bool zero_allowed);

}  // namespace vmgate::kube
