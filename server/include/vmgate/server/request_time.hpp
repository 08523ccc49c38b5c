#pragma once
// The time a transport gives admission::Request::now, in metav1.Time's JSON form.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace vmgate::webhook {

/// RFC 3339 in UTC with whole seconds ("2026-11-22T23:10:51Z"), as metav1.Time marshals.
std::string metav1_time(std::chrono::system_clock::time_point time);

/// SOURCE_DATE_EPOCH (reproducible-builds.org): a decimal count of seconds since the epoch;
/// nullopt for anything else, so that a mistyped value never passes for a time.
std::optional<std::chrono::system_clock::time_point> source_date_epoch(std::string_view value);

}  // namespace vmgate::webhook
