// ApiConnection::request against a small TLS server on 127.0.0.1 that records what it was sent
// and answers from a script: methods, bodies and content types on the wire, the keep-alive
// connection reused, a closed kept-alive connection retried only when that is safe, errors.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/openssl_handles.hpp"
#include "support/loopback_listener.hpp"

namespace vmgate::kube {
namespace {

using namespace std::chrono_literals;

struct Received {
  std::string method;
  std::string target;
  std::string content_type;
  std::string authorization;
  std::string body;
  int connection = 0;  // which accepted connection carried it (1, 2, ...)
};

// What the server does after reading a request: answer (and keep the connection or close it),
// or close without answering (a kept-alive connection the server dropped).
struct Reply {
  unsigned status = 200;
  std::string body = "{}";
  bool close_after = false;
  bool close_without_answer = false;
};

// A self-signed EC certificate for the server; the client skips verification (the tests are
// about requests, verification is OpenSSL's and is configured by client_config).
struct ServerIdentity {
  X509Ptr certificate;
  EvpPkeyPtr key;
};

ServerIdentity make_identity() {
  ServerIdentity identity{X509Ptr(X509_new()), EvpPkeyPtr(EVP_EC_gen("P-256"))};
  X509* cert = identity.certificate.get();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("test"), -1, -1, 0);  // NOLINT: C API
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  X509_set_pubkey(cert, identity.key.get());
  X509_sign(cert, identity.key.get(), EVP_sha256());
  return identity;
}

class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<Reply> replies) : replies_(replies.begin(), replies.end()) {
    identity_ = make_identity();
    context_.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(context_.get(), identity_.certificate.get());
    SSL_CTX_use_PrivateKey(context_.get(), identity_.key.get());
    thread_ = std::thread([this] { serve(); });
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;
  ~ScriptedServer() {
    stopping_ = true;
    listener_.shutdown();
    thread_.join();
  }

  [[nodiscard]] ClientConfig config() const {
    ClientConfig config;
    config.host = "127.0.0.1";
    config.port = listener_.port();
    config.server = "https://127.0.0.1:" + std::to_string(listener_.port());
    config.insecure_skip_tls_verify = true;
    config.bearer_token = "secret-token";
    config.origin = "test";
    return config;
  }

  std::vector<Received> received() {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  void serve() {
    int connection_number = 0;
    while (!stopping_) {
      const int fd = ::accept(listener_.fd(), nullptr, nullptr);
      if (fd < 0) {
        return;
      }
      ++connection_number;
      SSL* ssl = SSL_new(context_.get());
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) == 1) {
        handle(ssl, connection_number);
      }
      SSL_shutdown(ssl);
      SSL_free(ssl);
      ::close(fd);
    }
  }

  // Requests on one connection until the script says close or the client goes.
  void handle(SSL* ssl, int connection_number) {
    std::string pending;
    std::array<char, 4096> chunk{};
    while (true) {
      std::size_t header_end = pending.find("\r\n\r\n");
      while (header_end == std::string::npos) {
        const int read = SSL_read(ssl, chunk.data(), static_cast<int>(chunk.size()));
        if (read <= 0) {
          return;
        }
        pending.append(chunk.data(), static_cast<std::size_t>(read));
        header_end = pending.find("\r\n\r\n");
      }
      const std::string head = pending.substr(0, header_end);
      Received request;
      request.connection = connection_number;
      request.method = head.substr(0, head.find(' '));
      request.target = head.substr(head.find(' ') + 1, head.find(' ', head.find(' ') + 1) - head.find(' ') - 1);
      std::size_t content_length = 0;
      for (std::size_t line = head.find("\r\n"); line != std::string::npos; line = head.find("\r\n", line + 2)) {
        const std::string text = head.substr(line + 2, head.find("\r\n", line + 2) - line - 2);
        const std::string lower_name = [&] {
          std::string name = text.substr(0, text.find(':'));
          for (char& c : name) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          }
          return name;
        }();
        const std::string value = text.find(": ") == std::string::npos ? "" : text.substr(text.find(": ") + 2);
        if (lower_name == "content-length") {
          content_length = std::stoul(value);
        } else if (lower_name == "content-type") {
          request.content_type = value;
        } else if (lower_name == "authorization") {
          request.authorization = value;
        }
      }
      pending.erase(0, header_end + 4);
      while (pending.size() < content_length) {
        const int read = SSL_read(ssl, chunk.data(), static_cast<int>(chunk.size()));
        if (read <= 0) {
          return;
        }
        pending.append(chunk.data(), static_cast<std::size_t>(read));
      }
      request.body = pending.substr(0, content_length);
      pending.erase(0, content_length);
      Reply reply;
      {
        std::lock_guard lock(mutex_);
        received_.push_back(request);
        if (!replies_.empty()) {
          reply = replies_.front();
          replies_.pop_front();
        }
      }
      if (reply.close_without_answer) {
        return;
      }
      const std::string response =
          "HTTP/1.1 " + std::to_string(reply.status) +
          " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(reply.body.size()) + "\r\n" +
          (reply.close_after ? "Connection: close\r\n" : "") + "\r\n" + reply.body;
      SSL_write(ssl, response.data(), static_cast<int>(response.size()));
      if (reply.close_after) {
        return;
      }
    }
  }

  ServerIdentity identity_;
  SslCtxPtr context_;
  vmgate::testing::LoopbackListener listener_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::deque<Reply> replies_;
  std::vector<Received> received_;
};

TEST(ApiConnectionRequest, SendsMethodBodyAndContentTypeAndReadsTheAnswer) {
  ScriptedServer server(
      {{200, R"({"kind":"Secret"})"}, {409, R"({"kind":"Status","message":"conflict"})"}, {201, "{}"}});
  auto connection = ApiConnection::create(server.config());
  ASSERT_TRUE(connection) << connection.error().message;
  auto put = (*connection)->request("PUT", "/api/v1/namespaces/ns/secrets/s", R"({"a":1})", "application/json", 5s);
  ASSERT_TRUE(put) << put.error().message;
  EXPECT_EQ(put->status, 200U);
  EXPECT_EQ(put->body, R"({"kind":"Secret"})");
  auto patch =
      (*connection)->request("PATCH", "/apis/x/v1/y/z", R"([{"op":"test"}])", "application/json-patch+json", 5s);
  ASSERT_TRUE(patch) << patch.error().message;
  EXPECT_EQ(patch->status, 409U);
  EXPECT_EQ(status_message(*patch), "conflict");
  auto post = (*connection)->request("POST", "/api/v1/namespaces/ns/secrets", "{}", "application/json", 5s);
  ASSERT_TRUE(post) << post.error().message;
  EXPECT_EQ(post->status, 201U);

  const std::vector<Received> received = server.received();
  ASSERT_EQ(received.size(), 3U);
  EXPECT_EQ(received[0].method, "PUT");
  EXPECT_EQ(received[0].target, "/api/v1/namespaces/ns/secrets/s");
  EXPECT_EQ(received[0].content_type, "application/json");
  EXPECT_EQ(received[0].body, R"({"a":1})");
  EXPECT_EQ(received[1].method, "PATCH");
  EXPECT_EQ(received[1].content_type, "application/json-patch+json");
  EXPECT_EQ(received[1].body, R"([{"op":"test"}])");
  EXPECT_EQ(received[2].method, "POST");
  // One kept-alive connection for all three.
  EXPECT_EQ(received[2].connection, 1);
}

TEST(ApiConnectionRequest, GetSendsNoBodyThroughTheSameCall) {
  ScriptedServer server({{200, "[]"}});
  auto connection = ApiConnection::create(server.config());
  ASSERT_TRUE(connection);
  auto got = (*connection)->get("/api/v1/namespaces", 5s);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->body, "[]");
  const std::vector<Received> received = server.received();
  ASSERT_EQ(received.size(), 1U);
  EXPECT_EQ(received[0].method, "GET");
  EXPECT_TRUE(received[0].body.empty());
  EXPECT_TRUE(received[0].content_type.empty());
}

TEST(ApiConnectionRequest, AnIdempotentRequestIsSentAgainWhenTheKeptAliveConnectionWasClosed) {
  // The first GET opens the connection; the server then drops the PUT without an answer.
  ScriptedServer server({{200, "{}"}, Reply{.close_without_answer = true}, {200, R"({"again":true})"}});
  auto connection = ApiConnection::create(server.config());
  ASSERT_TRUE(connection);
  ASSERT_TRUE((*connection)->get("/first", 5s));
  auto put = (*connection)->request("PUT", "/put", "{}", "application/json", 5s);
  ASSERT_TRUE(put) << put.error().message;
  EXPECT_EQ(put->body, R"({"again":true})");
  const std::vector<Received> received = server.received();
  ASSERT_EQ(received.size(), 3U);
  EXPECT_EQ(received[2].method, "PUT");
  EXPECT_EQ(received[2].connection, 2);
}

TEST(ApiConnectionRequest, APatchTheServerMayHaveReadIsNotSentAgain) {
  ScriptedServer server({{200, "{}"}, Reply{.close_without_answer = true}, {200, "{}"}});
  auto connection = ApiConnection::create(server.config());
  ASSERT_TRUE(connection);
  ASSERT_TRUE((*connection)->get("/first", 5s));
  auto patch = (*connection)->request("PATCH", "/patch", "{}", "application/merge-patch+json", 5s);
  ASSERT_FALSE(patch);
  EXPECT_NE(patch.error().message.find("read from"), std::string::npos) << patch.error().message;
  EXPECT_EQ(server.received().size(), 2U);
  // The connection is usable again afterwards.
  auto after = (*connection)->get("/after", 5s);
  ASSERT_TRUE(after) << after.error().message;
}

TEST(ApiConnectionRequest, AnUnknownMethodIsRefusedByName) {
  ScriptedServer server({});
  auto connection = ApiConnection::create(server.config());
  ASSERT_TRUE(connection);
  auto bad = (*connection)->request("BREW", "/pot", "", "", 5s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("BREW /pot: not a method"), std::string::npos) << bad.error().message;
  EXPECT_TRUE(server.received().empty());
}

TEST(ApiConnectionRequest, TheBearerTokenIsSentWithEveryMethod) {
  ScriptedServer server({{200, "{}"}});
  auto connection = ApiConnection::create(server.config());
  ASSERT_TRUE(connection);
  auto deleted = (*connection)->request("DELETE", "/x", "", "", 5s);
  ASSERT_TRUE(deleted) << deleted.error().message;
  ASSERT_EQ(server.received().size(), 1U);
  EXPECT_EQ(server.received()[0].method, "DELETE");
  EXPECT_EQ(server.received()[0].authorization, "Bearer secret-token");
}

}  // namespace
}  // namespace vmgate::kube

namespace vmgate::kube {
namespace {

// A refused upgrade (the API server's 400 for a VMI that is not running yet) is an answer, not a
// transport error: the console command retries on it.
TEST(ApiWebSocket, ARefusedUpgradeIsTheServersAnswer) {
  ScriptedServer server({Reply{400, R"({"kind":"Status","message":"VMI is not running","code":400})", true, false}});
  Result<std::unique_ptr<ApiConnection>> api = ApiConnection::create(server.config());
  ASSERT_TRUE(api.ok()) << api.error().message;
  bool opened = false;
  Result<ApiConnection::Relayed, TransportError> relayed =
      (*api)->relay_websocket("/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/a/console",
                              "plain.kubevirt.io", -1, -1, std::nullopt, 5s, [&] { opened = true; });
  ASSERT_TRUE(relayed.ok()) << relayed.error().message;
  ASSERT_TRUE(relayed->refused.has_value());
  EXPECT_EQ(relayed->refused->status, 400U);
  EXPECT_EQ(status_message(*relayed->refused), "VMI is not running");
  EXPECT_FALSE(opened);
  const std::vector<Received> received = server.received();
  ASSERT_EQ(received.size(), 1U);
  EXPECT_EQ(received[0].method, "GET");
  EXPECT_EQ(received[0].target, "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/a/console");
  EXPECT_EQ(received[0].authorization, "Bearer secret-token");
}

}  // namespace
}  // namespace vmgate::kube
