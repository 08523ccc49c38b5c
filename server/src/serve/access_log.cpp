#include "vmgate/server/access_log.hpp"

#include <unistd.h>

#include <cerrno>

#include "vmgate/common/json.hpp"

namespace vmgate::serve {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void string_member(Writer& writer, std::string_view key, std::string_view value) {
  writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void open_line(Writer& writer, std::chrono::system_clock::time_point now, std::string_view level,
               std::string_view message) {
  writer.StartObject();
  writer.Key("ts");
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  writer.Double(static_cast<double>(micros) / 1e6);
  string_member(writer, "level", level);
  string_member(writer, "msg", message);
}

std::string close_line(Writer& writer, rapidjson::StringBuffer& buffer) {
  writer.EndObject();
  std::string line(buffer.GetString(), buffer.GetSize());
  line += '\n';
  return line;
}

}  // namespace

std::string admission_line(std::chrono::system_clock::time_point now, webhook::Endpoint endpoint,
                           const webhook::ReviewSummary& summary, std::chrono::nanoseconds latency) {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  open_line(writer, now, "info", "admission");
  string_member(writer, "uid", summary.uid);
  string_member(writer, "webhook", webhook::path_of(endpoint).substr(1));
  string_member(writer, "operation", summary.operation);
  string_member(writer, "kind", summary.kind);
  string_member(writer, "namespace", summary.namespace_name);
  string_member(writer, "name", summary.name);
  writer.Key("dry_run");
  writer.Bool(summary.dry_run);
  const bool refused = !summary.error.empty();
  string_member(writer, "decision", refused ? "error" : summary.allowed ? "allowed" : "denied");
  writer.Key("code");
  writer.Int(summary.code);
  writer.Key("latency_ms");
  writer.Double(static_cast<double>(latency.count()) / 1e6);
  if (refused) {
    string_member(writer, "error", summary.error);
  }
  return close_line(writer, buffer);
}

std::string event_line(std::chrono::system_clock::time_point now, std::string_view level, std::string_view message,
                       std::span<const std::pair<std::string_view, std::string_view>> fields) {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  open_line(writer, now, level, message);
  for (const auto& [key, value] : fields) {
    string_member(writer, key, value);
  }
  return close_line(writer, buffer);
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

}  // namespace vmgate::serve
