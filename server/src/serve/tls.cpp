#include "vmgate/server/tls.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <array>
#include <ctime>

namespace vmgate::serve::tls {

namespace {

using kube::BioPtr;
struct ExtensionFree {
  void operator()(X509_EXTENSION* extension) const { X509_EXTENSION_free(extension); }
};
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, ExtensionFree>;

// Mozilla's Intermediate TLS 1.2 suites (ssl-config.mozilla.org, version 5.7), without the
// finite-field DHE ones that need extra parameters.
constexpr const char* intermediate_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// OpenSSL's queued errors as one string (and the queue emptied, so that they do not leak into
// the next, unrelated call).
std::string openssl_errors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    std::array<char, 256> buffer{};
    ERR_error_string_n(code, buffer.data(), buffer.size());
    if (!text.empty()) {
      text += "; ";
    }
    text += buffer.data();
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

Error failure(std::string what) {
  return Error{std::move(what) + ": " + openssl_errors()};
}

// RFC 7301: pick http/1.1 from the client's list; nothing else is served.
int select_http11(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
                  unsigned int in_length, void* /*arg*/) {
  static constexpr std::array<unsigned char, 9> http11{8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_length, http11.data(), http11.size(), in, in_length) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;  // no_application_protocol
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

std::int64_t not_after_of(const X509& certificate) {
  std::tm time{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(&certificate), &time) != 1) {
    return 0;
  }
  return static_cast<std::int64_t>(timegm(&time));
}

std::string subject_of(const X509& certificate) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), X509_get_subject_name(&certificate), 0, XN_FLAG_RFC2253) < 0) {
    return {};
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

EvpPkeyPtr make_key() {
  return EvpPkeyPtr(EVP_EC_gen("P-256"));
}

bool add_extension(X509& certificate, X509& issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, &issuer, &certificate, nullptr, nullptr, 0);
  const ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str()));
  return extension && X509_add_ext(&certificate, extension.get(), -1) == 1;
}

bool set_common_name(X509_NAME& name, std::string_view common_name) {
  return X509_NAME_add_entry_by_txt(&name, "CN", MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(common_name.data()),  // NOLINT: C API
                                    static_cast<int>(common_name.size()), -1, 0) == 1;
}

// A new certificate with a random serial, valid from an hour ago (clock skew) until `validity`
// from now.
Result<X509Ptr> new_certificate(EVP_PKEY& key, std::string_view common_name, std::chrono::seconds validity) {
  X509Ptr certificate(X509_new());
  if (!certificate || X509_set_version(certificate.get(), 2) != 1) {
    return failure("cannot create a certificate");
  }
  std::array<unsigned char, 16> serial{};
  if (RAND_bytes(serial.data(), static_cast<int>(serial.size())) != 1) {
    return failure("cannot draw a serial number");
  }
  serial[0] &= 0x7FU;  // positive
  BIGNUM* number = BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr);
  const bool serial_set = number != nullptr && BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate.get()));
  BN_free(number);
  if (!serial_set || X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(certificate.get()), static_cast<long>(validity.count())) == nullptr ||
      !set_common_name(*X509_get_subject_name(certificate.get()), common_name) ||
      X509_set_pubkey(certificate.get(), &key) != 1) {
    return failure("cannot fill in a certificate");
  }
  return certificate;
}

// A fresh key and an unsigned certificate for it (the caller sets issuer, extensions, signs).
Result<Authority> new_key_and_certificate(std::string_view common_name, std::chrono::seconds validity) {
  ERR_clear_error();
  if (validity.count() <= 0) {
    return Error{"a certificate's validity must be longer than 0"};
  }
  EvpPkeyPtr key = make_key();
  if (!key) {
    return failure("cannot generate a key");
  }
  Result<X509Ptr> certificate = new_certificate(*key, common_name, validity);
  if (!certificate) {
    return certificate.error();
  }
  return Authority{std::move(certificate.value()), std::move(key)};
}

Result<std::string> write_key_pem(EVP_PKEY& key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), &key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return failure("cannot write a private key");
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

std::chrono::seconds days_of(int days) {
  return std::chrono::seconds(static_cast<std::int64_t>(days) * 24 * 3600);
}

}  // namespace

Result<ServerContext> load_server_context(const ServerFiles& files, TlsProfile profile) {
  ERR_clear_error();
  SslCtxPtr context(SSL_CTX_new(TLS_server_method()));
  if (!context) {
    return failure("cannot create a TLS context");
  }
  SSL_CTX* ctx = context.get();
  const int min_version = profile == TlsProfile::modern ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1 || SSL_CTX_set_cipher_list(ctx, intermediate_ciphers) != 1) {
    return failure("cannot apply the TLS profile");
  }
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
  SSL_CTX_set_num_tickets(ctx, 0);
  // OpenSSL's record buffers go back to the allocator between records (as nginx sets): the next
  // record, whichever connection it is on, reuses memory still in cache rather than that
  // connection's own cold buffers (bench/README.md: fewer µs per request at 64 connections).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_alpn_select_cb(ctx, select_http11, nullptr);

  if (SSL_CTX_use_certificate_chain_file(ctx, files.certificate.c_str()) != 1) {
    return failure("TLS certificate " + files.certificate);
  }
  // Read the key on its own first, so that an unreadable key and a key of another certificate
  // (a Secret caught mid-update) get different messages.
  EvpPkeyPtr key;
  {
    BioPtr file(BIO_new_file(files.private_key.c_str(), "r"));
    if (file) {
      key.reset(PEM_read_bio_PrivateKey(file.get(), nullptr, nullptr, nullptr));
    }
  }
  if (!key) {
    return failure("TLS private key " + files.private_key);
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Error{"TLS private key " + files.private_key + " does not match the certificate " + files.certificate};
  }
  if (!files.client_ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, files.client_ca.c_str(), nullptr) != 1) {
      return failure("client CA " + files.client_ca);
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca.c_str());
    if (names == nullptr) {
      return failure("client CA " + files.client_ca + " holds no certificate");
    }
    SSL_CTX_set_client_CA_list(ctx, names);  // takes ownership
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  const X509* leaf = SSL_CTX_get0_certificate(ctx);
  if (leaf == nullptr) {
    return Error{"TLS certificate " + files.certificate + " holds no certificate"};
  }
  ServerContext loaded;
  loaded.not_after = not_after_of(*leaf);
  loaded.subject = subject_of(*leaf);
  loaded.context = std::shared_ptr<SSL_CTX>(context.release(), kube::SslCtxFree{});
  return loaded;
}

Result<Authority> make_authority(std::string_view common_name, int days) {
  return make_authority(common_name, days_of(days));
}

Result<IssuedCertificate> issue_certificate(const Authority& authority, std::string_view common_name,
                                            const std::vector<std::string>& dns_names,
                                            const std::vector<std::string>& ip_addresses, int days) {
  return issue_certificate(authority, common_name, dns_names, ip_addresses, days_of(days), KeyUsage::server_and_client);
}

Result<Authority> make_authority(std::string_view common_name, std::chrono::seconds validity) {
  Result<Authority> fresh = new_key_and_certificate(common_name, validity);
  if (!fresh) {
    return fresh;
  }
  X509& cert = *fresh->certificate;
  EvpPkeyPtr& key = fresh->key;
  if (X509_set_issuer_name(&cert, X509_get_subject_name(&cert)) != 1 ||
      !add_extension(cert, cert, NID_basic_constraints, "critical,CA:TRUE") ||
      !add_extension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_extension(cert, cert, NID_subject_key_identifier, "hash") ||
      X509_sign(&cert, key.get(), EVP_sha256()) == 0) {
    return failure("cannot sign the CA certificate");
  }
  return fresh;
}

Result<IssuedCertificate> issue_certificate(const Authority& authority, std::string_view common_name,
                                            const std::vector<std::string>& dns_names,
                                            const std::vector<std::string>& ip_addresses, std::chrono::seconds validity,
                                            KeyUsage usage) {
  if (dns_names.empty() && ip_addresses.empty()) {
    return Error{"a server certificate needs at least one subjectAltName (clients check SANs, never the CN)"};
  }
  Result<Authority> fresh = new_key_and_certificate(common_name, validity);
  if (!fresh) {
    return fresh.error();
  }
  EvpPkeyPtr& key = fresh->key;
  std::string alt_names;
  for (const std::string& name : dns_names) {
    alt_names += (alt_names.empty() ? "DNS:" : ",DNS:") + name;
  }
  for (const std::string& address : ip_addresses) {
    alt_names += (alt_names.empty() ? "IP:" : ",IP:") + address;
  }
  X509& cert = *fresh->certificate;
  X509& issuer = *authority.certificate;
  if (X509_set_issuer_name(&cert, X509_get_subject_name(&issuer)) != 1 ||
      !add_extension(cert, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension(cert, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !add_extension(cert, issuer, NID_ext_key_usage,
                     usage == KeyUsage::server ? "serverAuth" : "serverAuth,clientAuth") ||
      !add_extension(cert, issuer, NID_authority_key_identifier, "keyid:always")) {
    return failure("cannot fill in the certificate");
  }
  if (!add_extension(cert, issuer, NID_subject_alt_name, alt_names)) {
    return failure("invalid subjectAltName \"" + alt_names + "\"");
  }
  if (X509_sign(&cert, authority.key.get(), EVP_sha256()) == 0) {
    return failure("cannot sign the certificate");
  }
  Result<std::string> key_pem = write_key_pem(*key);
  if (!key_pem) {
    return key_pem.error();
  }
  return IssuedCertificate{certificate_pem(cert), std::move(key_pem.value())};
}

std::string certificate_pem(const X509& certificate) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), const_cast<X509*>(&certificate)) != 1) {  // NOLINT: C API
    return {};
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

Result<std::string> private_key_pem(EVP_PKEY& key) {
  ERR_clear_error();
  return write_key_pem(key);
}

}  // namespace vmgate::serve::tls
