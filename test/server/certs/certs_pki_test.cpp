// Reading certificates back (certs_pki.hpp) and issuing them with validities in seconds (tls.hpp).
#include "vmgate/server/certs_pki.hpp"

#include <gtest/gtest.h>
#include <openssl/x509v3.h>

#include "server/certs/certs_test_support.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::certs {
namespace {

using testing::issue_pair;
using testing::unix_now;

TEST(CertsPki, ReadsValiditySansAndTheCaFlag) {
  const std::int64_t before = unix_now();
  const FreshPair pair = issue_pair({"vmgate", "vmgate.ns.svc"}, {"127.0.0.1", "::1"}, 7200, 600);
  Result<Certificate> ca = parse_certificate(pair.ca_crt, "ca.crt");
  Result<Certificate> leaf = parse_certificate(pair.tls_crt, "tls.crt");
  ASSERT_TRUE(ca) << ca.error().message;
  ASSERT_TRUE(leaf) << leaf.error().message;
  EXPECT_TRUE(ca->is_ca);
  EXPECT_FALSE(leaf->is_ca);
  EXPECT_NEAR(static_cast<double>(ca->not_after - before), 7200.0, 5.0);
  EXPECT_NEAR(static_cast<double>(leaf->not_after - before), 600.0, 5.0);
  EXPECT_LE(leaf->not_before, before - 3500);  // backdated an hour for clocks that lag
  EXPECT_EQ(leaf->dns_names, (std::vector<std::string>{"vmgate", "vmgate.ns.svc"}));
  EXPECT_EQ(leaf->ip_addresses, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(leaf->subject, "CN=leaf");
  EXPECT_EQ(leaf->fingerprint().size(), 64U);
}

TEST(CertsPki, TheLeafIsServerAuthOnlyEcP256AndSha256) {
  const FreshPair pair = issue_pair({"vmgate"});
  Result<Certificate> leaf = parse_certificate(pair.tls_crt, "tls.crt");
  ASSERT_TRUE(leaf);
  X509* x509 = leaf->x509.get();
  EXPECT_EQ(X509_get_extended_key_usage(x509), static_cast<std::uint32_t>(XKU_SSL_SERVER));
  EXPECT_EQ(X509_get_signature_nid(x509), NID_ecdsa_with_SHA256);
  EVP_PKEY* key = X509_get0_pubkey(x509);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
  EXPECT_EQ(EVP_PKEY_get_bits(key), 256);
}

TEST(CertsPki, SignedByAndKeyChecks) {
  const FreshPair one = issue_pair({"a"});
  const FreshPair two = issue_pair({"a"});
  Result<Certificate> ca1 = parse_certificate(one.ca_crt, "ca");
  Result<Certificate> ca2 = parse_certificate(two.ca_crt, "ca");
  Result<Certificate> leaf1 = parse_certificate(one.tls_crt, "tls.crt");
  ASSERT_TRUE(ca1 && ca2 && leaf1);
  EXPECT_TRUE(signed_by(*leaf1, *ca1));
  EXPECT_FALSE(signed_by(*leaf1, *ca2));
  EXPECT_TRUE(check_key(*leaf1, one.tls_key, "tls.key"));
  Status other = check_key(*leaf1, two.tls_key, "tls.key");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message, "tls.key is not the key of the certificate");
  Status garbage = check_key(*leaf1, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "tls.key");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().message, "tls.key is not a readable PEM private key");
  EXPECT_EQ(check_key(*leaf1, "hello", "tls.key").error().message, "tls.key is not a PEM private key");
}

TEST(CertsPki, BundlesKeepOrderAndBadBlocksAreNamed) {
  const FreshPair one = issue_pair({"a"});
  const FreshPair two = issue_pair({"a"});
  Result<std::vector<Certificate>> both = parse_certificates(one.ca_crt + two.ca_crt, "ca-bundle.crt");
  ASSERT_TRUE(both);
  ASSERT_EQ(both->size(), 2U);
  EXPECT_EQ(bundle_pem(*both), one.ca_crt + two.ca_crt);

  EXPECT_EQ(parse_certificates("", "ca.crt").error().message, "ca.crt is empty");
  EXPECT_EQ(parse_certificates("nonsense", "ca.crt").error().message, "ca.crt is not PEM (no -----BEGIN line)");
  const std::string broken = one.ca_crt + "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n";
  EXPECT_EQ(parse_certificates(broken, "ca-bundle.crt").error().message,
            "ca-bundle.crt: PEM block 2 of 2 is not a readable certificate");
  EXPECT_EQ(parse_certificate(one.ca_crt + two.ca_crt, "ca.crt").error().message,
            "ca.crt holds 2 certificates, not one");
  // A key where a certificate belongs.
  EXPECT_FALSE(parse_certificate(one.ca_key, "ca.crt"));
}

TEST(CertsPki, IssuingRefusesNoValidityAndNoNames) {
  auto authority = serve::tls::make_authority("ca", std::chrono::seconds(0));
  ASSERT_FALSE(authority);
  EXPECT_EQ(authority.error().message, "a certificate's validity must be longer than 0");
  auto good = serve::tls::make_authority("ca", std::chrono::seconds(60));
  ASSERT_TRUE(good);
  auto leaf = serve::tls::issue_certificate(*good, "x", {}, {}, std::chrono::seconds(60), serve::tls::KeyUsage::server);
  ASSERT_FALSE(leaf);
  EXPECT_NE(leaf.error().message.find("at least one subjectAltName"), std::string::npos);
}

TEST(CertsPki, CanonicalIp) {
  EXPECT_EQ(canonical_ip("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(canonical_ip("0:0:0:0:0:0:0:1"), "::1");
  EXPECT_EQ(canonical_ip("localhost"), "");
}

}  // namespace
}  // namespace vmgate::certs
