#include "server/serve/serve_test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace vmgate::testing {

namespace {

std::string openssl_error() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) {
    return "unknown TLS error";
  }
  std::array<char, 256> buffer{};
  ERR_error_string_n(code, buffer.data(), buffer.size());
  return buffer.data();
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return text;
}

}  // namespace

// ---------------------------------------------------------------- files

TestPki::TestPki(const std::filesystem::path& directory) : directory_(directory) {
  Result<serve::tls::Authority> authority = serve::tls::make_authority("vmgate test CA");
  if (!authority) {
    throw std::runtime_error(authority.error().message);
  }
  authority_ = std::move(authority.value());
  write_text(directory_ / "ca.crt", serve::tls::certificate_pem(*authority_.certificate));
}

std::pair<std::string, std::string> TestPki::issue(const std::string& name, const std::string& common_name) {
  Result<serve::tls::IssuedCertificate> issued =
      serve::tls::issue_certificate(authority_, common_name, {std::string(service_name), "localhost"}, {"127.0.0.1"});
  if (!issued) {
    throw std::runtime_error(issued.error().message);
  }
  const std::filesystem::path cert = directory_ / (name + ".crt");
  const std::filesystem::path key = directory_ / (name + ".key");
  write_text(cert, issued->certificate_pem);
  write_text(key, issued->private_key_pem);
  return {cert.string(), key.string()};
}

// ---------------------------------------------------------------- server

serve::ServeOptions TestServer::test_options(const std::string& cert, const std::string& key) {
  serve::ServeOptions options;
  options.listen = serve::ListenAddress{"127.0.0.1", 0};
  options.metrics_listen = serve::ListenAddress{"127.0.0.1", 0};
  options.tls_cert = cert;
  options.tls_key = key;
  options.threads = 2;
  options.shutdown_delay = std::chrono::milliseconds{0};
  options.grace_period = std::chrono::milliseconds{5000};
  options.watch_interval = std::chrono::milliseconds{100};
  return options;
}

TestServer::TestServer(serve::ServeOptions options) : options_(std::move(options)) {
  certificates_ = std::make_unique<serve::CertificateSource>(
      serve::tls::ServerFiles{options_.tls_cert, options_.tls_key, options_.client_ca}, options_.tls_profile);
  if (auto loaded = certificates_->load(); !loaded) {
    throw std::runtime_error(loaded.error().message);
  }
  cluster_ = std::make_unique<serve::FileClusterSource>(options_.objects, "default", pipeline_);
  if (auto loaded = cluster_->load(); !loaded) {
    throw std::runtime_error(loaded.error().message);
  }
  log_fd_ = ::open((log_directory_.path() / "log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  log_ = std::make_unique<kube::LogSink>(log_fd_);
  webhook::ReviewOptions review_options;
  Result<std::unique_ptr<serve::Server>> server = serve::Server::bind(
      serve::ServerParts{options_, pipeline_, *certificates_, *cluster_, metrics_, *log_, review_options});
  if (!server) {
    throw std::runtime_error(server.error().message);
  }
  server_ = std::move(server.value());
  port_ = server_->https_port();
  metrics_port_ = server_->metrics_port();
  thread_ = std::thread([this] { server_->run(false); });
}

std::string TestServer::log_text() {
  log_->flush();
  std::ifstream file(log_directory_.path() / "log");
  std::ostringstream out;
  out << file.rdbuf();
  return out.str();
}

void TestServer::stop() {
  if (thread_.joinable()) {
    server_->shutdown();
    thread_.join();
  }
}

TestServer::~TestServer() {
  stop();
  server_.reset();
  log_.reset();
  if (log_fd_ >= 0) {
    ::close(log_fd_);
  }
}

// ---------------------------------------------------------------- client

Result<HttpConnection> HttpConnection::plain(std::uint16_t port, std::chrono::milliseconds timeout) {
  // OpenSSL writes with write(2): a server that closes on a client still sending (413, 431)
  // must give the client an error, not SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  HttpConnection connection;
  connection.fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connection.fd_ < 0) {
    return Error{std::string("socket: ") + std::strerror(errno)};
  }
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(connection.fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(connection.fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const int one = 1;
  ::setsockopt(connection.fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(connection.fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return Error{std::string("connect: ") + std::strerror(errno)};
  }
  return connection;
}

Result<HttpConnection> HttpConnection::tls(std::uint16_t port, const ClientOptions& options) {
  Result<HttpConnection> connected = plain(port, options.timeout);
  if (!connected) {
    return connected;
  }
  HttpConnection connection = std::move(connected.value());
  connection.context_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX* ctx = connection.context_;
  if (options.min_version != 0 || options.max_version != 0) {
    // Old protocol versions need the lowest security level to be offered at all.
    SSL_CTX_set_security_level(ctx, 0);
    SSL_CTX_set_cipher_list(ctx, "ALL:@SECLEVEL=0");
  }
  if (options.min_version != 0) {
    SSL_CTX_set_min_proto_version(ctx, options.min_version);
  }
  if (options.max_version != 0) {
    SSL_CTX_set_max_proto_version(ctx, options.max_version);
  }
  if (!options.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) != 1) {
      return Error{"CA " + options.ca_file + ": " + openssl_error()};
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  if (!options.client_cert.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, options.client_cert.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, options.client_key.c_str(), SSL_FILETYPE_PEM) != 1) {
      return Error{"client certificate: " + openssl_error()};
    }
  }
  std::string protocols;
  std::vector<std::string> alpn = options.alpn;
  if (alpn.empty() && options.offer_http11) {
    alpn.emplace_back("http/1.1");
  }
  for (const std::string& protocol : alpn) {
    protocols += static_cast<char>(protocol.size());
    protocols += protocol;
  }
  if (!protocols.empty()) {
    SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(protocols.data()),
                            static_cast<unsigned>(protocols.size()));
  }
  connection.ssl_ = SSL_new(ctx);
  SSL* ssl = connection.ssl_;
  SSL_set_fd(ssl, connection.fd_);
  // SSL_set_tlsext_host_name, without the macro's C cast.
  SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
           const_cast<char*>(options.server_name.c_str()));
  if (!options.ca_file.empty()) {
    SSL_set1_host(ssl, options.server_name.c_str());  // verify the name, as Go's ServerName does
  }
  if (SSL_connect(ssl) != 1) {
    std::string reason = openssl_error();
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      reason += std::string(" (verify: ") + X509_verify_cert_error_string(verify) + ")";
    }
    return Error{"TLS handshake: " + reason};
  }
  return connection;
}

HttpConnection::HttpConnection(HttpConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      context_(std::exchange(other.context_, nullptr)),
      ssl_(std::exchange(other.ssl_, nullptr)),
      pending_(std::move(other.pending_)) {}

HttpConnection& HttpConnection::operator=(HttpConnection&& other) noexcept {
  if (this != &other) {
    this->~HttpConnection();
    fd_ = std::exchange(other.fd_, -1);
    context_ = std::exchange(other.context_, nullptr);
    ssl_ = std::exchange(other.ssl_, nullptr);
    pending_ = std::move(other.pending_);
  }
  return *this;
}

HttpConnection::~HttpConnection() {
  if (ssl_ != nullptr) {
    SSL_free(ssl_);
  }
  if (context_ != nullptr) {
    SSL_CTX_free(context_);
  }
  if (fd_ >= 0) {
    ::close(fd_);
  }
  ssl_ = nullptr;
  context_ = nullptr;
  fd_ = -1;
}

Result<bool> HttpConnection::send(std::string_view bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const std::size_t chunk = std::min<std::size_t>(bytes.size() - sent, 1U << 20U);
    long written = 0;
    if (ssl_ != nullptr) {
      written = SSL_write(ssl_, bytes.data() + sent, static_cast<int>(chunk));
      if (written <= 0) {
        return Error{"TLS write: " + openssl_error()};
      }
    } else {
      written = ::send(fd_, bytes.data() + sent, chunk, MSG_NOSIGNAL);
      if (written < 0) {
        return Error{std::string("send: ") + std::strerror(errno)};
      }
    }
    sent += static_cast<std::size_t>(written);
  }
  return true;
}

Result<std::size_t> HttpConnection::read_some(char* data, std::size_t size) {
  if (ssl_ != nullptr) {
    const int got = SSL_read(ssl_, data, static_cast<int>(size));
    if (got > 0) {
      return static_cast<std::size_t>(got);
    }
    const int error = SSL_get_error(ssl_, got);
    if (error == SSL_ERROR_ZERO_RETURN) {
      return std::size_t{0};
    }
    if (error == SSL_ERROR_SYSCALL && (errno == 0 || errno == ECONNRESET)) {
      ERR_clear_error();
      return std::size_t{0};  // closed without close_notify
    }
    if (error == SSL_ERROR_SSL) {
      const std::string reason = openssl_error();
      if (reason.find("unexpected eof") != std::string::npos) {
        return std::size_t{0};
      }
      return Error{"TLS read: " + reason};
    }
    return Error{"TLS read failed (timeout?), SSL error " + std::to_string(error)};
  }
  const ssize_t got = ::recv(fd_, data, size, 0);
  if (got < 0) {
    if (errno == ECONNRESET) {
      return std::size_t{0};
    }
    return Error{std::string("recv: ") + std::strerror(errno)};
  }
  return static_cast<std::size_t>(got);
}

Result<HttpResponse> HttpConnection::read_response() {
  std::array<char, 16384> buffer{};
  std::size_t header_end = std::string::npos;
  while ((header_end = pending_.find("\r\n\r\n")) == std::string::npos) {
    Result<std::size_t> got = read_some(buffer.data(), buffer.size());
    if (!got) {
      return got.error();
    }
    if (*got == 0) {
      return Error{pending_.empty() ? "connection closed" : "connection closed mid-response"};
    }
    pending_.append(buffer.data(), *got);
  }
  HttpResponse response;
  std::istringstream head(pending_.substr(0, header_end));
  std::string line;
  std::getline(head, line);
  if (line.rfind("HTTP/1.1 ", 0) != 0) {
    return Error{"not an HTTP/1.1 status line: " + line};
  }
  response.status = std::stoi(line.substr(9, 3));
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      response.headers[lower(line.substr(0, colon))] = value;
    }
  }
  pending_.erase(0, header_end + 4);
  const std::size_t length =
      std::stoul(response.header("content-length").empty() ? "0" : response.header("content-length"));
  while (pending_.size() < length) {
    Result<std::size_t> got = read_some(buffer.data(), buffer.size());
    if (!got) {
      return got.error();
    }
    if (*got == 0) {
      return Error{"connection closed mid-body"};
    }
    pending_.append(buffer.data(), *got);
  }
  response.body = pending_.substr(0, length);
  pending_.erase(0, length);
  return response;
}

Result<HttpResponse> HttpConnection::post(std::string_view target, std::string_view body,
                                          std::string_view content_type) {
  std::string request = "POST " + std::string(target) + " HTTP/1.1\r\nHost: " + std::string(service_name) + "\r\n";
  if (!content_type.empty()) {
    request += "Content-Type: " + std::string(content_type) + "\r\n";
  }
  request += "Accept: application/json, */*\r\nUser-Agent: kube-apiserver-admission\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n";
  request += body;
  if (Result<bool> sent = send(request); !sent) {
    return sent.error();
  }
  return read_response();
}

bool HttpConnection::received_close_notify() const {
  return ssl_ != nullptr && (SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) != 0;
}

bool HttpConnection::closed_by_peer() {
  std::array<char, 4096> buffer{};
  for (;;) {
    Result<std::size_t> got = read_some(buffer.data(), buffer.size());
    if (!got) {
      return got.error().message.find("TLS read:") == 0;  // an alert counts as closing
    }
    if (*got == 0) {
      return true;
    }
  }
}

std::string HttpConnection::negotiated_alpn() const {
  if (ssl_ == nullptr) {
    return {};
  }
  const unsigned char* data = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(ssl_, &data, &length);
  return std::string(reinterpret_cast<const char*>(data), length);
}

std::string HttpConnection::peer_serial() const {
  if (ssl_ == nullptr) {
    return {};
  }
  X509* certificate = SSL_get1_peer_certificate(ssl_);
  if (certificate == nullptr) {
    return {};
  }
  BIGNUM* number = ASN1_INTEGER_to_BN(X509_get_serialNumber(certificate), nullptr);
  char* hex = BN_bn2hex(number);
  std::string serial = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(number);
  X509_free(certificate);
  return serial;
}

Result<HttpResponse> http_get(std::uint16_t port, std::string_view path) {
  Result<HttpConnection> connection = HttpConnection::plain(port);
  if (!connection) {
    return connection.error();
  }
  if (Result<bool> sent = connection->send("GET " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n\r\n"); !sent) {
    return sent.error();
  }
  return connection->read_response();
}

std::string apiserver_request(std::string_view target, std::string_view body) {
  return "POST " + std::string(target) + " HTTP/1.1\r\nHost: " + std::string(service_name) +
         ":443\r\nContent-Type: application/json\r\nAccept: application/json, */*\r\nUser-Agent: "
         "kube-apiserver-admission\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

::testing::AssertionResult raise_descriptor_limit(std::size_t wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return ::testing::AssertionFailure() << "getrlimit(RLIMIT_NOFILE) failed";
  }
  if (limit.rlim_cur < wanted && limit.rlim_max >= wanted) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      return ::testing::AssertionFailure() << "setrlimit(RLIMIT_NOFILE) failed";
    }
  }
  if (limit.rlim_cur < wanted) {
    return ::testing::AssertionFailure() << "needs " << wanted << " descriptors (ulimit -n)";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace vmgate::testing
