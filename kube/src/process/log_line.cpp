#include "vmgate/kube/log_line.hpp"

#include <unistd.h>

#include <cerrno>

namespace vmgate::kube {

LogLine::LogLine(std::chrono::system_clock::time_point now, std::string_view level, std::string_view message) {
  // Room for a typical line (an admission's is ~300 bytes) at once, rather than the sink doubling
  // the string from empty a handful of times.
  sink_.reserve(typical_line_bytes);
  writer_.StartObject();
  writer_.Key("ts");
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  writer_.Double(static_cast<double>(micros) / 1e6);
  text("level", level);
  text("msg", message);
}

void LogLine::key(std::string_view name) {
  writer_.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
}

LogLine& LogLine::text(std::string_view name, std::string_view value) {
  key(name);
  writer_.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  return *this;
}

LogLine& LogLine::flag(std::string_view name, bool value) {
  key(name);
  writer_.Bool(value);
  return *this;
}

LogLine& LogLine::integer(std::string_view name, std::int64_t value) {
  key(name);
  writer_.Int64(value);
  return *this;
}

LogLine& LogLine::number(std::string_view name, double value) {
  key(name);
  writer_.Double(value);
  return *this;
}

std::string LogLine::finish() {
  writer_.EndObject();
  sink_.finish();
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
