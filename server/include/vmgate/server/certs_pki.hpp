#pragma once
// What `vmgate certs` reads back out of PEM to decide whether a renewal is due: the
// certificates of a bundle with their validity, subjectAltNames and CA flag, whether a key
// belongs to a certificate, whether a certificate was signed by a CA. Pure (no I/O, no clock);
// thread-safe (OpenSSL objects are owned per call).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/kube/openssl_handles.hpp"

namespace vmgate::certs {

/// One certificate as read from PEM.
struct Certificate {
  kube::X509Ptr x509;
  std::string pem;              // re-encoded: one canonical PEM block, whatever the input's line breaks
  std::int64_t not_before = 0;  // Unix seconds
  std::int64_t not_after = 0;
  bool is_ca = false;                     // basicConstraints CA:TRUE
  std::vector<std::string> dns_names;     // subjectAltName DNS entries, in order
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries, as text
  std::string subject;                    // one line, RFC 2253 ("CN=vmgate CA")

  /// The DER encoding's SHA-256, hex: two certificates are the same when these are.
  [[nodiscard]] std::string fingerprint() const;
};

/// Every certificate of a PEM bundle, in order. Errors (naming `what`, e.g. "ca.crt"): empty
/// text, a block that is not a certificate, text that is not PEM at all.
Result<std::vector<Certificate>> parse_certificates(std::string_view pem, std::string_view what);

/// Exactly one certificate. Errors: those of parse_certificates, and more than one.
Result<Certificate> parse_certificate(std::string_view pem, std::string_view what);

/// Checks that `key_pem` is a private key and the key of `certificate`. Errors name `what`.
Status check_key(const Certificate& certificate, std::string_view key_pem, std::string_view what);

/// Whether `certificate` names `authority` as its issuer and carries its signature.
bool signed_by(const Certificate& certificate, const Certificate& authority);

/// Concatenates the certificates' PEM blocks (a CA bundle file).
std::string bundle_pem(const std::vector<Certificate>& certificates);

/// An IP address in the form subjectAltName IPs are read back in ("::1", "10.0.0.1"); empty
/// when `address` is not an IP address.
std::string canonical_ip(std::string_view address);

/// A copy (the X509 reference-counted).
Certificate copy(const Certificate& certificate);

}  // namespace vmgate::certs
