// The endpoint probe: a handshake with a TLS server on 127.0.0.1 that trusts one CA only and
// checks the name, as the apiserver does.
#include "vmgate/server/certs_probe.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "server/certs/certs_test_support.hpp"
#include "support/loopback_listener.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::certs {
namespace {

using namespace std::chrono_literals;
using testing::issue_pair;

// Accepts connections and completes handshakes with the pair's leaf until destroyed.
class TlsServer {
 public:
  explicit TlsServer(const FreshPair& pair) {
    write_text(directory_.path() / "tls.crt", pair.tls_crt);
    write_text(directory_.path() / "tls.key", pair.tls_key);
    auto context = serve::tls::load_server_context(
        {(directory_.path() / "tls.crt").string(), (directory_.path() / "tls.key").string(), {}},
        serve::TlsProfile::intermediate);
    if (!context) {
      throw std::runtime_error(context.error().message);
    }
    context_ = context->context;
    thread_ = std::thread([this] {
      while (true) {
        const int fd = ::accept(listener_.fd(), nullptr, nullptr);
        if (fd < 0) {
          return;
        }
        SSL* ssl = SSL_new(context_.get());
        SSL_set_fd(ssl, fd);
        SSL_accept(ssl);
        SSL_free(ssl);
        ::close(fd);
      }
    });
  }
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;
  ~TlsServer() {
    listener_.shutdown();
    thread_.join();
  }
  [[nodiscard]] std::uint16_t port() const { return listener_.port(); }

 private:
  static void write_text(const std::filesystem::path& path, const std::string& text) {
    vmgate::testing::write_text(path, text);
  }
  vmgate::testing::TemporaryDirectory directory_;
  std::shared_ptr<SSL_CTX> context_;
  vmgate::testing::LoopbackListener listener_;
  std::thread thread_;
};

TEST(CertsProbe, VerifiedByTheServingCa) {
  const FreshPair pair = issue_pair({"vmgate.vmgate-system.svc"}, {"127.0.0.1"});
  TlsServer server(pair);
  const ProbeTarget by_ip{"ip", "127.0.0.1", server.port(), "127.0.0.1"};
  const ProbeResult ip = probe_endpoint(by_ip, pair.ca_crt, 3s);
  EXPECT_TRUE(ip.ok) << ip.detail;
  EXPECT_EQ(ip.detail, "/CN=leaf");
  const ProbeTarget by_name{"svc", "127.0.0.1", server.port(), "vmgate.vmgate-system.svc"};
  const ProbeResult name = probe_endpoint(by_name, pair.ca_crt, 3s);
  EXPECT_TRUE(name.ok) << name.detail;
}

TEST(CertsProbe, AnotherCaOrAnotherNameFails) {
  const FreshPair pair = issue_pair({"vmgate.vmgate-system.svc"});
  const FreshPair other = issue_pair({"vmgate.vmgate-system.svc"});
  TlsServer server(pair);
  const ProbeTarget target{"e", "127.0.0.1", server.port(), "vmgate.vmgate-system.svc"};
  const ProbeResult wrong_ca = probe_endpoint(target, other.ca_crt, 3s);
  EXPECT_FALSE(wrong_ca.ok);
  EXPECT_EQ(wrong_ca.endpoint, "e");
  EXPECT_EQ(wrong_ca.detail,
            "certificate not verified for vmgate.vmgate-system.svc by ca.crt alone: unable to get local issuer "
            "certificate");
  const ProbeTarget wrong_name{"e", "127.0.0.1", server.port(), "other.example"};
  const ProbeResult name = probe_endpoint(wrong_name, pair.ca_crt, 3s);
  EXPECT_FALSE(name.ok);
  EXPECT_EQ(name.detail, "certificate not verified for other.example by ca.crt alone: hostname mismatch");
}

TEST(CertsProbe, NothingListeningFails) {
  const std::uint16_t port = vmgate::testing::unused_loopback_port();
  const ProbeResult result = probe_endpoint({"e", "127.0.0.1", port, "127.0.0.1"}, issue_pair({"x"}).ca_crt, 2s);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.detail.find("refused"), std::string::npos) << result.detail;
}

TEST(CertsProbe, UrlTargets) {
  Result<ProbeTarget> target = url_target("https://127.0.0.1:9443/path");
  ASSERT_TRUE(target);
  EXPECT_EQ(target->host, "127.0.0.1");
  EXPECT_EQ(target->port, 9443);
  EXPECT_EQ(target->server_name, "127.0.0.1");
  Result<ProbeTarget> v6 = url_target("https://[::1]/x");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 443);
  EXPECT_EQ(url_target("http://x/").error().message, "clientConfig.url \"http://x/\" is not https");
  EXPECT_EQ(url_target("https://x:99999/").error().message, "clientConfig.url \"https://x:99999/\" has a bad port");
}

}  // namespace
}  // namespace vmgate::certs
