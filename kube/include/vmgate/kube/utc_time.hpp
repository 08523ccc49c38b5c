#pragma once
// Times as Kubernetes writes timestamps (RFC 3339, UTC, whole seconds: "2026-11-27T18:46:37Z"):
// conditions' lastTransitionTime, the launcher's status file, a VM's start-failure retry time.
// Header only, so that the launcher's status library and the node agent take it without linking
// the API client. utc_now() reads the clock (not for the pure layers); the conversions are pure.
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace vmgate::kube {

inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

/// Seconds since the epoch of an RFC 3339 time in UTC ("2026-11-27T18:46:37Z", fractions of a
/// second ignored, "+00:00" accepted as "Z"), or nothing for any other text: an offset other
/// than UTC, a field out of range, a date that does not exist.
inline std::optional<std::int64_t> parse_utc_seconds(std::string_view text) {
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  const auto number = [text](std::size_t at, std::size_t length) -> std::optional<int> {
    int value = 0;
    for (std::size_t i = at; i < at + length; ++i) {
      if (text[i] < '0' || text[i] > '9') {
        return std::nullopt;
      }
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  const auto year = number(0, 4);
  const auto month = number(5, 2);
  const auto day = number(8, 2);
  const auto hour = number(11, 2);
  const auto minute = number(14, 2);
  const auto second = number(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  std::string_view zone = text.substr(19);
  if (!zone.empty() && zone.front() == '.') {
    const std::size_t digits = zone.find_first_not_of("0123456789", 1);
    if (digits == 1 || digits == std::string_view::npos) {
      return std::nullopt;
    }
    zone.remove_prefix(digits);
  }
  if (zone != "Z" && zone != "z" && zone != "+00:00" && zone != "-00:00") {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(*year), std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) {
    return std::nullopt;
  }
  const std::int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  return days * 86400 + *hour * 3600 + *minute * 60 + *second;
}

/// The RFC 3339 text of seconds since the epoch, as utc_now() writes it.
inline std::string format_utc_seconds(std::int64_t seconds) {
  const std::int64_t days = seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
  const std::int64_t in_day = seconds - days * 86400;
  const std::chrono::year_month_day date{std::chrono::sys_days(std::chrono::days(days))};
  std::array<char, 40> text{};
  std::snprintf(text.data(), text.size(), "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), static_cast<int>(in_day / 3600),
                static_cast<int>(in_day / 60 % 60), static_cast<int>(in_day % 60));
  return text.data();
}

}  // namespace vmgate::kube
