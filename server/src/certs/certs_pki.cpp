#include "vmgate/server/certs_pki.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <array>
#include <ctime>

namespace vmgate::certs {

namespace {

using kube::BioPtr;
using kube::EvpPkeyPtr;
using kube::X509Ptr;

struct GeneralNamesFree {
  void operator()(GENERAL_NAMES* names) const { GENERAL_NAMES_free(names); }
};
struct BasicConstraintsFree {
  void operator()(BASIC_CONSTRAINTS* constraints) const { BASIC_CONSTRAINTS_free(constraints); }
};

std::int64_t unix_time(const ASN1_TIME* time) {
  std::tm parts{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &parts) != 1) {
    return 0;
  }
  return static_cast<std::int64_t>(timegm(&parts));
}

std::string bio_text(BIO& bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(&bio, &data);
  return length > 0 ? std::string(data, static_cast<std::size_t>(length)) : std::string();
}

std::string ip_text(const ASN1_OCTET_STRING& octets) {
  const unsigned char* bytes = ASN1_STRING_get0_data(&octets);
  const int length = ASN1_STRING_length(&octets);
  std::array<char, INET6_ADDRSTRLEN> text{};
  if ((length == 4 && ::inet_ntop(AF_INET, bytes, text.data(), text.size()) != nullptr) ||
      (length == 16 && ::inet_ntop(AF_INET6, bytes, text.data(), text.size()) != nullptr)) {
    return text.data();  // inet_ntop's form, as canonical_ip() writes configured addresses
  }
  return "invalid";
}

Result<Certificate> describe(X509Ptr x509, std::string_view what) {
  Certificate certificate;
  BioPtr pem(BIO_new(BIO_s_mem()));
  if (!pem || PEM_write_bio_X509(pem.get(), x509.get()) != 1) {
    ERR_clear_error();
    return Error{std::string(what) + ": cannot encode the certificate"};
  }
  certificate.pem = bio_text(*pem);
  certificate.not_before = unix_time(X509_get0_notBefore(x509.get()));
  certificate.not_after = unix_time(X509_get0_notAfter(x509.get()));
  const std::unique_ptr<BASIC_CONSTRAINTS, BasicConstraintsFree> constraints(
      static_cast<BASIC_CONSTRAINTS*>(X509_get_ext_d2i(x509.get(), NID_basic_constraints, nullptr, nullptr)));
  certificate.is_ca = constraints != nullptr && constraints->ca != 0;
  const std::unique_ptr<GENERAL_NAMES, GeneralNamesFree> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x509.get(), NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      certificate.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),  // NOLINT
                                         static_cast<std::size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      certificate.ip_addresses.push_back(ip_text(*name->d.iPAddress));
    }
  }
  BioPtr subject(BIO_new(BIO_s_mem()));
  if (subject && X509_NAME_print_ex(subject.get(), X509_get_subject_name(x509.get()), 0, XN_FLAG_RFC2253) >= 0) {
    certificate.subject = bio_text(*subject);
  }
  ERR_clear_error();
  certificate.x509 = std::move(x509);
  return certificate;
}

}  // namespace

std::string canonical_ip(std::string_view address) {
  const std::string text(address);
  std::array<unsigned char, 16> bytes{};
  std::array<char, INET6_ADDRSTRLEN> out{};
  if (::inet_pton(AF_INET, text.c_str(), bytes.data()) == 1 &&
      ::inet_ntop(AF_INET, bytes.data(), out.data(), out.size()) != nullptr) {
    return out.data();
  }
  if (::inet_pton(AF_INET6, text.c_str(), bytes.data()) == 1 &&
      ::inet_ntop(AF_INET6, bytes.data(), out.data(), out.size()) != nullptr) {
    return out.data();
  }
  return {};
}

std::string Certificate::fingerprint() const {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (!x509 || X509_digest(x509.get(), EVP_sha256(), digest.data(), &length) != 1) {
    return {};
  }
  static constexpr char hex[] = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += hex[digest[i] >> 4U];
    text += hex[digest[i] & 0x0FU];
  }
  return text;
}

Result<std::vector<Certificate>> parse_certificates(std::string_view pem, std::string_view what) {
  if (pem.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{std::string(what) + " is empty"};
  }
  const std::size_t blocks = [&] {
    std::size_t count = 0;
    for (std::size_t at = pem.find("-----BEGIN "); at != std::string_view::npos; at = pem.find("-----BEGIN ", at + 1)) {
      ++count;
    }
    return count;
  }();
  if (blocks == 0) {
    return Error{std::string(what) + " is not PEM (no -----BEGIN line)"};
  }
  ERR_clear_error();
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<Certificate> certificates;
  while (bio) {
    X509Ptr x509(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!x509) {
      break;
    }
    Result<Certificate> described = describe(std::move(x509), what);
    if (!described) {
      return described.error();
    }
    certificates.push_back(std::move(described.value()));
  }
  ERR_clear_error();
  if (certificates.size() != blocks) {
    return Error{std::string(what) + ": PEM block " + std::to_string(certificates.size() + 1) + " of " +
                 std::to_string(blocks) + " is not a readable certificate"};
  }
  return certificates;
}

Result<Certificate> parse_certificate(std::string_view pem, std::string_view what) {
  Result<std::vector<Certificate>> all = parse_certificates(pem, what);
  if (!all) {
    return all.error();
  }
  if (all->size() != 1) {
    return Error{std::string(what) + " holds " + std::to_string(all->size()) + " certificates, not one"};
  }
  return std::move(all->front());
}

Status check_key(const Certificate& certificate, std::string_view key_pem, std::string_view what) {
  if (key_pem.find("-----BEGIN ") == std::string_view::npos) {
    return Error{std::string(what) + " is not a PEM private key"};
  }
  ERR_clear_error();
  BioPtr bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  EvpPkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (!key) {
    return Error{std::string(what) + " is not a readable PEM private key"};
  }
  if (X509_check_private_key(certificate.x509.get(), key.get()) != 1) {
    ERR_clear_error();
    return Error{std::string(what) + " is not the key of the certificate"};
  }
  return Ok{};
}

bool signed_by(const Certificate& certificate, const Certificate& authority) {
  if (!certificate.x509 || !authority.x509) {
    return false;
  }
  if (X509_check_issued(authority.x509.get(), certificate.x509.get()) != X509_V_OK) {
    return false;
  }
  EVP_PKEY* key = X509_get0_pubkey(authority.x509.get());
  const bool verified = key != nullptr && X509_verify(certificate.x509.get(), key) == 1;
  ERR_clear_error();
  return verified;
}

std::string bundle_pem(const std::vector<Certificate>& certificates) {
  std::string text;
  for (const Certificate& certificate : certificates) {
    text += certificate.pem;
  }
  return text;
}

Certificate copy(const Certificate& certificate) {
  Certificate copied;
  if (certificate.x509) {
    X509_up_ref(certificate.x509.get());
    copied.x509.reset(certificate.x509.get());
  }
  copied.pem = certificate.pem;
  copied.not_before = certificate.not_before;
  copied.not_after = certificate.not_after;
  copied.is_ca = certificate.is_ca;
  copied.dns_names = certificate.dns_names;
  copied.ip_addresses = certificate.ip_addresses;
  copied.subject = certificate.subject;
  return copied;
}

}  // namespace vmgate::certs
