#pragma once
// OpenSSL for `vmgate serve`: server contexts built from certificate files with the chosen
// profile, and certificates issued in memory (the development certificate; tests).
// No sockets: the transport wraps the SSL_CTX. RAII owns every OpenSSL handle.
// Thread-safety: the functions share no state; a built SSL_CTX is immutable and may be used by
// any number of connections concurrently.
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/kube/openssl_handles.hpp"
#include "vmgate/server/serve_options.hpp"

namespace vmgate::serve::tls {

using kube::EvpPkeyPtr;
using kube::SslCtxPtr;
using kube::X509Ptr;

struct ServerFiles {
  std::string certificate;  // PEM chain, leaf first
  std::string private_key;  // PEM
  std::string client_ca;    // PEM bundle; empty: no client certificates asked for
};

/// A server context ready for handshakes, and what the metrics and log say about it.
struct ServerContext {
  std::shared_ptr<SSL_CTX> context;
  std::int64_t not_after = 0;  // the leaf's notAfter, Unix seconds
  std::string subject;         // the leaf's subject, one line ("CN=vmgate.vmgate-system.svc")
};

/// Builds a server context from the files: the profile's protocol versions and ciphers
/// (intermediate: TLS 1.2 with ECDHE AEAD suites, and TLS 1.3; modern: TLS 1.3 only); ALPN
/// selects "http/1.1" and refuses a client offering only other protocols (the apiserver
/// offers exactly http/1.1; h2 is never served: CVE-2023-44487); no session tickets or cache
/// (the apiserver does not resume, and a client-certificate check must run on every
/// handshake); with a client CA, a verified client certificate is required.
/// Errors name the file and OpenSSL's reason: unreadable or malformed PEM, a key that does
/// not match the certificate, an empty CA bundle.
Result<ServerContext> load_server_context(const ServerFiles& files, TlsProfile profile);

/// A certificate authority held in memory.
struct Authority {
  X509Ptr certificate;
  EvpPkeyPtr key;
};

/// PEM text of an issued certificate and its private key.
struct IssuedCertificate {
  std::string certificate_pem;
  std::string private_key_pem;
};

/// A self-signed CA (EC P-256, SHA-256) valid from an hour ago for `days`.
Result<Authority> make_authority(std::string_view common_name, int days = 365);

/// The same with the validity in seconds from now (notBefore still an hour back, for clocks
/// that lag): `vmgate certs` takes Go durations, and its tests use minutes.
/// Errors: a validity that is not positive, OpenSSL failures.
Result<Authority> make_authority(std::string_view common_name, std::chrono::seconds validity);

/// What an issued certificate may be used for (its extendedKeyUsage).
enum class KeyUsage { server, server_and_client };

/// A server certificate signed by `authority` (EC P-256, SHA-256, serverAuth+clientAuth), with
/// the subjectAltNames `dns_names` and `ip_addresses` (the apiserver checks SANs, never the CN),
/// valid from an hour ago for `days`. Errors: an invalid IP address, OpenSSL failures.
Result<IssuedCertificate> issue_certificate(const Authority& authority, std::string_view common_name,
                                            const std::vector<std::string>& dns_names,
                                            const std::vector<std::string>& ip_addresses, int days = 365);

/// The same with the validity in seconds from now and the key usage chosen: `vmgate certs`
/// issues serverAuth only. Errors: a validity that is not positive, no subjectAltName at all,
/// an invalid IP address, OpenSSL failures.
Result<IssuedCertificate> issue_certificate(const Authority& authority, std::string_view common_name,
                                            const std::vector<std::string>& dns_names,
                                            const std::vector<std::string>& ip_addresses, std::chrono::seconds validity,
                                            KeyUsage usage);

/// The PEM text of a certificate.
std::string certificate_pem(const X509& certificate);

/// The PEM text (PKCS #8, unencrypted) of a private key; errors are OpenSSL's.
Result<std::string> private_key_pem(EVP_PKEY& key);

}  // namespace vmgate::serve::tls
