#pragma once
// The webhook's Prometheus metrics (text exposition format 0.0.4), named to sit beside
// kube-apiserver's apiserver_admission_webhook_* and controller-runtime's
// controller_runtime_webhook_* (docs/webhook.md, "Metrics"). Labels are bounded: no
// namespace, name or uid. Clock-free: callers pass durations and timestamps.
// Thread-safety: every member function may be called from any thread concurrently.
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "vmgate/server/admission_review.hpp"

namespace vmgate::serve {

/// Why the transport refused a request or connection before admission ran; the `reason` label of
/// vmgate_http_rejected_total.
enum class Rejection {
  not_found,         // 404: unknown path
  method,            // 405
  content_type,      // 415
  body_too_large,    // 413
  header_too_large,  // 431
  bad_request,       // 400 from the transport (bad timeout, malformed HTTP)
  timeout,           // header, body or ?timeout= deadline passed
  connection_limit,  // --max-connections reached
  plain_http,        // HTTP sent to the TLS port
  body_memory,       // 503: --max-body-memory reached
};

class Metrics {
 public:
  /// The latency histogram's upper bounds, in seconds.
  static constexpr std::array<double, 14> latency_buckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                          0.025,  0.05,    0.1,    0.25,  0.5,    1.0,   2.5};

  /// One reviewed request: vmgate_webhook_requests_total{webhook, operation, decision, code, dry_run}
  /// and vmgate_webhook_request_duration_seconds{webhook}. decision is "allowed", "denied" (an
  /// AdmissionReview with allowed: false) or "error" (the body was refused: HTTP 400/500).
  void record_review(webhook::Endpoint endpoint, const webhook::ReviewSummary& summary,
                     std::chrono::nanoseconds latency);
  void record_rejection(Rejection reason);
  void record_tls_handshake_error();
  void request_started(webhook::Endpoint endpoint);
  void request_finished(webhook::Endpoint endpoint);
  void connection_opened();
  void connection_closed();

  /// The serving certificate: its notAfter (Unix seconds) and a reload's result.
  void set_certificate_expiry(std::int64_t not_after_unix_seconds);
  void record_certificate_reload(bool succeeded);
  /// The object store: its size and when it was last (re)loaded (Unix seconds), and a reload's result.
  void set_objects(std::size_t objects, std::int64_t loaded_at_unix_seconds);
  void record_objects_reload(bool succeeded);

  /// The whole exposition; `ready` is vmgate_ready (1 or 0).
  [[nodiscard]] std::string render(bool ready) const;

 private:
  static constexpr std::size_t endpoint_count = 4;
  static constexpr std::size_t rejection_count = 10;

  struct Histogram {
    std::array<std::atomic<std::uint64_t>, latency_buckets.size()> buckets{};  // not cumulative
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> sum_nanoseconds{0};
  };

  // webhook, operation (index into the known operations), decision, code, dry_run: no
  // allocation per request.
  using RequestKey = std::tuple<std::size_t, std::size_t, std::size_t, int, bool>;

  mutable std::mutex requests_mutex_;
  std::map<RequestKey, std::uint64_t> requests_;
  std::array<Histogram, endpoint_count> latency_{};
  std::array<std::atomic<std::int64_t>, endpoint_count> in_flight_{};
  std::array<std::atomic<std::uint64_t>, rejection_count> rejections_{};
  std::atomic<std::uint64_t> tls_handshake_errors_{0};
  std::atomic<std::int64_t> open_connections_{0};
  std::atomic<std::uint64_t> connections_total_{0};
  std::atomic<std::int64_t> certificate_expiry_{0};
  std::array<std::atomic<std::uint64_t>, 2> certificate_reloads_{};  // failed, succeeded
  std::atomic<std::int64_t> objects_{0};
  std::atomic<std::int64_t> objects_loaded_at_{0};
  std::array<std::atomic<std::uint64_t>, 2> objects_reloads_{};  // failed, succeeded
};

}  // namespace vmgate::serve
