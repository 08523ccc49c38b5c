// The Kubernetes API connection (api_client.hpp). Each call runs Asio's asynchronous operations
// on the connection's own io_context until they complete: Beast's tcp_stream deadlines then bound
// every step (resolve, connect, handshake, write, each read), and cancel() can interrupt a
// blocked call from another thread by posting to that io_context.
#include "vmgate/kube/api_client.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <fstream>
#include <optional>
#include <sstream>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/openssl_handles.hpp"

namespace vmgate::kube {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) {
    return "no details from OpenSSL";
  }
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return text.data();
}

BioPtr memory_bio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::vector<X509Ptr> read_certificates(const std::string& pem) {
  std::vector<X509Ptr> certificates;
  BioPtr bio = memory_bio(pem);
  while (bio != nullptr) {
    X509Ptr certificate(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (certificate == nullptr) {
      break;
    }
    certificates.push_back(std::move(certificate));
  }
  ERR_clear_error();  // the end of the bundle reads as an error
  return certificates;
}

Status configure_tls(ssl::context& context, const ClientConfig& config) {
  SSL_CTX* native = context.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  static constexpr unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(native, alpn, sizeof(alpn));
  if (config.insecure_skip_tls_verify) {
    SSL_CTX_set_verify(native, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
    if (config.ca_pem.empty()) {
      if (SSL_CTX_set_default_verify_paths(native) != 1) {
        return Error{"cannot load the system's trusted certificates: " + openssl_reason()};
      }
    } else {
      std::vector<X509Ptr> authorities = read_certificates(config.ca_pem);
      if (authorities.empty()) {
        return Error{"certificate authority: no PEM certificate in it"};
      }
      X509_STORE* store = SSL_CTX_get_cert_store(native);
      for (const X509Ptr& authority : authorities) {
        if (X509_STORE_add_cert(store, authority.get()) != 1) {
          ERR_clear_error();  // a duplicate in the bundle
        }
      }
    }
  }
  if (!config.client_certificate_pem.empty()) {
    std::vector<X509Ptr> chain = read_certificates(config.client_certificate_pem);
    if (chain.empty()) {
      return Error{"client certificate: no PEM certificate in it"};
    }
    if (SSL_CTX_use_certificate(native, chain.front().get()) != 1) {
      return Error{"client certificate: " + openssl_reason()};
    }
    for (std::size_t i = 1; i < chain.size(); ++i) {
      if (SSL_CTX_add1_chain_cert(native, chain[i].get()) != 1) {
        return Error{"client certificate chain: " + openssl_reason()};
      }
    }
    BioPtr bio = memory_bio(config.client_key_pem);
    EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (key == nullptr) {
      return Error{"client key: not a PEM private key: " + openssl_reason()};
    }
    if (SSL_CTX_use_PrivateKey(native, key.get()) != 1 || SSL_CTX_check_private_key(native) != 1) {
      return Error{"client key: does not match the client certificate: " + openssl_reason()};
    }
  }
  return Ok{};
}

bool is_ip_address(const std::string& host) {
  error_code error;
  net::ip::make_address(host, error);
  return !error;
}

}  // namespace

struct ApiConnection::Impl {
  ClientConfig config;
  ssl::context tls{ssl::context::tls_client};
  net::io_context io{1};
  std::optional<beast::ssl_stream<beast::tcp_stream>> stream;
  beast::flat_buffer buffer;
  std::atomic<bool> cancelled{false};
  // The token file's last seen modification time and content.
  struct timespec token_stamp {};
  std::string token_from_file;

  // Runs the io_context until the started operation completes. cancel() sets the flag before it
  // posts the cancellation, so a cancellation whose handler already ran while nothing of this
  // step was pending (during a resolve, or between two steps) is seen here instead of being lost
  // and leaving the step to its deadline (a hanging watch: 30 s).
  void run() {
    io.restart();
    if (cancelled.load()) {
      abandon_socket();
    }
    io.run();
  }

  // Cancellation closes the socket rather than cancelling its pending operations: a TLS read can
  // complete its socket read speculatively (bytes already waiting, such as session tickets), so a
  // cancel that finds nothing registered in the reactor would miss the socket read the TLS layer
  // starts next, and that one would wait out its deadline. On a closed socket every later step
  // fails at once; a cancelled connection is never used again.
  void abandon_socket() {
    if (stream) {
      beast::get_lowest_layer(*stream).close();  // the socket and the deadline's timer
    }
  }

  TransportError failure(std::string_view step, const error_code& error) const {
    TransportError result;
    result.cancelled = cancelled.load();
    result.timed_out = error == beast::error::timeout;
    result.message = std::string(step) + " " + config.server + ": " +
                     (result.cancelled   ? std::string("cancelled")
                      : result.timed_out ? std::string("timed out")
                                         : error.message());
    return result;
  }

  void close() {
    if (stream) {
      error_code ignored;
      beast::get_lowest_layer(*stream).socket().close(ignored);
      stream.reset();
    }
    buffer.clear();
  }

  std::optional<TransportError> connect(std::chrono::milliseconds deadline) {
    close();
    if (cancelled.load()) {
      return TransportError{"connect " + config.server + ": cancelled", false, true};
    }
    stream.emplace(io, tls);
    const std::string& verified_name = config.tls_server_name.empty() ? config.host : config.tls_server_name;
    SSL* native = stream->native_handle();
    if (!config.insecure_skip_tls_verify) {
      if (is_ip_address(verified_name)) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native), verified_name.c_str());
      } else {
        SSL_set1_host(native, verified_name.c_str());
      }
    }
    if (!is_ip_address(verified_name)) {
      // SSL_set_tlsext_host_name, without the macro's C cast.
      SSL_ctrl(native, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(verified_name.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }
    error_code error = net::error::would_block;
    tcp::resolver resolver(io);
    tcp::resolver::results_type endpoints;
    resolver.async_resolve(config.host, std::to_string(config.port),
                           [&](const error_code& e, tcp::resolver::results_type results) {
                             error = e;
                             endpoints = std::move(results);
                           });
    run();
    if (error) {
      return failure("resolve", error);
    }
    beast::tcp_stream& socket = beast::get_lowest_layer(*stream);
    socket.expires_after(deadline);
    error = net::error::would_block;
    socket.async_connect(endpoints, [&](const error_code& e, const tcp::endpoint&) { error = e; });
    run();
    if (error) {
      return failure("connect", error);
    }
    socket.expires_after(deadline);
    error = net::error::would_block;
    stream->async_handshake(ssl::stream_base::client, [&](const error_code& e) { error = e; });
    run();
    if (error) {
      TransportError result = failure("TLS handshake with", error);
      const long verified = SSL_get_verify_result(native);
      if (verified != X509_V_OK) {
        result.message += " (certificate verification: " + std::string(X509_verify_cert_error_string(verified)) + ")";
      }
      return result;
    }
    return std::nullopt;
  }

  std::string token() {
    if (!config.bearer_token.empty() || config.token_file.empty()) {
      return config.bearer_token;
    }
    struct stat status {};
    if (::stat(config.token_file.c_str(), &status) == 0 &&
        (status.st_mtim.tv_sec != token_stamp.tv_sec || status.st_mtim.tv_nsec != token_stamp.tv_nsec ||
         token_from_file.empty())) {
      std::ifstream file(config.token_file, std::ios::binary);
      std::ostringstream content;
      content << file.rdbuf();
      std::string text = content.str();
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
        text.pop_back();
      }
      if (!text.empty()) {  // a rotation caught half-written keeps the previous token
        token_from_file = std::move(text);
        token_stamp = status.st_mtim;
      }
    }
    return token_from_file;
  }

  http::request<http::string_body> request(http::verb method, std::string_view target, std::string_view body = {},
                                           std::string_view content_type = {}) {
    http::request<http::string_body> request{method, config.base_path + std::string(target), 11};
    request.set(http::field::host, config.host + ":" + std::to_string(config.port));
    request.set(http::field::user_agent, "vmgate");
    request.set(http::field::accept, "application/json");
    request.keep_alive(true);
    if (const std::string bearer = token(); !bearer.empty()) {
      request.set(http::field::authorization, "Bearer " + bearer);
    }
    if (!body.empty() || !content_type.empty()) {
      request.set(http::field::content_type, content_type);
      request.body() = std::string(body);
      request.prepare_payload();
    }
    return request;
  }

  std::optional<TransportError> write(const http::request<http::string_body>& request,
                                      std::chrono::milliseconds deadline) {
    beast::get_lowest_layer(*stream).expires_after(deadline);
    error_code error = net::error::would_block;
    http::async_write(*stream, request, [&](const error_code& e, std::size_t) { error = e; });
    run();
    if (error) {
      return failure("write to", error);
    }
    return std::nullopt;
  }
};

ApiConnection::ApiConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiConnection::~ApiConnection() {
  if (impl_) {
    impl_->close();
  }
}

Result<std::unique_ptr<ApiConnection>> ApiConnection::create(const ClientConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  if (Status configured = configure_tls(impl->tls, config); !configured) {
    return Error{config.origin + ": " + configured.error().message};
  }
  return std::unique_ptr<ApiConnection>(new ApiConnection(std::move(impl)));
}

const ClientConfig& ApiConnection::config() const {
  return impl_->config;
}

void ApiConnection::cancel() {
  impl_->cancelled.store(true);
  net::post(impl_->io, [impl = impl_.get()] { impl->abandon_socket(); });
}

Result<HttpResponse, TransportError> ApiConnection::get(std::string_view target, std::chrono::milliseconds deadline,
                                                        std::size_t max_body_bytes) {
  return request("GET", target, {}, {}, deadline, max_body_bytes);
}

Result<HttpResponse, TransportError> ApiConnection::request(std::string_view method, std::string_view target,
                                                            std::string_view body, std::string_view content_type,
                                                            std::chrono::milliseconds deadline,
                                                            std::size_t max_body_bytes) {
  Impl& impl = *impl_;
  const std::string what = std::string(method) + " " + std::string(target);
  const http::verb verb = http::string_to_verb(method);
  if (verb != http::verb::get && verb != http::verb::put && verb != http::verb::patch && verb != http::verb::post &&
      verb != http::verb::delete_) {
    return TransportError{what + ": not a method of the Kubernetes API (GET, PUT, PATCH, POST, DELETE)", false, false};
  }
  // Sent again on a new connection after a kept-alive one turned out closed only when the
  // server cannot have applied it, or applying it twice is applying it once.
  const bool idempotent = verb == http::verb::get || verb == http::verb::put || verb == http::verb::delete_;
  if (impl.cancelled.load()) {
    return TransportError{what + ": cancelled", false, true};
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = impl.stream.has_value();
    if (!reused) {
      if (std::optional<TransportError> failed = impl.connect(deadline)) {
        impl.close();
        return *failed;
      }
    }
    if (std::optional<TransportError> failed = impl.write(impl.request(verb, target, body, content_type), deadline)) {
      impl.close();
      if (reused && !failed->cancelled && !failed->timed_out) {
        continue;  // the server closed the kept-alive connection: once more on a new one
      }
      return *failed;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(max_body_bytes);
    beast::get_lowest_layer(*impl.stream).expires_after(deadline);
    error_code error = net::error::would_block;
    http::async_read(*impl.stream, impl.buffer, parser, [&](const error_code& e, std::size_t) { error = e; });
    impl.run();
    if (error) {
      const bool closed_before_answer =
          error == http::error::end_of_stream || error == net::error::eof || error == net::error::connection_reset;
      impl.close();
      if (reused && idempotent && closed_before_answer && !impl.cancelled.load()) {
        continue;
      }
      if (error == http::error::body_limit) {
        return TransportError{what + ": response larger than " + std::to_string(max_body_bytes) + " bytes", false,
                              false};
      }
      return impl.failure("read from", error);
    }
    HttpResponse response{parser.get().result_int(), std::move(parser.get().body())};
    if (!parser.get().keep_alive()) {
      impl.close();
    }
    return response;
  }
  return TransportError{what + ": connection closed twice", false, false};
}

Result<ApiConnection::Streamed, TransportError> ApiConnection::stream(
    std::string_view target, std::chrono::milliseconds connect_deadline, std::chrono::milliseconds idle,
    const std::function<bool(std::string_view line)>& on_line, const std::function<void()>& after_lines,
    std::size_t max_line_bytes) {
  Impl& impl = *impl_;
  // A watch holds its connection until the server ends it: always a fresh one, closed after.
  if (std::optional<TransportError> failed = impl.connect(connect_deadline)) {
    impl.close();
    return *failed;
  }
  struct CloseAfter {
    Impl& impl;
    ~CloseAfter() { impl.close(); }
  } close_after{impl};
  if (std::optional<TransportError> failed = impl.write(impl.request(http::verb::get, target), connect_deadline)) {
    return *failed;
  }
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  beast::get_lowest_layer(*impl.stream).expires_after(connect_deadline);
  error_code error = net::error::would_block;
  http::async_read_header(*impl.stream, impl.buffer, parser, [&](const error_code& e, std::size_t) { error = e; });
  impl.run();
  if (error) {
    return impl.failure("read from", error);
  }
  const unsigned status = parser.get().result_int();
  std::array<char, std::size_t{64} * 1024> chunk{};
  std::string pending;
  std::string refused_body;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    beast::get_lowest_layer(*impl.stream).expires_after(status == 200 ? idle : connect_deadline);
    error = net::error::would_block;
    // read_some: hand over what has arrived; async_read would wait until the chunk buffer is
    // full, holding back a small watch event until 64 KiB of others follow it.
    http::async_read_some(*impl.stream, impl.buffer, parser, [&](const error_code& e, std::size_t) { error = e; });
    impl.run();
    if (error == http::error::need_buffer) {
      error = {};
    }
    if (error) {
      TransportError failed = impl.failure("read from", error);
      failed.after_response = status == 200;
      return failed;
    }
    const std::size_t received = chunk.size() - parser.get().body().size;
    if (status != 200) {
      if (refused_body.size() < (std::size_t{1} << 20U)) {
        refused_body.append(chunk.data(), received);
      }
      continue;
    }
    pending.append(chunk.data(), received);
    std::size_t start = 0;
    for (std::size_t newline = pending.find('\n'); newline != std::string::npos; newline = pending.find('\n', start)) {
      if (!on_line(std::string_view(pending).substr(start, newline - start))) {
        return Streamed{StreamEnd::stopped, std::nullopt};
      }
      start = newline + 1;
    }
    if (start > 0 && after_lines) {
      after_lines();
    }
    pending.erase(0, start);
    if (pending.size() > max_line_bytes) {
      return TransportError{
          "GET " + std::string(target) + ": a line longer than " + std::to_string(max_line_bytes) + " bytes", false,
          false};
    }
  }
  if (status != 200) {
    return Streamed{StreamEnd::completed, HttpResponse{status, std::move(refused_body)}};
  }
  if (!pending.empty()) {
    if (!on_line(pending)) {
      return Streamed{StreamEnd::stopped, std::nullopt};
    }
    if (after_lines) {
      after_lines();
    }
  }
  return Streamed{StreamEnd::completed, std::nullopt};
}

Result<ApiConnection::Relayed, TransportError> ApiConnection::relay_websocket(
    std::string_view target, std::string_view subprotocol, int in_fd, int out_fd, std::optional<unsigned char> escape,
    std::chrono::milliseconds connect_deadline, const std::function<void()>& on_open) {
  Impl& impl = *impl_;
  if (std::optional<TransportError> failed = impl.connect(connect_deadline)) {
    return *failed;
  }
  using WebSocket = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;
  WebSocket ws(std::move(*impl.stream));
  impl.stream.reset();
  const std::string bearer = impl.token();
  const std::string protocol(subprotocol);
  ws.set_option(websocket::stream_base::decorator([&bearer, &protocol](websocket::request_type& request) {
    request.set(http::field::user_agent, "vmgate");
    if (!bearer.empty()) {
      request.set(http::field::authorization, "Bearer " + bearer);
    }
    if (!protocol.empty()) {
      request.set(http::field::sec_websocket_protocol, protocol);
    }
  }));
  websocket::response_type answer;
  beast::get_lowest_layer(ws).expires_after(connect_deadline);
  error_code error = net::error::would_block;
  ws.async_handshake(answer, impl.config.host + ":" + std::to_string(impl.config.port),
                     impl.config.base_path + std::string(target), [&](const error_code& e) { error = e; });
  impl.run();
  beast::get_lowest_layer(ws).expires_never();
  if (error) {
    if (answer.result_int() != 0 && answer.result_int() != 101) {
      Relayed refused;
      refused.refused = HttpResponse{answer.result_int(), answer.body()};
      return refused;
    }
    return impl.failure("WebSocket handshake with", error);
  }
  ws.binary(true);
  if (on_open) {
    on_open();
  }

  // stdin is read by a thread of its own (a file cannot be polled by Asio), one chunk at a time:
  // the next read waits until the WebSocket has sent the previous chunk.
  int wake[2] = {-1, -1};
  if (::pipe(wake) != 0) {
    return TransportError{"pipe: " + std::string(std::strerror(errno)), false, false};
  }
  std::mutex mutex;
  std::condition_variable sent;
  bool sending = false;
  std::atomic<bool> finished{false};
  Relayed relayed;
  const auto finish = [&] {
    if (finished.exchange(true)) {
      return;
    }
    {
      const std::lock_guard<std::mutex> lock(mutex);
      sending = false;
    }
    sent.notify_all();
    const char byte = 0;
    [[maybe_unused]] const ssize_t woke = ::write(wake[1], &byte, 1);
    if (ws.is_open()) {
      ws.async_close(websocket::close_code::normal, [](const error_code&) {});
    }
  };
  std::thread reader([&] {
    std::array<char, 4096> chunk{};
    for (;;) {
      std::array<pollfd, 2> fds{pollfd{in_fd, POLLIN, 0}, pollfd{wake[0], POLLIN, 0}};
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) {
        break;
      }
      if ((fds[1].revents & POLLIN) != 0) {
        return;  // the relay ended
      }
      if (fds[0].revents == 0) {
        continue;
      }
      const ssize_t got = ::read(in_fd, chunk.data(), chunk.size());
      if (got < 0 && errno == EINTR) {
        continue;
      }
      std::size_t length = got > 0 ? static_cast<std::size_t>(got) : 0;
      bool escaped = false;
      if (escape) {
        for (std::size_t i = 0; i < length; ++i) {
          if (static_cast<unsigned char>(chunk[i]) == *escape) {
            length = i;
            escaped = true;
            break;
          }
        }
      }
      if (length > 0) {
        {
          const std::lock_guard<std::mutex> lock(mutex);
          sending = true;
        }
        auto message = std::make_shared<std::string>(chunk.data(), length);
        net::post(impl.io, [&, message] {
          if (finished) {
            return;
          }
          ws.async_write(net::buffer(*message), [&, message](const error_code& written, std::size_t) {
            {
              const std::lock_guard<std::mutex> lock(mutex);
              sending = false;
            }
            sent.notify_all();
            if (written) {
              finish();
            }
          });
        });
        std::unique_lock<std::mutex> lock(mutex);
        sent.wait(lock, [&] { return !sending || finished.load(); });
      }
      if (got <= 0 || escaped) {
        net::post(impl.io, [&, escaped] {
          relayed.escaped = escaped;
          finish();
        });
        break;
      }
    }
  });
  beast::flat_buffer incoming;
  std::function<void()> read_next = [&] {
    ws.async_read(incoming, [&](const error_code& read_error, std::size_t) {
      if (read_error) {
        finish();
        return;
      }
      const std::string_view data(static_cast<const char*>(incoming.data().data()), incoming.size());
      std::size_t written = 0;
      while (written < data.size()) {
        const ssize_t n = ::write(out_fd, data.data() + written, data.size() - written);
        if (n < 0 && errno == EINTR) {
          continue;
        }
        if (n <= 0) {
          break;
        }
        written += static_cast<std::size_t>(n);
      }
      incoming.consume(incoming.size());
      if (!finished) {
        read_next();
      }
    });
  };
  read_next();
  impl.run();
  finish();
  reader.join();
  ::close(wake[0]);
  ::close(wake[1]);
  return relayed;
}

std::string query_escape(std::string_view value) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string escaped;
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      escaped += c;
    } else {
      escaped += '%';
      escaped += hex[byte >> 4U];
      escaped += hex[byte & 0x0FU];
    }
  }
  return escaped;
}

std::string status_message(const HttpResponse& response) {
  Result<json::Document, json::DecodeError> parsed = json::parse_json(response.body);
  if (parsed && parsed->IsObject()) {
    if (const std::string_view message = json::find_string(*parsed, "message"); !message.empty()) {
      return std::string(message);
    }
  }
  std::string text = response.body.substr(0, 200);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.pop_back();
  }
  return text.empty() ? "HTTP " + std::to_string(response.status) : text;
}

}  // namespace vmgate::kube
