// serve::TlsStream and its TlsChannel against a real OpenSSL client over loopback TCP: the
// server side runs on an io_context in the test's thread, the client blocks in its own.
#include "vmgate/server/tls_stream.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/serve/serve_test_support.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::serve {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;
using testing::TemporaryDirectory;
using testing::TestPki;

// A blocking TLS client on a connected socket; verification off (the server is the subject).
class Client {
 public:
  explicit Client(std::uint16_t port, int max_version = 0) : context_(SSL_CTX_new(TLS_client_method())) {
    SSL_CTX_set_max_proto_version(context_.get(), max_version);
    socket_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(socket_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    ssl_.reset(SSL_new(context_.get()));
    SSL_set_fd(ssl_.get(), socket_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() { ::close(socket_); }

  bool connected() const { return connected_; }
  bool handshake() { return SSL_connect(ssl_.get()) == 1; }
  bool write(std::string_view data) {
    std::size_t written = 0;
    return SSL_write_ex(ssl_.get(), data.data(), data.size(), &written) == 1 && written == data.size();
  }
  // Reads exactly `size` bytes, or what came before the end.
  std::string read(std::size_t size) {
    std::string out(size, '\0');
    std::size_t at = 0;
    while (at < size) {
      std::size_t got = 0;
      if (SSL_read_ex(ssl_.get(), out.data() + at, size - at, &got) != 1) {
        break;
      }
      at += got;
    }
    out.resize(at);
    return out;
  }
  // The server's close_notify read (SSL_read ends with SSL_ERROR_ZERO_RETURN).
  bool reads_close_notify() {
    char byte = 0;
    std::size_t got = 0;
    return SSL_read_ex(ssl_.get(), &byte, 1, &got) != 1 && SSL_get_error(ssl_.get(), 0) == SSL_ERROR_ZERO_RETURN;
  }
  void close_notify() { SSL_shutdown(ssl_.get()); }
  void send_plain(std::string_view data) const { (void)::send(socket_, data.data(), data.size(), MSG_NOSIGNAL); }
  void close_socket() {
    ::close(socket_);
    socket_ = -1;
  }

 private:
  kube::SslCtxPtr context_;
  SslPtr ssl_;
  int socket_ = -1;
  bool connected_ = false;
};

// A listener on 127.0.0.1, the server context, and a TlsStream per accepted connection.
class TlsStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TestPki pki(directory_.path());
    const auto [certificate, key] = pki.issue("serving");
    Result<tls::ServerContext> loaded =
        tls::load_server_context(tls::ServerFiles{certificate, key, {}}, TlsProfile::intermediate);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    context_ = loaded->context;
    method_ = TlsChannel::make_bio_method();
    ASSERT_NE(method_, nullptr);
    acceptor_.open(tcp::v4());
    acceptor_.bind(tcp::endpoint(net::ip::address_v4::loopback(), 0));
    acceptor_.listen();
  }

  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

  // Accepts the client's connection (already in the backlog: connect(2) returned).
  TlsStream& accept() {
    stream_.emplace(acceptor_.accept(), context_.get(), method_.get());
    return *stream_;
  }

  // Runs the io_context until `done` says so, or fails after ten seconds. (A stream's armed
  // deadline stays pending: the io_context does not run out of work.)
  template <class Done>
  void run_until(Done done) {
    io_.restart();
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds{10};
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.run_one_for(std::chrono::milliseconds{100});
    }
    EXPECT_TRUE(done()) << "not done after ten seconds";
  }

  // Handshake with a client thread; true when both sides succeeded.
  bool handshake(Client& client) {
    TlsStream& stream = accept();
    std::optional<error_code> server_result;
    stream.async_handshake([&](error_code error) { server_result = error; });
    bool client_ok = false;
    std::thread peer([&] { client_ok = client.handshake(); });
    run_until([&] { return server_result.has_value(); });
    peer.join();
    return client_ok && server_result == error_code();
  }

  TemporaryDirectory directory_;
  std::shared_ptr<SSL_CTX> context_;
  BioMethodPtr method_;
  net::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::optional<TlsStream> stream_;
};

TEST_F(TlsStreamTest, CarriesManyRecordsBothWays) {
  Client client(port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(handshake(client));
  TlsStream& stream = *stream_;

  // 4 MiB: hundreds of records each way, more than the socket buffers hold while the other
  // side is not reading, so the stream keeps what the socket did not take and sends it later.
  std::string message(std::size_t{4} << 20U, '\0');
  for (std::size_t i = 0; i < message.size(); ++i) {
    message[i] = static_cast<char>('a' + (i * 7919) % 26);
  }
  std::string received;
  std::vector<char> chunk(16384);
  std::optional<error_code> read_result;
  std::function<void()> read_more = [&] {
    stream.async_read_some(net::buffer(chunk), [&](error_code error, std::size_t bytes) {
      if (error) {
        read_result = error;
        return;
      }
      received.append(chunk.data(), bytes);
      if (received.size() < message.size()) {
        read_more();
        return;
      }
      read_result = error_code();
    });
  };
  read_more();
  bool client_wrote = false;
  std::thread writer([&] { client_wrote = client.write(message); });
  run_until([&] { return read_result.has_value(); });
  writer.join();
  ASSERT_TRUE(client_wrote);
  ASSERT_EQ(read_result, error_code());
  EXPECT_TRUE(received == message) << "the bytes read differ from the bytes written";

  std::optional<std::pair<error_code, std::size_t>> write_result;
  stream.async_write(net::buffer(message),
                     [&](error_code error, std::size_t bytes) { write_result.emplace(error, bytes); });
  std::string echoed;
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds{100});  // let the socket fill up first
    echoed = client.read(message.size());
  });
  run_until([&] { return write_result.has_value(); });
  reader.join();
  ASSERT_TRUE(write_result.has_value());
  EXPECT_EQ(write_result->first, error_code());
  EXPECT_EQ(write_result->second, message.size());
  EXPECT_TRUE(echoed == message) << "the client read " << echoed.size() << " bytes, not the ones written";
}

TEST_F(TlsStreamTest, ServesTls12) {
  Client client(port(), TLS1_2_VERSION);
  ASSERT_TRUE(handshake(client));
  EXPECT_EQ(SSL_version(stream_->native_handle()), TLS1_2_VERSION);
  std::optional<std::pair<error_code, std::size_t>> written;
  stream_->async_write(net::buffer("hello", 5),
                       [&](error_code error, std::size_t bytes) { written.emplace(error, bytes); });
  std::string read;
  std::thread peer([&] { read = client.read(5); });
  run_until([&] { return written.has_value(); });
  peer.join();
  EXPECT_EQ(written->first, error_code());
  EXPECT_EQ(read, "hello");
}

TEST_F(TlsStreamTest, TheEndOfTheStreamIsEofWithACloseNotifyAndTruncatedWithout) {
  // What a read reports once the client has ended the connection its way.
  auto read_after = [this](void (*end)(Client&)) {
    Client client(port());
    EXPECT_TRUE(handshake(client));
    end(client);
    std::optional<error_code> result;
    std::vector<char> chunk(64);
    stream_->async_read_some(net::buffer(chunk), [&](error_code error, std::size_t) { result = error; });
    run_until([&] { return result.has_value(); });
    return result.value_or(error_code());
  };
  EXPECT_EQ(read_after([](Client& client) { client.close_notify(); }), net::error::eof);
  EXPECT_EQ(read_after([](Client& client) { client.close_socket(); }), net::ssl::error::stream_truncated);
}

TEST_F(TlsStreamTest, ShutdownSendsACloseNotifyAndWaitsForThePeers) {
  Client client(port());
  ASSERT_TRUE(handshake(client));
  std::optional<error_code> result;
  stream_->async_shutdown([&](error_code error) { result = error; });
  bool client_saw_it = false;
  std::thread peer([&] {
    client_saw_it = client.reads_close_notify();
    client.close_notify();
  });
  run_until([&] { return result.has_value(); });
  peer.join();
  EXPECT_TRUE(client_saw_it);
  EXPECT_EQ(result, error_code());
}

TEST_F(TlsStreamTest, APassedDeadlineClosesTheSocketAndTheOperationTimesOut) {
  Client client(port());
  ASSERT_TRUE(handshake(client));
  TlsStream& stream = *stream_;
  stream.expires_at(std::chrono::steady_clock::now() + std::chrono::milliseconds{100});
  std::optional<error_code> result;
  std::vector<char> chunk(64);
  const auto started = std::chrono::steady_clock::now();
  stream.async_read_some(net::buffer(chunk), [&](error_code error, std::size_t) { result = error; });
  run_until([&] { return result.has_value(); });
  EXPECT_EQ(result, boost::beast::error::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds{100});
  EXPECT_FALSE(stream.socket().is_open());
}

TEST_F(TlsStreamTest, ADeadlinePassedBetweenOperationsFailsTheNextOneAndALaterOneDoesNot) {
  Client client(port());
  ASSERT_TRUE(handshake(client));
  TlsStream& stream = *stream_;
  // Moved later while armed: the earlier expiry must not end the operation.
  stream.expires_at(std::chrono::steady_clock::now() + std::chrono::milliseconds{50});
  stream.expires_at(std::chrono::steady_clock::now() + std::chrono::seconds{30});
  std::optional<std::pair<error_code, std::size_t>> read;
  std::vector<char> chunk(64);
  stream.async_read_some(net::buffer(chunk), [&](error_code error, std::size_t bytes) { read.emplace(error, bytes); });
  std::thread peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
    client.write("ping");
  });
  run_until([&] { return read.has_value(); });
  peer.join();
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->first, error_code());
  EXPECT_EQ(std::string(chunk.data(), read->second), "ping");

  // Passed while nothing was pending: the socket stays open, the next operation fails.
  stream.expires_at(std::chrono::steady_clock::now() + std::chrono::milliseconds{20});
  std::this_thread::sleep_for(std::chrono::milliseconds{50});
  io_.restart();
  io_.poll();  // the expired wait's completion
  EXPECT_TRUE(stream.socket().is_open());
  std::optional<error_code> write_result;
  stream.async_write(net::buffer("pong", 4), [&](error_code error, std::size_t) { write_result = error; });
  run_until([&] { return write_result.has_value(); });
  EXPECT_EQ(write_result, boost::beast::error::timeout);
}

TEST_F(TlsStreamTest, PlainHttpFailsTheHandshakeWithOpenSslsReason) {
  Client client(port());
  client.send_plain("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  std::optional<error_code> result;
  accept().async_handshake([&](error_code error) { result = error; });
  run_until([&] { return result.has_value(); });
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->category(), net::error::get_ssl_category());
  EXPECT_EQ(ERR_GET_REASON(static_cast<unsigned long>(result->value())), SSL_R_HTTP_REQUEST);
}

TEST_F(TlsStreamTest, ACompletionNeverRunsInsideTheCallThatStartedIt) {
  Client client(port());
  ASSERT_TRUE(handshake(client));
  TlsStream& stream = *stream_;
  ASSERT_TRUE(client.write("abcdef"));
  std::vector<char> chunk(3);
  std::string received;
  bool inside = false;  // the second read's call is running
  // The first read waits for the socket; the second finds its bytes already decrypted.
  stream.async_read_some(net::buffer(chunk), [&](error_code error, std::size_t bytes) {
    ASSERT_FALSE(error);
    received.append(chunk.data(), bytes);
    inside = true;
    stream.async_read_some(net::buffer(chunk), [&](error_code second, std::size_t more) {
      EXPECT_FALSE(inside) << "completed inside async_read_some";
      EXPECT_FALSE(second);
      received.append(chunk.data(), more);
    });
    inside = false;
  });
  run_until([&] { return received.size() == 6; });
  EXPECT_EQ(received, "abcdef");
}

}  // namespace
}  // namespace vmgate::serve
