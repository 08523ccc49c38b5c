#pragma once
// One keep-alive HTTPS connection to the Kubernetes API (Boost.Beast/Asio over OpenSSL, the
// server's stack): a request of any method with a body and a deadline (GET, PUT, PATCH, POST,
// DELETE), and a streamed GET for watches that hands over the body
// line by line and gives up when no byte arrives for an idle timeout (a silent watch). TLS 1.2+,
// the server verified against the configured CA (or the system store) and its name or IP
// address, the client certificate or bearer token of the configuration; a token file is re-read
// when it changes, so rotated service-account tokens are picked up. HTTP/1.1 only.
// Beast and Asio stay inside api_client.cpp.
// Thread-safety: one thread uses a connection at a time; cancel() may be called from any thread.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"
#include "vmgate/kube/client_config.hpp"

namespace vmgate::kube {

struct HttpResponse {
  unsigned status = 0;
  std::string body;
};

/// How a streamed GET ended without a transport error.
enum class StreamEnd {
  completed,  // the server ended the body (a watch's timeoutSeconds ran out)
  stopped,    // the line handler asked to stop
};

/// A transport failure. `timed_out`: a deadline or the idle timeout passed.
struct TransportError {
  std::string message;
  bool timed_out = false;
  bool cancelled = false;
  bool after_response = false;  // a streamed GET failed after its 200 header: the stream was up
};

class ApiConnection {
 public:
  /// Builds the TLS context. Errors: a CA, certificate or key that OpenSSL cannot read (named).
  static Result<std::unique_ptr<ApiConnection>> create(const ClientConfig& config);

  ApiConnection(const ApiConnection&) = delete;
  ApiConnection& operator=(const ApiConnection&) = delete;
  ~ApiConnection();

  /// GET `target` (path and query, below the server's base path) within `deadline`; reuses the
  /// connection and reconnects once when a kept-alive one turns out closed. Bodies above
  /// `max_body_bytes` are an error. Any HTTP status is a response.
  Result<HttpResponse, TransportError> get(std::string_view target, std::chrono::milliseconds deadline,
                                           std::size_t max_body_bytes = std::size_t{64} << 20U);

  /// `method` (GET, PUT, PATCH, POST, DELETE) on `target` with `body` sent as `content_type`
  /// (nothing sent when both are empty), within `deadline`, on the kept-alive connection. A
  /// kept-alive connection found closed is reopened and the request sent once more when it
  /// cannot have been applied (the write failed) or the method is idempotent (GET, PUT,
  /// DELETE): a PATCH or POST the server may have read is not repeated. Bodies above `max_body_bytes` are an error. Any
  /// HTTP status is a response. An unknown method is a TransportError naming it.
  Result<HttpResponse, TransportError> request(std::string_view method, std::string_view target, std::string_view body,
                                               std::string_view content_type, std::chrono::milliseconds deadline,
                                               std::size_t max_body_bytes = std::size_t{64} << 20U);

  /// Streams the body of GET `target`, calling `on_line` for each newline-terminated line
  /// (without the newline), and `after_lines` (if set) once the lines of each read are handled
  /// (so a watch can publish a batch of events at once). A status other than 200 ends the call with that response in
  /// `refused` (body read whole). `idle` bounds the wait for each read; a line longer than
  /// `max_line_bytes` is an error.
  struct Streamed {
    StreamEnd end = StreamEnd::completed;
    std::optional<HttpResponse> refused;
  };
  Result<Streamed, TransportError> stream(std::string_view target, std::chrono::milliseconds connect_deadline,
                                          std::chrono::milliseconds idle,
                                          const std::function<bool(std::string_view line)>& on_line,
                                          const std::function<void()>& after_lines,
                                          std::size_t max_line_bytes = std::size_t{32} << 20U);

  /// A WebSocket at `target` (GET with an upgrade, offering `subprotocol`) on a connection of its
  /// own, relayed until one side ends: the bytes read from `in_fd` are sent as binary messages,
  /// one at a time (the next read waits for the send: backpressure), the messages received are
  /// written to `out_fd`. Ends when `in_fd` reaches its end or gives `escape` (the byte is not
  /// sent), or the server closes; then the WebSocket is closed. `in_fd` may be a terminal, a pipe
  /// or a file. A refused upgrade is `refused` (its status and body, e.g. 400 with a Status),
  /// not an error. `on_open` is called once the upgrade succeeded, before any byte is relayed.
  struct Relayed {
    std::optional<HttpResponse> refused;
    bool escaped = false;  // ended by the escape byte
  };
  Result<Relayed, TransportError> relay_websocket(std::string_view target, std::string_view subprotocol, int in_fd,
                                                  int out_fd, std::optional<unsigned char> escape,
                                                  std::chrono::milliseconds connect_deadline,
                                                  const std::function<void()>& on_open = {});

  /// Interrupts the call in progress (or the next one) with TransportError::cancelled, and
  /// every later call. Thread-safe.
  void cancel();

  /// The configuration's description, for messages ("kubeconfig ..., context ...").
  [[nodiscard]] const ClientConfig& config() const;

 private:
  struct Impl;
  explicit ApiConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Percent-encodes a query parameter value (label selectors, continue tokens).
std::string query_escape(std::string_view value);

/// The `message` of a Kubernetes Status body, else the body's first 200 bytes.
std::string status_message(const HttpResponse& response);

}  // namespace vmgate::kube
