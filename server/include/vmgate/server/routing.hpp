#pragma once
// What `vmgate serve` does with a request once its header is read, before the body: the
// checks of the HTTPS port (path, method, Content-Type, size, ?timeout=) and the answers of
// the plain-HTTP health and metrics port. Pure; thread-safe.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "vmgate/common/result.hpp"
#include "vmgate/server/admission_review.hpp"
#include "vmgate/server/metrics.hpp"

namespace vmgate::serve {

/// The value of the `timeout` query parameter of a request-target ("/path?timeout=10s"):
/// nullopt when absent; an error when present but not a duration (named in the message).
Result<std::optional<std::chrono::nanoseconds>> timeout_parameter(std::string_view target);

/// The parts of an HTTP request header the routing reads.
struct RequestHead {
  std::string_view method;  // "POST"
  std::string_view target;  // "/virtualmachines-mutate?timeout=10s"
  std::optional<std::string_view> content_type;
  std::optional<std::uint64_t> content_length;  // nullopt: chunked or absent
};

/// The request goes to admission: read the body (within `timeout` when the client set one).
struct Admit {
  webhook::Endpoint endpoint = webhook::Endpoint::vm_mutate;
  std::optional<std::chrono::nanoseconds> timeout;  // ?timeout=
};

/// The request is answered without admission; the connection is closed afterwards when the body
/// was not read (`close`), so that its bytes are never taken for the next request.
struct Refusal {
  webhook::HttpAnswer answer;
  Rejection reason = Rejection::bad_request;
  bool close = true;
  std::string_view allow;  // the Allow header of a 405
};

/// Checks, in order: the path is an endpoint (404 "no webhook at <path>"), the method is POST (405),
/// the Content-Type is application/json, parameters allowed (415), a declared Content-Length
/// is at most `max_body_bytes` (413), ?timeout= parses (400).
std::variant<Admit, Refusal> route_webhook(const RequestHead& head, std::uint64_t max_body_bytes);

/// The 413 answer, also used when a chunked body grows past the limit.
webhook::HttpAnswer body_too_large_answer(std::uint64_t max_body_bytes);

/// Readiness and why not, for /readyz.
struct Readiness {
  bool certificate_loaded = false;
  bool objects_loaded = false;
  bool draining = false;
  std::string objects_reason;  // why the objects are not loaded ("persistentvolumeclaims: list: 403 ...")

  [[nodiscard]] bool ready() const { return certificate_loaded && objects_loaded && !draining; }
};

/// The health port: GET or HEAD /livez and /healthz ("ok", always 200 while the process
/// serves), /readyz (200 "ok", or 503 listing the failed checks as Kubernetes components do:
/// "[-]tls-certificate failed"), /metrics (Prometheus text 0.0.4); 405 for other methods,
/// 404 for other paths. The query string is ignored.
/// `extra_metrics` is appended to the /metrics exposition (the cluster source's own families).
webhook::HttpAnswer answer_health(std::string_view method, std::string_view target, const Readiness& readiness,
                                  const Metrics& metrics, std::string_view extra_metrics = {});

}  // namespace vmgate::serve
