#pragma once
// The command line of `vmgate serve` (docs/webhook.md, "vmgate serve command line"). Pure; thread-safe.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/release.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::serve {

/// Mozilla's server-side TLS profiles: Intermediate is TLS 1.2 with AEAD ECDHE suites and TLS 1.3;
/// Modern is TLS 1.3 only.
enum class TlsProfile { intermediate, modern };

struct ListenAddress {
  std::string host;        // an IP address literal ("0.0.0.0", "::", "127.0.0.1")
  std::uint16_t port = 0;  // 0: the system picks one (tests)

  [[nodiscard]] std::string str() const;
};

struct ServeOptions {
  ListenAddress listen{"0.0.0.0", 8443};
  ListenAddress metrics_listen{"0.0.0.0", 8080};
  std::string tls_cert;   // PEM certificate chain; empty: a development certificate is generated
  std::string tls_key;    // PEM private key
  std::string client_ca;  // PEM CA bundle; when set, clients must present a certificate it signed
  /// Where a generated development certificate (ca.crt, tls.crt, tls.key) is written.
  std::string dev_cert_dir;
  TlsProfile tls_profile = TlsProfile::intermediate;
  std::vector<std::string> objects;                     // --objects: the cluster, re-read when the files change
  std::string kubeconfig;                               // --kubeconfig: the cluster from the Kubernetes API
  std::string context;                                  // --context: the kubeconfig context; empty: current-context
  std::chrono::milliseconds cache_sync_timeout{60000};  // the first sync, before serving
  std::chrono::milliseconds watch_idle{150000};         // a silent watch is restarted after this
  /// KubeVirt's namespace: its service accounts there count as KubeVirt itself.
  std::string kubevirt_namespace = "kubevirt";
  /// --kubevirt-version: the release to judge as; nullopt: the KubeVirt CR's, else the newest.
  std::optional<admission::Release> release;
  unsigned threads = 0;                            // 0: one per CPU this process may run on
  std::chrono::milliseconds watch_interval{1000};  // how often files are checked for changes
  std::chrono::milliseconds shutdown_delay{5000};  // not ready, still serving, after SIGTERM
  std::chrono::milliseconds grace_period{25000};   // for in-flight requests after that
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds header_timeout{10000};  // from a request's first byte to its last header
  std::chrono::milliseconds body_timeout{30000};    // the body, unless ?timeout= is shorter
  std::chrono::milliseconds idle_timeout{120000};   // above the apiserver's 90 s keep-alive
  std::size_t max_connections = 10000;
  std::size_t max_body_bytes = std::size_t{8} << 20U;
  /// Request bodies held at once across connections (a Content-Length is reserved when the
  /// header is read, a chunked body reserves max_body_bytes): without it, 200 connections
  /// sending 8 MiB bodies held 1.9 GB.
  std::size_t max_body_memory = std::size_t{512} << 20U;
  std::size_t max_header_bytes = std::size_t{16} << 10U;
  bool access_log = true;
  bool help = false;
};

/// Reads an environment variable; nullptr when unset.
using Environment = std::function<const char*(const char*)>;

/// Parses the arguments that follow `serve`. Options take their value as the next argument or
/// after `=`; `--` ends the options (serve takes no operands: anything after it is refused).
/// The environment supplies PORT (listen on 0.0.0.0:$PORT), TLS_CERT and TLS_KEY when the
/// corresponding option is not given (the benchmark harness's contract).
/// Errors, in words for the user: an unknown option, an option without its value, a repeated
/// option (other than --objects), a malformed address, port, duration ("10s", "500ms", "2m") or
/// number, --tls-cert without --tls-key or the reverse, --client-ca without --tls-cert (a
/// development certificate is for local use only), --kubeconfig with --objects, --context
/// without --kubeconfig, an argument that is not an option.
Result<ServeOptions> parse_serve_options(std::span<const std::string_view> args, const Environment& environment);

/// "ADDR:PORT", ":PORT" (all IPv4 addresses) or "[IPv6]:PORT".
Result<ListenAddress> parse_listen_address(std::string_view text);

/// `vmgate serve --help`.
std::string serve_usage();

}  // namespace vmgate::serve
