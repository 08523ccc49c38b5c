#pragma once
// vmgate serve's log: JSON lines in the Kubernetes JSON log shape (`ts` as Unix seconds with a
// fraction, `level`, `msg`, then the event's keys; docs/webhook.md, "Log lines"). One line per
// admission with identifiers and the decision, never the object (it may carry secrets).
#include <chrono>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "vmgate/server/admission_review.hpp"

namespace vmgate::serve {

/// {"ts":..,"level":"info","msg":"admission","uid":..,"webhook":..,"operation":..,"kind":..,
///  "namespace":..,"name":..,"dry_run":..,"decision":"allowed|denied|error","code":..,
///  "latency_ms":..[,"error":..]} and a line break. Pure; thread-safe.
std::string admission_line(std::chrono::system_clock::time_point now, webhook::Endpoint endpoint,
                           const webhook::ReviewSummary& summary, std::chrono::nanoseconds latency);

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

}  // namespace vmgate::serve
