#include "vmgate/server/request_time.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>

namespace vmgate::webhook {

std::string metav1_time(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  const int length = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", utc.tm_year + 1900,
                                   utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  return length > 0 ? std::string(text, static_cast<std::size_t>(length)) : std::string();
}

std::optional<std::chrono::system_clock::time_point> source_date_epoch(std::string_view value) {
  long long seconds = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || seconds < 0) {
    return std::nullopt;
  }
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

}  // namespace vmgate::webhook
