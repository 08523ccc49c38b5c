#pragma once
// Test support for `vmgate serve`: certificates issued into a temporary directory, the server
// running in-process on loopback port 0, and a blocking HTTP/1.1 client over raw TCP or
// OpenSSL TLS that behaves like kube-apiserver's (verifies the chain against the CA with
// ServerName vmgate.vmgate-system.svc, offers ALPN http/1.1, reuses the connection), or
// misbehaves on purpose (raw bytes, partial requests, old TLS versions).
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/temporary_directory.hpp"
#include "vmgate/admission/pipeline.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/kube/log_line.hpp"
#include "vmgate/server/metrics.hpp"
#include "vmgate/server/serve_options.hpp"
#include "vmgate/server/server.hpp"
#include "vmgate/server/sources.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::testing {

/// The name kube-apiserver verifies for a Service-referenced webhook (docs/webhook.md, "TLS and the Service name").
inline constexpr std::string_view service_name = "vmgate.vmgate-system.svc";

/// A CA and serving certificates it issues, as files: ca.crt, and tls.crt/tls.key per issue().
class TestPki {
 public:
  explicit TestPki(const std::filesystem::path& directory);
  /// Issues a certificate for service_name, localhost and 127.0.0.1 into <directory>/<name>.crt
  /// and .key; returns {cert, key} paths.
  std::pair<std::string, std::string> issue(const std::string& name, const std::string& common_name = "vmgate");
  [[nodiscard]] std::string ca_file() const { return (directory_ / "ca.crt").string(); }

 private:
  std::filesystem::path directory_;
  serve::tls::Authority authority_;
};

/// vmgate serve, in-process, on 127.0.0.1 port 0 for both listeners, two threads, short timeouts
/// fit for tests unless the options say otherwise.
class TestServer {
 public:
  /// Options for a test: listen addresses on loopback port 0, shutdown delay 0, watch interval 100 ms.
  static serve::ServeOptions test_options(const std::string& cert, const std::string& key);

  explicit TestServer(serve::ServeOptions options);
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;
  ~TestServer();

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::uint16_t metrics_port() const { return metrics_port_; }
  [[nodiscard]] serve::Metrics& metrics() { return metrics_; }
  /// What the server logged so far (flushed first).
  std::string log_text();
  /// Starts the graceful shutdown and waits for run() to return.
  void stop();

 private:
  serve::ServeOptions options_;
  admission::Pipeline pipeline_;
  std::unique_ptr<serve::CertificateSource> certificates_;
  std::unique_ptr<serve::FileClusterSource> cluster_;
  serve::Metrics metrics_;
  TemporaryDirectory log_directory_;
  int log_fd_ = -1;
  std::unique_ptr<kube::LogSink> log_;
  std::unique_ptr<serve::Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::uint16_t metrics_port_ = 0;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  [[nodiscard]] std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct ClientOptions {
  std::string ca_file;  // empty: no verification
  std::string server_name = std::string(service_name);
  bool offer_http11 = true;       // ALPN as kube-apiserver: exactly "http/1.1"
  std::vector<std::string> alpn;  // overrides offer_http11 when not empty
  int min_version = 0;            // TLS1_VERSION...; 0: OpenSSL's default
  int max_version = 0;
  std::string client_cert;
  std::string client_key;
  std::chrono::milliseconds timeout{10000};
};

/// A blocking HTTP/1.1 connection over TCP or TLS. Errors are values (Result) so that tests
/// assert on them; nothing throws.
class HttpConnection {
 public:
  /// Connects over TCP to 127.0.0.1:port.
  static Result<HttpConnection> plain(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds{10});
  /// Connects and completes a TLS handshake (verifying the chain and name when ca_file is set).
  static Result<HttpConnection> tls(std::uint16_t port, const ClientOptions& options);

  HttpConnection(HttpConnection&&) noexcept;
  HttpConnection& operator=(HttpConnection&&) noexcept;
  ~HttpConnection();

  Result<bool> send(std::string_view bytes);
  /// Reads one response (Content-Length bodies), keeping what follows for the next one.
  Result<HttpResponse> read_response();
  /// POST with Content-Type (omitted when empty) and Content-Length, then read_response().
  Result<HttpResponse> post(std::string_view target, std::string_view body,
                            std::string_view content_type = "application/json");
  /// True when the peer closed the connection (a read returns end of stream or a reset) within
  /// the timeout.
  bool closed_by_peer();
  /// After closed_by_peer(): whether the peer sent a TLS close_notify before closing.
  [[nodiscard]] bool received_close_notify() const;

  [[nodiscard]] std::string negotiated_alpn() const;
  /// The serial number of the server's certificate, hex; empty over TCP.
  [[nodiscard]] std::string peer_serial() const;
  [[nodiscard]] int native_handle() const { return fd_; }

 private:
  HttpConnection() = default;
  Result<std::size_t> read_some(char* data, std::size_t size);

  int fd_ = -1;
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string pending_;
};

/// GET `path` on the plain-HTTP health and metrics port, on a new connection.
Result<HttpResponse> http_get(std::uint16_t port, std::string_view path);

/// A request exactly as kube-apiserver sends it (Content-Type, Accept, User-Agent, Content-Length).
std::string apiserver_request(std::string_view target, std::string_view body);

/// Raises this process's soft descriptor limit to `wanted` (up to the hard limit); fails, naming
/// `ulimit -n`, when the hard limit is lower. For tests that hold thousands of connections.
::testing::AssertionResult raise_descriptor_limit(std::size_t wanted);

}  // namespace vmgate::testing
