#include "vmgate/server/tls.hpp"

#include <gtest/gtest.h>

#include <ctime>

#include "server/serve/serve_test_support.hpp"

namespace vmgate::serve::tls {
namespace {

using testing::TemporaryDirectory;
using testing::TestPki;
using testing::write_text;

TEST(Tls, LoadsAnIssuedCertificate) {
  TemporaryDirectory directory;
  TestPki pki(directory.path());
  const auto [cert, key] = pki.issue("serving", "vmgate-test");
  Result<ServerContext> loaded = load_server_context(ServerFiles{cert, key, {}}, TlsProfile::intermediate);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->subject, "CN=vmgate-test");
  const std::int64_t now = std::time(nullptr);
  EXPECT_GT(loaded->not_after, now + 300 * 24 * 3600);
  EXPECT_LT(loaded->not_after, now + 400 * 24 * 3600);
  EXPECT_EQ(SSL_CTX_get_min_proto_version(loaded->context.get()), TLS1_2_VERSION);
  Result<ServerContext> modern = load_server_context(ServerFiles{cert, key, {}}, TlsProfile::modern);
  ASSERT_TRUE(modern.ok());
  EXPECT_EQ(SSL_CTX_get_min_proto_version(modern->context.get()), TLS1_3_VERSION);
}

TEST(Tls, ErrorsNameTheFile) {
  TemporaryDirectory directory;
  TestPki pki(directory.path());
  const auto [cert, key] = pki.issue("serving");
  const auto [other_cert, other_key] = pki.issue("other");
  const std::string garbage = (directory.path() / "garbage.pem").string();
  write_text(garbage, "not a certificate\n");

  Result<ServerContext> missing =
      load_server_context(ServerFiles{"/nonexistent.pem", key, {}}, TlsProfile::intermediate);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind("TLS certificate /nonexistent.pem: ", 0), 0U) << missing.error().message;

  Result<ServerContext> bad_cert = load_server_context(ServerFiles{garbage, key, {}}, TlsProfile::intermediate);
  ASSERT_FALSE(bad_cert.ok());
  EXPECT_EQ(bad_cert.error().message.rfind("TLS certificate " + garbage + ": ", 0), 0U);

  Result<ServerContext> bad_key = load_server_context(ServerFiles{cert, garbage, {}}, TlsProfile::intermediate);
  ASSERT_FALSE(bad_key.ok());
  EXPECT_EQ(bad_key.error().message.rfind("TLS private key " + garbage + ": ", 0), 0U);

  Result<ServerContext> mismatch = load_server_context(ServerFiles{cert, other_key, {}}, TlsProfile::intermediate);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().message, "TLS private key " + other_key + " does not match the certificate " + cert);

  Result<ServerContext> bad_ca = load_server_context(ServerFiles{cert, key, garbage}, TlsProfile::intermediate);
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_EQ(bad_ca.error().message.rfind("client CA " + garbage, 0), 0U);
}

TEST(Tls, IssuedCertificateCarriesSansAndValidates) {
  Result<Authority> authority = make_authority("ca");
  ASSERT_TRUE(authority.ok());
  Result<IssuedCertificate> issued =
      issue_certificate(*authority, "vmgate", {"vmgate.vmgate-system.svc"}, {"127.0.0.1", "::1"});
  ASSERT_TRUE(issued.ok()) << issued.error().message;
  EXPECT_EQ(issued->certificate_pem.rfind("-----BEGIN CERTIFICATE-----", 0), 0U);
  EXPECT_NE(issued->private_key_pem.find("PRIVATE KEY-----"), std::string::npos);
  Result<IssuedCertificate> bad_ip = issue_certificate(*authority, "vmgate", {}, {"not-an-ip"});
  EXPECT_FALSE(bad_ip.ok());
}

}  // namespace
}  // namespace vmgate::serve::tls
