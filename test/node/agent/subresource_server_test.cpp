// The subresource endpoint on loopback: certificates made by openssl in a temporary directory, a
// kubelet root of the test's own with one launcher pod whose private directory holds a control
// socket and a serial socket played by the test, and HTTPS and WebSocket clients as vmgate serve.
#include "vmgate/node/subresource_server.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "support/temporary_directory.hpp"
#include "vmgate/kube/pod_paths.hpp"

namespace vmgate::node {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;

constexpr std::string_view vmi_uid = "6d3f0a2b-8c4e-4b7a-9f1d-2e5c7a9b0c11";
constexpr std::string_view pod_uid = "11111111-2222-4333-8444-555555555555";
constexpr std::string_view vmi_path = "/v1/namespaces/tenant/virtualmachineinstances/vm1";

bool run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;  // NOLINT: the test's own openssl line
}

// A unix socket listening at `path`, whatever its length: bound at a short name in `scratch`,
// then renamed there (a socket is found by its inode).
int listen_at(const fs::path& path, const fs::path& scratch) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string short_path = (scratch / "s.sock").string();
  std::strncpy(address.sun_path, short_path.c_str(), sizeof address.sun_path - 1);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||  // NOLINT: C API
      ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  fs::rename(short_path, path);
  return fd;
}

// Waits up to `ms` for fd to be readable.
bool readable(int fd, int ms) {
  pollfd watched{fd, POLLIN, 0};
  return ::poll(&watched, 1, ms) > 0;
}

// The launcher played by the test: the control socket answers pause with ok and unpause with
// an error (or nothing at all when `silent`); the serial socket greets, echoes, and hangs up on "bye".
class FakeLauncher {
 public:
  FakeLauncher(const fs::path& private_dir, const fs::path& scratch, bool silent) : silent_(silent) {
    control_ = listen_at(private_dir / kube::pod_paths::control_socket_name, scratch);
    serial_ = listen_at(private_dir / kube::pod_paths::serial_socket_name, scratch);
    control_thread_ = std::thread([this] { serve_control(); });
    serial_thread_ = std::thread([this] { serve_serial(); });
  }
  FakeLauncher(const FakeLauncher&) = delete;
  FakeLauncher& operator=(const FakeLauncher&) = delete;
  ~FakeLauncher() {
    done_.store(true);
    control_thread_.join();
    serial_thread_.join();
    ::close(control_);
    ::close(serial_);
  }
  [[nodiscard]] bool listening() const { return control_ >= 0 && serial_ >= 0; }
  std::atomic<int> serial_eofs{0};  // console connections the client ended

 private:
  void serve_control() {
    while (!done_.load()) {
      if (!readable(control_, 50)) {
        continue;
      }
      const int client = ::accept4(control_, nullptr, nullptr, SOCK_CLOEXEC);
      std::string line;
      char c = 0;
      while (readable(client, 2000) && ::recv(client, &c, 1, 0) == 1 && c != '\n') {
        line += c;
      }
      if (silent_) {
        while (!done_.load() && !readable(client, 50)) {
        }
      } else {
        const std::string answer = line == "pause" ? "ok\n" : "error domain is not paused\n";
        (void)::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
      }
      ::close(client);
    }
  }
  void serve_serial() {
    while (!done_.load()) {
      if (!readable(serial_, 50)) {
        continue;
      }
      const int client = ::accept4(serial_, nullptr, nullptr, SOCK_CLOEXEC);
      (void)::send(client, "GUEST-READY\n", 12, MSG_NOSIGNAL);
      std::string seen;
      while (!done_.load()) {
        if (!readable(client, 50)) {
          continue;
        }
        char buffer[256];
        const ssize_t got = ::recv(client, buffer, sizeof buffer, 0);
        if (got <= 0) {
          serial_eofs.fetch_add(1);
          break;
        }
        (void)::send(client, buffer, static_cast<std::size_t>(got), MSG_NOSIGNAL);  // echo
        seen.append(buffer, static_cast<std::size_t>(got));
        if (seen.find("bye") != std::string::npos) {
          break;  // the guest side hangs up
        }
      }
      ::close(client);
    }
  }

  bool silent_;
  int control_ = -1;
  int serial_ = -1;
  std::atomic<bool> done_{false};
  std::thread control_thread_;
  std::thread serial_thread_;
};

struct HttpAnswer {
  unsigned status = 0;
  std::string body;
  std::string error;  // the connection failed (handshake refused...)
};

class SubresourceServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path d = dir_.path();
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes ";
    ASSERT_TRUE(run("openssl req -x509" + ec + "-keyout " + (d / "ca.key").string() + " -out " +
                    (d / "ca.crt").string() + " -days 1 -subj /CN=test-ca"));
    ASSERT_TRUE(run("openssl req -x509" + ec + "-keyout " + (d / "rogue-ca.key").string() + " -out " +
                    (d / "rogue-ca.crt").string() + " -days 1 -subj /CN=rogue-ca"));
    const auto issue = [&](const std::string& name, const std::string& cn, const std::string& ca) {
      return run("openssl req -new" + ec + "-keyout " + (d / (name + ".key")).string() + " -out " +
                 (d / (name + ".csr")).string() + " -subj /CN=" + cn) &&
             run("openssl x509 -req -in " + (d / (name + ".csr")).string() + " -CA " + (d / (ca + ".crt")).string() +
                 " -CAkey " + (d / (ca + ".key")).string() + " -CAcreateserial -days 1 -out " +
                 (d / (name + ".crt")).string());
    };
    ASSERT_TRUE(issue("server", "node0", "ca"));
    ASSERT_TRUE(issue("serve", "vmgate-subresources", "ca"));
    ASSERT_TRUE(issue("other", "someone-else", "ca"));
    ASSERT_TRUE(issue("rogue", "vmgate-subresources", "rogue-ca"));
    private_dir_ = d / "kubelet/pods" / std::string(pod_uid) / "volumes/kubernetes.io~empty-dir/private";
    fs::create_directories(private_dir_);
    ASSERT_GT(private_dir_.string().size() + 20, sizeof(sockaddr_un::sun_path)) << "the path must be a long one";
  }

  void start_server(bool silent_launcher = false) {
    launcher_ = std::make_unique<FakeLauncher>(private_dir_, dir_.path(), silent_launcher);
    ASSERT_TRUE(launcher_->listening());
    SubresourceConfig config;
    config.listen = {"127.0.0.1", 0};
    config.tls_cert = (dir_.path() / "server.crt").string();
    config.tls_key = (dir_.path() / "server.key").string();
    config.client_ca = (dir_.path() / "ca.crt").string();
    config.kubelet_root = (dir_.path() / "kubelet").string();
    config.launcher_timeout = std::chrono::milliseconds(700);
    LauncherPodsSource pods = [] {
      return std::vector<LauncherPod>{
          LauncherPod{"tenant", "virt-launcher-vm1-x", std::string(pod_uid), "vm1", std::string(vmi_uid), false}};
    };
    Result<std::unique_ptr<SubresourceServer>> started = SubresourceServer::start(config, pods, log_);
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(*started);
  }

  void TearDown() override {
    server_.reset();
    launcher_.reset();
  }

  // A TLS client context presenting `client` (empty: no certificate), trusting the test CA.
  asio::ssl::context client_context(const std::string& client) {
    asio::ssl::context context(asio::ssl::context::tls_client);
    context.load_verify_file((dir_.path() / "ca.crt").string());
    context.set_verify_mode(asio::ssl::verify_peer);
    if (!client.empty()) {
      context.use_certificate_chain_file((dir_.path() / (client + ".crt")).string());
      context.use_private_key_file((dir_.path() / (client + ".key")).string(), asio::ssl::context::pem);
    }
    return context;
  }

  HttpAnswer request(const std::string& client, http::verb method, const std::string& target,
                     std::string_view uid = vmi_uid) {
    HttpAnswer answer;
    asio::io_context io;
    asio::ssl::context context = client_context(client);
    beast::ssl_stream<beast::tcp_stream> stream(io, context);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
    beast::error_code error;
    beast::get_lowest_layer(stream).connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()), error);
    if (!error) {
      stream.handshake(asio::ssl::stream_base::client, error);
    }
    if (error) {
      answer.error = "handshake: " + error.message();
      return answer;
    }
    http::request<http::string_body> req(method, target, 11);
    req.set(http::field::host, "node0");
    if (!uid.empty()) {
      req.set("X-Vmgate-Vmi-Uid", uid);
    }
    req.prepare_payload();
    http::write(stream, req, error);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    if (!error) {
      http::read(stream, buffer, res, error);
    }
    if (error) {
      answer.error = error.message();  // TLS 1.3: a refused certificate shows on the first read
      return answer;
    }
    answer.status = res.result_int();
    answer.body = res.body();
    return answer;
  }

  vmgate::testing::TemporaryDirectory dir_;
  fs::path private_dir_;
  std::ostringstream log_text_;
  EventLog log_{log_text_};
  std::unique_ptr<FakeLauncher> launcher_;
  std::unique_ptr<SubresourceServer> server_;
};

TEST_F(SubresourceServerTest, NoClientCertificateIsRefused) {
  start_server();
  const HttpAnswer answer = request("", http::verb::put, std::string(vmi_path) + "/pause");
  EXPECT_EQ(answer.status, 0U) << answer.body;
  EXPECT_FALSE(answer.error.empty());
}

TEST_F(SubresourceServerTest, ACertificateOfAnotherCaIsRefused) {
  start_server();
  const HttpAnswer answer = request("rogue", http::verb::put, std::string(vmi_path) + "/pause");
  EXPECT_EQ(answer.status, 0U) << answer.body;
  EXPECT_FALSE(answer.error.empty());
}

TEST_F(SubresourceServerTest, AnotherNameIsForbidden) {
  start_server();
  const HttpAnswer answer = request("other", http::verb::put, std::string(vmi_path) + "/pause");
  EXPECT_EQ(answer.status, 403U) << answer.error;
  EXPECT_EQ(answer.body, R"({"message":"the client certificate's subject must be CN=vmgate-subresources"})");
}

TEST_F(SubresourceServerTest, PauseAndUnpauseReachTheLauncher) {
  start_server();
  HttpAnswer answer = request("serve", http::verb::put, std::string(vmi_path) + "/pause");
  EXPECT_EQ(answer.status, 200U) << answer.error;
  EXPECT_EQ(answer.body, "{}");
  answer = request("serve", http::verb::put, std::string(vmi_path) + "/unpause");
  EXPECT_EQ(answer.status, 409U) << answer.error;
  EXPECT_EQ(answer.body, R"({"message":"domain is not paused"})");
}

// The Secret is updated (a new CA and pair): new connections use the new files at once.
TEST_F(SubresourceServerTest, ReplacedFilesAreUsedByNewConnections) {
  start_server();
  EXPECT_EQ(request("serve", http::verb::put, std::string(vmi_path) + "/pause").status, 200U);
  const fs::path d = dir_.path();
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes ";
  ASSERT_TRUE(run("openssl req -x509" + ec + "-keyout " + (d / "ca2.key").string() + " -out " +
                  (d / "ca2.crt").string() + " -days 1 -subj /CN=test-ca-2"));
  for (const auto& [name, cn] : {std::pair{"server2", "node0"}, std::pair{"serve2", "vmgate-subresources"}}) {
    ASSERT_TRUE(run("openssl req -new" + ec + "-keyout " + (d / (std::string(name) + ".key")).string() + " -out " +
                    (d / (std::string(name) + ".csr")).string() + " -subj /CN=" + cn));
    ASSERT_TRUE(run("openssl x509 -req -in " + (d / (std::string(name) + ".csr")).string() + " -CA " +
                    (d / "ca2.crt").string() + " -CAkey " + (d / "ca2.key").string() +
                    " -CAcreateserial -days 1 -out " + (d / (std::string(name) + ".crt")).string()));
  }
  // As the kubelet updates a Secret volume: each file replaced whole.
  for (const auto& [from, to] : {std::pair{"server2.crt", "server.crt"}, std::pair{"server2.key", "server.key"},
                                 std::pair{"ca2.crt", "ca.crt"}}) {
    fs::copy_file(d / from, d / (std::string(to) + ".new"));
    fs::rename(d / (std::string(to) + ".new"), d / to);
  }
  // The test's client trusts ca.crt, now the new CA, which signed the new server certificate.
  EXPECT_EQ(request("serve2", http::verb::put, std::string(vmi_path) + "/pause").status, 200U);
  const HttpAnswer old = request("serve", http::verb::put, std::string(vmi_path) + "/pause");
  EXPECT_EQ(old.status, 0U) << old.body;
  EXPECT_NE(log_text_.str().find("subresource certificate reloaded"), std::string::npos);
}

TEST_F(SubresourceServerTest, AnotherVmiOrUidIsNotFound) {
  start_server();
  HttpAnswer answer =
      request("serve", http::verb::put, std::string(vmi_path) + "/pause", "00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(answer.status, 404U) << answer.error;
  EXPECT_EQ(answer.body,
            R"({"message":"no launcher of VMI tenant/vm1 (uid 00000000-0000-4000-8000-000000000000) on this node"})");
  answer = request("serve", http::verb::put, "/v1/namespaces/other/virtualmachineinstances/vm1/pause");
  EXPECT_EQ(answer.status, 404U) << answer.error;
  answer = request("serve", http::verb::put, std::string(vmi_path) + "/pause", "");
  EXPECT_EQ(answer.status, 400U) << answer.error;
}

TEST_F(SubresourceServerTest, ASilentLauncherTimesOut) {
  start_server(true);
  const HttpAnswer answer = request("serve", http::verb::put, std::string(vmi_path) + "/pause");
  EXPECT_EQ(answer.status, 504U) << answer.error;
  EXPECT_EQ(answer.body, R"({"message":"the launcher of VMI tenant/vm1 did not answer within 700 ms"})");
}

TEST_F(SubresourceServerTest, ASymlinkIsNotFollowed) {
  start_server();
  // The tenant replaces the control socket by a link to the serial socket (it could name a node socket).
  fs::remove(private_dir_ / kube::pod_paths::control_socket_name);
  fs::create_symlink(private_dir_ / kube::pod_paths::serial_socket_name,
                     private_dir_ / kube::pod_paths::control_socket_name);
  const HttpAnswer answer = request("serve", http::verb::put, std::string(vmi_path) + "/pause");
  EXPECT_EQ(answer.status, 502U) << answer.error;
  EXPECT_NE(answer.body.find("vmgate-control.sock is not a socket"), std::string::npos) << answer.body;
}

// A WebSocket client as vmgate serve: the upgrade, then binary frames.
struct ConsoleClient {
  asio::io_context io;
  asio::ssl::context context;
  websocket::stream<beast::ssl_stream<beast::tcp_stream>> ws;
  websocket::response_type response;

  ConsoleClient(asio::ssl::context ctx) : context(std::move(ctx)), ws(io, context) {}

  beast::error_code open(std::uint16_t port) {
    beast::error_code error;
    beast::get_lowest_layer(ws).expires_after(std::chrono::seconds(10));
    beast::get_lowest_layer(ws).connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), error);
    if (!error) {
      ws.next_layer().handshake(asio::ssl::stream_base::client, error);
    }
    if (error) {
      return error;
    }
    beast::get_lowest_layer(ws).expires_never();
    ws.set_option(websocket::stream_base::decorator([](websocket::request_type& request) {
      request.set("X-Vmgate-Vmi-Uid", vmi_uid);
      request.set(http::field::sec_websocket_protocol, "plain.kubevirt.io");
    }));
    ws.handshake(response, "node0", std::string(vmi_path) + "/console", error);
    ws.binary(true);
    return error;
  }

  // Reads until `want` has been seen (or an error), 10 s at most.
  std::string read_until(std::string_view want, beast::error_code& error) {
    std::string seen;
    beast::flat_buffer buffer;
    while (seen.find(want) == std::string::npos) {
      ws.read(buffer, error);
      if (error) {
        break;
      }
      seen += beast::buffers_to_string(buffer.data());
      buffer.consume(buffer.size());
    }
    return seen;
  }
};

TEST_F(SubresourceServerTest, ConsoleRelaysBothWaysAndClosesCleanly) {
  start_server();
  ConsoleClient console(client_context("serve"));
  ASSERT_FALSE(console.open(server_->port())) << log_text_.str();
  EXPECT_EQ(console.response[http::field::sec_websocket_protocol], "plain.kubevirt.io");
  beast::error_code error;
  EXPECT_NE(console.read_until("GUEST-READY\n", error).find("GUEST-READY"), std::string::npos) << error.message();
  console.ws.write(asio::buffer(std::string("echo me\n")), error);
  ASSERT_FALSE(error);
  EXPECT_NE(console.read_until("echo me\n", error).find("echo me\n"), std::string::npos) << error.message();

  // One console per VMI: a second one is refused while the first is open.
  ConsoleClient second(client_context("serve"));
  const beast::error_code refused = second.open(server_->port());
  EXPECT_TRUE(refused);
  EXPECT_EQ(second.response.result_int(), 409U);

  // The guest side hangs up: the client gets a close frame (normal).
  console.ws.write(asio::buffer(std::string("bye")), error);
  console.read_until("never", error);
  EXPECT_EQ(error, websocket::error::closed) << error.message();
  EXPECT_EQ(console.ws.reason().code, websocket::close_code::normal);

  // The console is free again; this time the client closes, and the serial socket sees its EOF.
  ConsoleClient third(client_context("serve"));
  ASSERT_FALSE(third.open(server_->port())) << log_text_.str();
  third.read_until("GUEST-READY\n", error);
  ASSERT_FALSE(error);
  const int before = launcher_->serial_eofs.load();
  third.ws.close(websocket::close_code::normal, error);
  EXPECT_FALSE(error) << error.message();
  for (int i = 0; i < 100 && launcher_->serial_eofs.load() == before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(launcher_->serial_eofs.load(), before + 1);
}

TEST_F(SubresourceServerTest, ConsoleNeedsTheRightClientToo) {
  start_server();
  ConsoleClient console(client_context("other"));
  EXPECT_TRUE(console.open(server_->port()));
  EXPECT_EQ(console.response.result_int(), 403U);
}

TEST(ConnectPodSocket, RefusesWhatIsNotASocket) {
  vmgate::testing::TemporaryDirectory dir;
  EXPECT_NE(connect_pod_socket((dir.path() / "missing").string(), "x").error().message.find("no such pod directory"),
            std::string::npos);
  EXPECT_NE(connect_pod_socket(dir.path().string(), "x").error().message.find("no socket x"), std::string::npos);
  vmgate::testing::write_text(dir.path() / "file", "x");
  EXPECT_NE(connect_pod_socket(dir.path().string(), "file").error().message.find("file is not a socket"),
            std::string::npos);
  // A socket nobody listens on any more.
  const int fd = listen_at(dir.path() / "dead", dir.path());
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_FALSE(connect_pod_socket(dir.path().string(), "dead").ok());
}

TEST(SubresourceServerStart, RefusesUnusableFiles) {
  vmgate::testing::TemporaryDirectory dir;
  std::ostringstream text;
  EventLog log(text);
  SubresourceConfig config;
  config.listen = {"127.0.0.1", 0};
  config.tls_cert = (dir.path() / "missing.crt").string();
  config.tls_key = (dir.path() / "missing.key").string();
  config.client_ca = (dir.path() / "missing-ca.crt").string();
  Result<std::unique_ptr<SubresourceServer>> started = SubresourceServer::start(config, {}, log);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("--subresource-tls-cert"), std::string::npos) << started.error().message;
}

}  // namespace
}  // namespace vmgate::node
