#pragma once
// The log of vmgate's long-running commands (serve, certs, controller): JSON lines in the
// Kubernetes JSON log shape (`ts` as Unix seconds with a fraction, `level`, `msg`, then the
// event's keys; docs/webhook.md, "Log lines"), and the sink that writes them. Here rather than
// in one command's folder because every command logs alike.
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vmgate/common/json_text.hpp"

namespace vmgate::kube {

/// One line, built key by key after `ts`, `level` and `msg`; finish() closes it with a line
/// break. The members are written in the order they are added. Pure; one thread per LogLine.
class LogLine {
 public:
  LogLine(std::chrono::system_clock::time_point now, std::string_view level, std::string_view message);
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  // Named by type rather than overloaded: a string literal would otherwise choose the bool.
  LogLine& text(std::string_view key, std::string_view value);
  LogLine& flag(std::string_view key, bool value);
  LogLine& integer(std::string_view key, std::int64_t value);
  /// The duration in milliseconds, exactly, to the nanosecond: 41 µs is 0.041.
  LogLine& milliseconds(std::string_view key, std::chrono::nanoseconds value);
  std::string finish();

 private:
  static constexpr std::size_t typical_line_bytes = 512;

  // Written directly rather than through a RapidJSON Writer: the access log writes a line per
  // admission, and the Writer's per-token bookkeeping and double formatting cost five times this.
  std::string line_;
  json::ObjectText members_{line_};  // after line_, which it writes into
};

/// {"ts":..,"level":<level>,"msg":<message>,<key>:<value>...} and a line break; values are strings.
/// Pure; thread-safe.
std::string event_line(std::chrono::system_clock::time_point now, std::string_view level, std::string_view message,
                       std::span<const std::pair<std::string_view, std::string_view>> fields);
inline std::string event_line(std::chrono::system_clock::time_point now, std::string_view level,
                              std::string_view message,
                              std::initializer_list<std::pair<std::string_view, std::string_view>> fields = {}) {
  return event_line(now, level, message, std::span(fields.begin(), fields.size()));
}

/// Where the lines go: a file descriptor (stderr), written in batches so that logging costs
/// no system call per request. Lines are written whole, in order, at the latest when flush()
/// is called (the server does every 200 ms and at exit) or 64 KiB are pending.
/// Thread-safety: every member function may be called from any thread.
class LogSink {
 public:
  explicit LogSink(int fd) : fd_(fd) {}
  LogSink(const LogSink&) = delete;
  LogSink& operator=(const LogSink&) = delete;
  ~LogSink() { flush(); }

  void write(std::string_view line);
  /// For start-up and errors: written at once.
  void write_now(std::string_view line);
  void flush();

 private:
  void flush_locked();

  int fd_;
  std::mutex mutex_;
  std::string pending_;
};

/// The event log of a command that is not the HTTPS server (certs, the controller): one line per
/// call on `sink`, written at once, with string fields the caller owns.
/// Thread-safety: as LogSink's.
class EventLog {
 public:
  using Fields = std::vector<std::pair<std::string, std::string>>;

  explicit EventLog(LogSink& sink) : sink_(sink) {}
  void operator()(std::string_view level, std::string_view message, const Fields& fields = {});

 private:
  LogSink& sink_;
};

}  // namespace vmgate::kube
