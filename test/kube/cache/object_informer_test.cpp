// ObjectInformer against a small TLS server on 127.0.0.1 that answers from a script: a list in
// pages, a watch whose events change the set, a 410 that makes it list again, a refused list
// retried after a backoff, and the selectors on the wire.
#include "vmgate/kube/object_informer.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/loopback_listener.hpp"
#include "vmgate/kube/openssl_handles.hpp"

namespace vmgate::kube {
namespace {

using namespace std::chrono_literals;

struct Reply {
  unsigned status = 200;
  std::string body;
};

// Answers each GET with the next scripted reply; once the script is done, holds the connection
// (a watch with nothing to say) until the client goes.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<Reply> replies) : replies_(replies.begin(), replies.end()) {
    key_.reset(EVP_EC_gen("P-256"));
    certificate_.reset(X509_new());
    X509* cert = certificate_.get();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>("test"), -1, -1, 0);  // NOLINT: C API
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    X509_set_pubkey(cert, key_.get());
    X509_sign(cert, key_.get(), EVP_sha256());
    context_.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(context_.get(), cert);
    SSL_CTX_use_PrivateKey(context_.get(), key_.get());
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
    config.origin = "test";
    return config;
  }

  std::vector<std::string> targets() {
    std::lock_guard lock(mutex_);
    return targets_;
  }

 private:
  void serve() {
    while (!stopping_) {
      const int fd = ::accept(listener_.fd(), nullptr, nullptr);
      if (fd < 0) {
        return;
      }
      SSL* ssl = SSL_new(context_.get());
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) == 1) {
        handle(ssl);
      }
      SSL_shutdown(ssl);
      SSL_free(ssl);
      ::close(fd);
    }
  }

  void handle(SSL* ssl) {
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
      pending.erase(0, header_end + 4);  // GETs carry no body
      const std::size_t first = head.find(' ');
      const std::string target = head.substr(first + 1, head.find(' ', first + 1) - first - 1);
      std::optional<Reply> reply;
      {
        std::lock_guard lock(mutex_);
        targets_.push_back(target);
        if (!replies_.empty()) {
          reply = replies_.front();
          replies_.pop_front();
        }
      }
      if (!reply) {
        while (SSL_read(ssl, chunk.data(), static_cast<int>(chunk.size())) > 0) {
        }
        return;
      }
      const std::string response =
          "HTTP/1.1 " + std::to_string(reply->status) +
          " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(reply->body.size()) + "\r\n\r\n" +
          reply->body;
      SSL_write(ssl, response.data(), static_cast<int>(response.size()));
    }
  }

  EvpPkeyPtr key_;
  X509Ptr certificate_;
  SslCtxPtr context_;
  vmgate::testing::LoopbackListener listener_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::deque<Reply> replies_;
  std::vector<std::string> targets_;
};

std::string object(const std::string& name, const std::string& version) {
  return R"({"metadata":{"namespace":"ns","name":")" + name + R"(","resourceVersion":")" + version + R"("}})";
}

std::string event(const std::string& type, const std::string& object_json) {
  return R"({"type":")" + type + R"(","object":)" + object_json + "}\n";
}

// "name@resourceVersion,..." of the informer's objects.
std::string names(const ObjectInformer& informer) {
  std::string out;
  for (const auto& item : informer.objects()) {
    if (!out.empty()) {
      out += ",";
    }
    out += std::string(json::find_string((*item)["metadata"], "name")) + "@" +
           std::string(json::find_string((*item)["metadata"], "resourceVersion"));
  }
  return out;
}

struct Recorder {
  std::mutex mutex;
  std::vector<std::string> snapshots;
  std::vector<std::string> log;
};

bool eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 500; ++i) {
    if (condition()) {
      return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

TEST(ObjectInformer, ListsInPagesWatchesAndListsAgainOnGone) {
  ScriptedServer server({
      {200, R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[)" + object("a", "5") + "]}"},
      {200, R"({"metadata":{"resourceVersion":"11"},"items":[)" + object("b", "6") + "]}"},
      {200, event("ADDED", object("c", "12")) + event("MODIFIED", object("a", "13")) +
                event("DELETED", object("b", "14")) + event("BOOKMARK", R"({"metadata":{"resourceVersion":"15"}})")},
      {200, event("ERROR", R"({"kind":"Status","code":410,"message":"too old resource version"})")},
      {200, R"({"metadata":{"resourceVersion":"20"},"items":[)" + object("z", "19") + "]}"},
  });
  Recorder recorder;
  InformerSpec spec{"virtualmachines", "/apis/kubevirt.io/v1/virtualmachines", "kubevirt.io=virt-launcher",
                    "metadata.name=a"};
  std::unique_ptr<ObjectInformer>* self = nullptr;
  Result<std::unique_ptr<ObjectInformer>> informer = ObjectInformer::create(
      server.config(), spec,
      [&recorder](std::string_view level, std::string_view message,
                  const std::vector<std::pair<std::string, std::string>>&) {
        std::lock_guard lock(recorder.mutex);
        recorder.log.push_back(std::string(level) + " " + std::string(message));
      },
      [&recorder, &self] {
        if (self != nullptr) {
          std::lock_guard lock(recorder.mutex);
          recorder.snapshots.push_back(names(**self));
        }
      });
  ASSERT_TRUE(informer.ok()) << informer.error().message;
  self = &informer.value();
  EXPECT_FALSE((*informer)->synced());
  (*informer)->start();
  ASSERT_TRUE(eventually([&] { return names(**informer) == "z@19"; })) << names(**informer);
  EXPECT_TRUE((*informer)->synced());
  // The watch after the second list starts after its snapshot is published: a slow machine
  // (the sanitizer build) sees the snapshot before the request.
  EXPECT_TRUE(eventually([&] { return server.targets().size() >= 6; })) << server.targets().size();
  (*informer)->stop();
  {
    std::lock_guard lock(recorder.mutex);
    // The paged list as one set, then the watch's batch (a modified, b deleted, c added).
    EXPECT_NE(std::find(recorder.snapshots.begin(), recorder.snapshots.end(), "a@5,b@6"), recorder.snapshots.end());
    EXPECT_NE(std::find(recorder.snapshots.begin(), recorder.snapshots.end(), "a@13,c@12"), recorder.snapshots.end());
    EXPECT_TRUE(recorder.log.empty()) << recorder.log.front();  // a 410 is not an error
  }
  const std::vector<std::string> targets = server.targets();
  ASSERT_GE(targets.size(), 6U);
  const std::string selectors = "&labelSelector=kubevirt.io%3Dvirt-launcher&fieldSelector=metadata.name%3Da";
  EXPECT_EQ(targets[0], "/apis/kubevirt.io/v1/virtualmachines?limit=500" + selectors);
  EXPECT_EQ(targets[1], "/apis/kubevirt.io/v1/virtualmachines?limit=500" + selectors + "&continue=c1");
  EXPECT_EQ(
      targets[2].rfind("/apis/kubevirt.io/v1/virtualmachines?watch=1&allowWatchBookmarks=true&resourceVersion=11&", 0),
      0U)
      << targets[2];
  EXPECT_NE(targets[2].find(selectors), std::string::npos) << targets[2];
  EXPECT_NE(targets[3].find("resourceVersion=15&"), std::string::npos) << targets[3];  // from the bookmark
  EXPECT_EQ(targets[4], targets[0]);                                                   // listed again
  EXPECT_NE(targets[5].find("watch=1&allowWatchBookmarks=true&resourceVersion=20&"), std::string::npos) << targets[5];
}

TEST(ObjectInformer, ARefusedListIsLoggedOnceAndRetried) {
  ScriptedServer server({
      {403, R"({"kind":"Status","message":"pods is forbidden: User \"x\" cannot list resource \"pods\""})"},
      {403, R"({"kind":"Status","message":"pods is forbidden: User \"x\" cannot list resource \"pods\""})"},
      {200, R"({"metadata":{"resourceVersion":"3"},"items":[)" + object("p", "2") + "]}"},
  });
  Recorder recorder;
  CacheTuning tuning;
  tuning.backoff_initial = 10ms;
  Result<std::unique_ptr<ObjectInformer>> informer = ObjectInformer::create(
      server.config(), InformerSpec{"pods", "/api/v1/pods", "", ""},
      [&recorder](std::string_view level, std::string_view message,
                  const std::vector<std::pair<std::string, std::string>>& fields) {
        std::lock_guard lock(recorder.mutex);
        recorder.log.push_back(std::string(level) + " " + std::string(message) + " " + fields.back().second);
      },
      {}, tuning);
  ASSERT_TRUE(informer.ok());
  (*informer)->start();
  ASSERT_TRUE(eventually([&] { return names(**informer) == "p@2"; }));
  (*informer)->stop();
  std::lock_guard lock(recorder.mutex);
  ASSERT_EQ(recorder.log.size(), 1U);
  EXPECT_EQ(recorder.log[0],
            R"(error informer list pods: 403: pods is forbidden: User "x" cannot list resource "pods")");
}

TEST(ObjectInformer, StopInterruptsAHangingWatch) {
  ScriptedServer server({{200, R"({"metadata":{"resourceVersion":"1"},"items":[]})"}});
  Result<std::unique_ptr<ObjectInformer>> informer =
      ObjectInformer::create(server.config(), InformerSpec{"pods", "/api/v1/pods", "", ""}, {}, {});
  ASSERT_TRUE(informer.ok());
  (*informer)->start();
  ASSERT_TRUE(eventually([&] { return (*informer)->synced() && server.targets().size() == 2; }));
  const auto started = std::chrono::steady_clock::now();
  (*informer)->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_TRUE((*informer)->objects().empty());
}

}  // namespace
}  // namespace vmgate::kube
