#pragma once
// The transport of `vmgate serve`: the HTTPS admission listener and the plain-HTTP health and
// metrics listener, on Boost.Beast/Asio with OpenSSL (docs/webhook.md). Every connection has a
// strand, a TLS handshake timeout, an idle timeout between requests, a header timeout from the
// first byte, a body deadline (the body timeout or ?timeout=, whichever is sooner), a header
// limit (431) and a body limit (413); the bodies of all connections share a budget (503).
// Admission runs on the connection's strand: it is CPU-only and takes tens of microseconds, so
// handing it to another pool would cost more than it saves. It never waits for the API server:
// an object the cluster cache misses is looked up on the live-lookup threads while the strand
// serves others, and the admission runs again with the answer (kube/request_view.hpp). Beast and Asio stay inside
// server.cpp; this header pulls in neither.
#include <cstdint>
#include <memory>

#include "vmgate/admission/pipeline.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/kube/log_line.hpp"
#include "vmgate/server/admission_review.hpp"
#include "vmgate/server/metrics.hpp"
#include "vmgate/server/serve_options.hpp"
#include "vmgate/server/sources.hpp"

namespace vmgate::serve {

/// What the server uses; all of it must outlive the server.
struct ServerParts {
  const ServeOptions& options;
  const admission::Pipeline& pipeline;
  CertificateSource& certificates;  // loaded before the server starts
  ClusterSource& cluster;           // loaded before the server starts
  Metrics& metrics;
  kube::LogSink& log;
  webhook::ReviewOptions review_options;
};

class Server {
 public:
  /// Binds both listeners (port 0: the system picks; see https_port()). Errors: an address that
  /// cannot be bound ("--listen 0.0.0.0:8443: Address already in use").
  static Result<std::unique_ptr<Server>> bind(ServerParts parts);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  [[nodiscard]] std::uint16_t https_port() const;
  [[nodiscard]] std::uint16_t metrics_port() const;

  /// Serves on options.threads threads (this one included) until a shutdown has drained, then
  /// returns. With `handle_signals`, SIGTERM and SIGINT start the shutdown (a second one stops
  /// at once). Call once.
  void run(bool handle_signals);

  /// Starts the graceful shutdown: /readyz fails at once; requests are still served for
  /// options.shutdown_delay; then the listener closes, idle connections close, in-flight
  /// requests finish with Connection: close within options.grace_period, and run() returns.
  /// Thread-safe; idempotent.
  void shutdown();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::serve
