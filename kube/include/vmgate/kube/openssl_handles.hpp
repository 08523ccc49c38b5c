#pragma once
// RAII for the OpenSSL handles the API client and the server own: each freed by its own
// OpenSSL function when the unique_ptr goes. Header-only; no state.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

namespace vmgate::kube {

struct SslCtxFree {
  void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
};
struct X509Free {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct EvpPkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

}  // namespace vmgate::kube
