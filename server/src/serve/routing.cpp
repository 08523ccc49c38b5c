#include "vmgate/server/routing.hpp"

#include "vmgate/common/ascii.hpp"
#include "vmgate/kube/go_duration.hpp"

namespace vmgate::serve {

namespace {

using common::equals_ignoring_ascii_case;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// RFC 9110 §8.3.1: type/subtype case-insensitive, parameters after ';' (charset=utf-8) allowed.
bool is_json(std::string_view content_type) {
  return equals_ignoring_ascii_case(trim(content_type.substr(0, content_type.find(';'))), "application/json");
}

std::string_view path_of_target(std::string_view target) {
  return target.substr(0, target.find('?'));
}

webhook::HttpAnswer text_answer(int status, std::string body) {
  return webhook::HttpAnswer{status, "text/plain; charset=utf-8", std::move(body)};
}

Refusal refuse(webhook::HttpAnswer answer, Rejection reason, std::string_view allow = {}) {
  return Refusal{std::move(answer), reason, true, allow};
}

}  // namespace

webhook::HttpAnswer body_too_large_answer(std::uint64_t max_body_bytes) {
  return webhook::status_answer(413, "request body too large: the limit is " + std::to_string(max_body_bytes) +
                                         " bytes (an AdmissionReview holds at most two objects of 3 MiB)");
}

std::variant<Admit, Refusal> route_webhook(const RequestHead& head, std::uint64_t max_body_bytes) {
  const std::string_view path = path_of_target(head.target);
  const std::optional<webhook::Endpoint> endpoint = webhook::endpoint_for_path(head.target);
  if (!endpoint) {
    return refuse(webhook::status_answer(404, "no webhook at " + std::string(path) +
                                                  "; the webhooks are /virtualmachines-mutate, "
                                                  "/virtualmachines-validate, /virtualmachineinstances-mutate and "
                                                  "/virtualmachineinstances-validate"),
                  Rejection::not_found);
  }
  if (head.method != "POST") {
    return refuse(webhook::status_answer(405, "method " + std::string(head.method) + " not allowed on " +
                                                  std::string(path) + ": kube-apiserver POSTs AdmissionReviews"),
                  Rejection::method, "POST");
  }
  if (!head.content_type || !is_json(*head.content_type)) {
    const std::string got = head.content_type ? "\"" + std::string(*head.content_type) + "\"" : "none";
    return refuse(webhook::status_answer(415, "unsupported Content-Type " + got + ": expected application/json"),
                  Rejection::content_type);
  }
  if (head.content_length && *head.content_length > max_body_bytes) {
    return refuse(body_too_large_answer(max_body_bytes), Rejection::body_too_large);
  }
  Result<std::optional<std::chrono::nanoseconds>> timeout = timeout_parameter(head.target);
  if (!timeout) {
    return refuse(webhook::status_answer(400, timeout.error().message), Rejection::bad_request);
  }
  return Admit{*endpoint, *timeout};
}

webhook::HttpAnswer answer_health(std::string_view method, std::string_view target, const Readiness& readiness,
                                  const Metrics& metrics, std::string_view extra_metrics) {
  const std::string_view path = path_of_target(target);
  const bool known = path == "/livez" || path == "/healthz" || path == "/readyz" || path == "/metrics";
  if (!known) {
    return text_answer(404, "not found: the paths here are /livez, /healthz, /readyz and /metrics\n");
  }
  if (method != "GET" && method != "HEAD") {
    return text_answer(405, "method not allowed\n");
  }
  if (path == "/metrics") {
    return webhook::HttpAnswer{200, "text/plain; version=0.0.4; charset=utf-8",
                               metrics.render(readiness.ready()) + std::string(extra_metrics)};
  }
  if (path == "/readyz") {
    if (readiness.ready()) {
      return text_answer(200, "ok\n");
    }
    std::string body;
    body += readiness.certificate_loaded ? "[+]tls-certificate ok\n" : "[-]tls-certificate failed: not loaded\n";
    body += readiness.objects_loaded
                ? std::string("[+]cluster-objects ok\n")
                : "[-]cluster-objects failed: " +
                      (readiness.objects_reason.empty() ? std::string("not loaded") : readiness.objects_reason) + "\n";
    body += readiness.draining ? "[-]not-draining failed: shutting down\n" : "[+]not-draining ok\n";
    body += "readyz check failed\n";
    return text_answer(503, std::move(body));
  }
  return text_answer(200, "ok\n");
}

Result<std::optional<std::chrono::nanoseconds>> timeout_parameter(std::string_view target) {
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) {
    return std::optional<std::chrono::nanoseconds>{};
  }
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.starts_with("timeout=")) {
      const std::string_view value = pair.substr(std::string_view("timeout=").size());
      Result<std::chrono::nanoseconds> parsed = kube::parse_go_duration(value);
      if (!parsed) {
        return Error{"query parameter timeout: " + parsed.error().message};
      }
      return std::optional<std::chrono::nanoseconds>{*parsed};
    }
  }
  return std::optional<std::chrono::nanoseconds>{};
}

}  // namespace vmgate::serve
