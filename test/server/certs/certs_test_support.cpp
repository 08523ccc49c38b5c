#include "server/certs/certs_test_support.hpp"

#include <stdexcept>

#include "vmgate/server/tls.hpp"

namespace vmgate::certs::testing {

FreshPair issue_pair(const std::vector<std::string>& dns, const std::vector<std::string>& ip, std::int64_t ca_seconds,
                     std::int64_t leaf_seconds) {
  auto authority = serve::tls::make_authority("test-ca", std::chrono::seconds(ca_seconds));
  if (!authority) {
    throw std::runtime_error(authority.error().message);
  }
  auto leaf = serve::tls::issue_certificate(*authority, "leaf", dns, ip, std::chrono::seconds(leaf_seconds),
                                            serve::tls::KeyUsage::server);
  if (!leaf) {
    throw std::runtime_error(leaf.error().message);
  }
  auto key = serve::tls::private_key_pem(*authority->key);
  if (!key) {
    throw std::runtime_error(key.error().message);
  }
  return FreshPair{serve::tls::certificate_pem(*authority->certificate), *key, leaf->certificate_pem,
                   leaf->private_key_pem};
}

}  // namespace vmgate::certs::testing
