#pragma once
// The probe of `vmgate certs`: a TLS handshake with one webhook endpoint that trusts one CA
// only, checking the name the apiserver checks, to tell whether the endpoint serves a
// certificate of the new CA yet. No HTTP request is sent. Thread-safety: no shared state.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "vmgate/server/certs_plan.hpp"

namespace vmgate::certs {

struct ProbeTarget {
  std::string endpoint;  // for messages: "10.0.0.5:8443", "https://127.0.0.1:9443/path"
  std::string host;      // where to connect: an IP address or a name
  std::uint16_t port = 443;
  std::string server_name;  // sent as SNI (unless an IP address) and verified against the SANs
};

/// Connects within `timeout`, handshakes, and verifies the presented chain against `ca_pem`
/// alone and its name against `server_name`. ok when verified; otherwise `detail` says why
/// (connection refused, timed out, OpenSSL's verification error: "unable to get local issuer
/// certificate" when another CA signed it).
ProbeResult probe_endpoint(const ProbeTarget& target, std::string_view ca_pem, std::chrono::milliseconds timeout);

/// The target of a clientConfig.url ("https://host:port/path"); port 443 when none is given.
/// Errors: not https, no host, a bad port.
Result<ProbeTarget> url_target(std::string_view url);

}  // namespace vmgate::certs
