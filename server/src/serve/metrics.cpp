#include "vmgate/server/metrics.hpp"

#include <cstdio>
#include <string>

namespace vmgate::serve {

namespace {

constexpr std::array<std::string_view, 10> rejection_names{
    "not_found",   "method",  "content_type",     "body_too_large", "header_too_large",
    "bad_request", "timeout", "connection_limit", "plain_http",     "body_memory"};

constexpr std::array<webhook::Endpoint, 4> endpoints{webhook::Endpoint::vm_mutate, webhook::Endpoint::vm_validate,
                                                     webhook::Endpoint::vmi_mutate, webhook::Endpoint::vmi_validate};

std::size_t index_of(webhook::Endpoint endpoint) {
  return static_cast<std::size_t>(endpoint);
}

// The webhook label: the path without its slash ("virtualmachines-mutate").
std::string_view webhook_label(std::size_t index) {
  return webhook::path_of(endpoints.at(index)).substr(1);
}

// Bounded: whatever a refused body said is not a label value ("unknown").
constexpr std::array<std::string_view, 5> operation_labels{"CREATE", "UPDATE", "DELETE", "CONNECT", "unknown"};
constexpr std::array<std::string_view, 3> decision_labels{"allowed", "denied", "error"};

std::size_t operation_index(std::string_view operation) {
  for (std::size_t index = 0; index + 1 < operation_labels.size(); ++index) {
    if (operation == operation_labels.at(index)) {
      return index;
    }
  }
  return operation_labels.size() - 1;
}

std::string format_double(double value) {
  std::array<char, 32> buffer{};
  const int length = std::snprintf(buffer.data(), buffer.size(), "%.9g", value);
  return std::string(buffer.data(), static_cast<std::size_t>(length));
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, std::string_view name, std::string_view labels, const std::string& value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  out += value;
  out += '\n';
}

template <class Number>
void sample(std::string& out, std::string_view name, std::string_view labels, Number value) {
  sample(out, name, labels, std::to_string(value));
}

// A reload counter: result="failure" (index 0) and "success" (index 1).
void reloads(std::string& out, std::string_view name, std::string_view help,
             const std::array<std::atomic<std::uint64_t>, 2>& counts) {
  header(out, name, "counter", help);
  sample(out, name, "result=\"failure\"", counts.at(0).load(std::memory_order_relaxed));
  sample(out, name, "result=\"success\"", counts.at(1).load(std::memory_order_relaxed));
}

}  // namespace

void Metrics::record_review(webhook::Endpoint endpoint, const webhook::ReviewSummary& summary,
                            std::chrono::nanoseconds latency) {
  const std::size_t index = index_of(endpoint);
  const bool refused = !summary.error.empty();
  const std::size_t decision = refused ? 2 : summary.allowed ? 0 : 1;
  {
    const std::lock_guard lock(requests_mutex_);
    ++requests_[RequestKey{index, operation_index(summary.operation), decision, summary.code, summary.dry_run}];
  }
  Histogram& histogram = latency_.at(index);
  const double seconds = std::chrono::duration<double>(latency).count();
  for (std::size_t bucket = 0; bucket < latency_buckets.size(); ++bucket) {
    if (seconds <= latency_buckets.at(bucket)) {
      histogram.buckets.at(bucket).fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  histogram.count.fetch_add(1, std::memory_order_relaxed);
  histogram.sum_nanoseconds.fetch_add(static_cast<std::uint64_t>(latency.count() > 0 ? latency.count() : 0),
                                      std::memory_order_relaxed);
}

void Metrics::record_rejection(Rejection reason) {
  rejections_.at(static_cast<std::size_t>(reason)).fetch_add(1, std::memory_order_relaxed);
}

void Metrics::record_tls_handshake_error() {
  tls_handshake_errors_.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::request_started(webhook::Endpoint endpoint) {
  in_flight_.at(index_of(endpoint)).fetch_add(1, std::memory_order_relaxed);
}

void Metrics::request_finished(webhook::Endpoint endpoint) {
  in_flight_.at(index_of(endpoint)).fetch_sub(1, std::memory_order_relaxed);
}

void Metrics::connection_opened() {
  open_connections_.fetch_add(1, std::memory_order_relaxed);
  connections_total_.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::connection_closed() {
  open_connections_.fetch_sub(1, std::memory_order_relaxed);
}

void Metrics::set_certificate_expiry(std::int64_t not_after_unix_seconds) {
  certificate_expiry_.store(not_after_unix_seconds, std::memory_order_relaxed);
}

void Metrics::record_certificate_reload(bool succeeded) {
  certificate_reloads_.at(succeeded ? 1 : 0).fetch_add(1, std::memory_order_relaxed);
}

void Metrics::set_objects(std::size_t objects, std::int64_t loaded_at_unix_seconds) {
  objects_.store(static_cast<std::int64_t>(objects), std::memory_order_relaxed);
  objects_loaded_at_.store(loaded_at_unix_seconds, std::memory_order_relaxed);
}

void Metrics::record_objects_reload(bool succeeded) {
  objects_reloads_.at(succeeded ? 1 : 0).fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::render(bool ready) const {
  std::string out;
  out.reserve(8192);

  header(out, "vmgate_webhook_requests_total", "counter",
         "AdmissionReview requests by webhook, operation, decision (allowed, denied, error), code and dry_run.");
  {
    const std::lock_guard lock(requests_mutex_);
    for (const auto& [key, count] : requests_) {
      const auto& [index, operation, decision, code, dry_run] = key;
      std::string labels = "webhook=\"" + std::string(webhook_label(index)) + "\",operation=\"" +
                           std::string(operation_labels.at(operation)) + "\",decision=\"" +
                           std::string(decision_labels.at(decision)) + "\",code=\"" + std::to_string(code) +
                           "\",dry_run=\"" + (dry_run ? "true" : "false") + "\"";
      sample(out, "vmgate_webhook_requests_total", labels, count);
    }
  }

  header(out, "vmgate_webhook_request_duration_seconds", "histogram",
         "Time from the request's last byte to its answer, by webhook.");
  for (std::size_t index = 0; index < endpoint_count; ++index) {
    const Histogram& histogram = latency_.at(index);
    const std::string webhook = "webhook=\"" + std::string(webhook_label(index)) + "\"";
    std::uint64_t cumulative = 0;
    for (std::size_t bucket = 0; bucket < latency_buckets.size(); ++bucket) {
      cumulative += histogram.buckets.at(bucket).load(std::memory_order_relaxed);
      sample(out, "vmgate_webhook_request_duration_seconds_bucket",
             webhook + ",le=\"" + format_double(latency_buckets.at(bucket)) + "\"", cumulative);
    }
    const std::uint64_t count = histogram.count.load(std::memory_order_relaxed);
    sample(out, "vmgate_webhook_request_duration_seconds_bucket", webhook + ",le=\"+Inf\"", count);
    sample(out, "vmgate_webhook_request_duration_seconds_sum", webhook,
           format_double(static_cast<double>(histogram.sum_nanoseconds.load(std::memory_order_relaxed)) / 1e9));
    sample(out, "vmgate_webhook_request_duration_seconds_count", webhook, count);
  }

  header(out, "vmgate_webhook_requests_in_flight", "gauge", "Requests being admitted now, by webhook.");
  for (std::size_t index = 0; index < endpoint_count; ++index) {
    sample(out, "vmgate_webhook_requests_in_flight", "webhook=\"" + std::string(webhook_label(index)) + "\"",
           in_flight_.at(index).load(std::memory_order_relaxed));
  }

  header(out, "vmgate_http_rejected_total", "counter", "Requests and connections refused before admission, by reason.");
  for (std::size_t reason = 0; reason < rejection_count; ++reason) {
    sample(out, "vmgate_http_rejected_total", "reason=\"" + std::string(rejection_names.at(reason)) + "\"",
           rejections_.at(reason).load(std::memory_order_relaxed));
  }

  header(out, "vmgate_connections_open", "gauge", "Open HTTPS connections.");
  sample(out, "vmgate_connections_open", "", open_connections_.load(std::memory_order_relaxed));
  header(out, "vmgate_connections_total", "counter", "HTTPS connections accepted.");
  sample(out, "vmgate_connections_total", "", connections_total_.load(std::memory_order_relaxed));
  header(out, "vmgate_tls_handshake_errors_total", "counter", "TLS handshakes that failed or timed out.");
  sample(out, "vmgate_tls_handshake_errors_total", "", tls_handshake_errors_.load(std::memory_order_relaxed));

  header(out, "vmgate_tls_certificate_expiry_timestamp_seconds", "gauge",
         "notAfter of the serving certificate, in Unix seconds (0 before one is loaded).");
  sample(out, "vmgate_tls_certificate_expiry_timestamp_seconds", "cert=\"serving\"",
         certificate_expiry_.load(std::memory_order_relaxed));
  reloads(out, "vmgate_tls_certificate_reloads_total", "Certificate (re)loads by result.", certificate_reloads_);

  header(out, "vmgate_object_store_objects", "gauge", "Cluster objects held (instancetypes, preferences, ...).");
  sample(out, "vmgate_object_store_objects", "", objects_.load(std::memory_order_relaxed));
  header(out, "vmgate_object_store_last_reload_timestamp_seconds", "gauge",
         "When the cluster objects were last loaded, in Unix seconds.");
  sample(out, "vmgate_object_store_last_reload_timestamp_seconds", "",
         objects_loaded_at_.load(std::memory_order_relaxed));
  reloads(out, "vmgate_object_store_reloads_total", "Cluster object (re)loads by result.", objects_reloads_);

  header(out, "vmgate_ready", "gauge", "1 when /readyz succeeds: certificate and objects loaded, not draining.");
  sample(out, "vmgate_ready", "", ready ? 1 : 0);
  return out;
}

}  // namespace vmgate::serve
