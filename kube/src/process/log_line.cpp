#include "vmgate/kube/log_line.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>

#include "vmgate/common/json_writer.hpp"

namespace vmgate::kube {

namespace {

// `value` / 10^6 as a decimal with the fraction's trailing zeros dropped and at least one digit
// after the point: the shortest text of that double, as RapidJSON's Writer::Double printed it.
void append_millionths(std::string& out, std::int64_t value) {
  if (value < 0) {
    out += '-';
  }
  const std::uint64_t magnitude =
      value < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  constexpr std::uint64_t million = 1'000'000;
  char digits[24];
  const auto whole = std::to_chars(digits, digits + sizeof(digits), magnitude / million);
  out.append(digits, whole.ptr);
  out += '.';
  std::uint64_t fraction = magnitude % million;
  int places = 6;
  while (places > 1 && fraction % 10 == 0) {
    fraction /= 10;
    --places;
  }
  char fraction_digits[6];
  for (int i = places - 1; i >= 0; --i) {
    fraction_digits[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  out.append(fraction_digits, static_cast<std::size_t>(places));
}

}  // namespace

LogLine::LogLine(std::chrono::system_clock::time_point now, std::string_view level, std::string_view message) {
  // Room for a typical line (an admission's is ~300 bytes) at once, rather than the string
  // doubling from empty a handful of times.
  line_.reserve(typical_line_bytes);
  append_millionths(members_.key("ts"),
                    std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count());
  members_.text("level", level);
  members_.text("msg", message);
}

LogLine& LogLine::text(std::string_view name, std::string_view value) {
  members_.text(name, value);
  return *this;
}

LogLine& LogLine::flag(std::string_view name, bool value) {
  members_.boolean(name, value);
  return *this;
}

LogLine& LogLine::integer(std::string_view name, std::int64_t value) {
  members_.integer(name, value);
  return *this;
}

LogLine& LogLine::milliseconds(std::string_view name, std::chrono::nanoseconds value) {
  append_millionths(members_.key(name), value.count());
  return *this;
}

std::string LogLine::finish() {
  members_.close();
  line_ += '\n';
  return std::move(line_);
}

std::string event_line(std::chrono::system_clock::time_point now, std::string_view level, std::string_view message,
                       std::span<const std::pair<std::string_view, std::string_view>> fields) {
  LogLine line(now, level, message);
  for (const auto& [name, value] : fields) {
    line.text(name, value);
  }
  return line.finish();
}

void LogSink::write(std::string_view line) {
  const std::lock_guard lock(mutex_);
  pending_ += line;
  if (pending_.size() >= std::size_t{64} << 10U) {
    flush_locked();
  }
}

void LogSink::write_now(std::string_view line) {
  const std::lock_guard lock(mutex_);
  pending_ += line;
  flush_locked();
}

void LogSink::flush() {
  const std::lock_guard lock(mutex_);
  flush_locked();
}

void LogSink::flush_locked() {
  std::size_t written = 0;
  while (written < pending_.size()) {
    const ssize_t result = ::write(fd_, pending_.data() + written, pending_.size() - written);
    if (result < 0 && errno == EINTR) {
      continue;
    }
    if (result <= 0) {
      break;  // stderr closed or full: logging must never stop admission
    }
    written += static_cast<std::size_t>(result);
  }
  pending_.clear();
}

void EventLog::operator()(std::string_view level, std::string_view message, const Fields& fields) {
  const std::vector<std::pair<std::string_view, std::string_view>> views(fields.begin(), fields.end());
  sink_.write_now(event_line(std::chrono::system_clock::now(), level, message, views));
}

}  // namespace vmgate::kube
