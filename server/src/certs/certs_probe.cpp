#include "vmgate/server/certs_probe.hpp"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "vmgate/kube/openssl_handles.hpp"
#include "vmgate/server/certs_pki.hpp"

namespace vmgate::certs {

namespace {

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
struct AddrinfoFree {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};

// A socket closed with the object.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  [[nodiscard]] int fd() const { return fd_; }

 private:
  int fd_;
};

ProbeResult failed(const ProbeTarget& target, std::string detail) {
  return ProbeResult{target.endpoint, false, std::move(detail)};
}

// Waits until the socket is readable or writable (as `events`), within `deadline`.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return false;
    }
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(left.count()));
    if (ready > 0) {
      return true;
    }
    if (ready < 0 && errno != EINTR) {
      return false;
    }
  }
}

}  // namespace

Result<ProbeTarget> url_target(std::string_view url) {
  if (!url.starts_with("https://")) {
    return Error{"clientConfig.url \"" + std::string(url) + "\" is not https"};
  }
  ProbeTarget target;
  target.endpoint = std::string(url);
  target.host = url_host(url);
  if (target.host.empty()) {
    return Error{"clientConfig.url \"" + std::string(url) + "\" has no host"};
  }
  std::string_view authority = url.substr(8);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  const std::size_t bracket = authority.rfind(']');
  const std::size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    const std::string_view digits = authority.substr(colon + 1);
    unsigned port = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (error != std::errc{} || end != digits.data() + digits.size() || port == 0 || port > 65535) {
      return Error{"clientConfig.url \"" + std::string(url) + "\" has a bad port"};
    }
    target.port = static_cast<std::uint16_t>(port);
  }
  target.server_name = target.host;
  return target;
}

ProbeResult probe_endpoint(const ProbeTarget& target, std::string_view ca_pem, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Result<std::vector<Certificate>> authorities = parse_certificates(ca_pem, "the probe's CA");
  if (!authorities) {
    return failed(target, authorities.error().message);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(target.port);
  if (const int code = ::getaddrinfo(target.host.c_str(), port.c_str(), &hints, &found); code != 0) {
    return failed(target, "cannot resolve " + target.host + ": " + gai_strerror(code));
  }
  const std::unique_ptr<addrinfo, AddrinfoFree> addresses(found);
  std::string last_error = "no address";
  for (const addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
    Socket socket(
        ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address->ai_protocol));
    if (socket.fd() < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    if (::connect(socket.fd(), address->ai_addr, address->ai_addrlen) != 0) {
      if (errno != EINPROGRESS || !wait_for(socket.fd(), POLLOUT, deadline)) {
        last_error = errno == EINPROGRESS ? "connect timed out" : std::string(std::strerror(errno));
        continue;
      }
      int error = 0;
      socklen_t length = sizeof(error);
      ::getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) {
        last_error = std::string("connect: ") + std::strerror(error);
        continue;
      }
    }
    ERR_clear_error();
    kube::SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
    if (!context) {
      return failed(target, "cannot create a TLS context");
    }
    SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
    X509_STORE* store = SSL_CTX_get_cert_store(context.get());
    for (const Certificate& authority : *authorities) {
      X509_STORE_add_cert(store, authority.x509.get());
    }
    SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
    const std::unique_ptr<SSL, SslFree> ssl(SSL_new(context.get()));
    if (!ssl || SSL_set_fd(ssl.get(), socket.fd()) != 1) {
      return failed(target, "cannot create a TLS connection");
    }
    if (!canonical_ip(target.server_name).empty()) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), target.server_name.c_str());
    } else {
      SSL_set1_host(ssl.get(), target.server_name.c_str());
      // SSL_set_tlsext_host_name, without the macro's C cast.
      SSL_ctrl(ssl.get(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(target.server_name.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }
    static constexpr unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_set_alpn_protos(ssl.get(), alpn, sizeof(alpn));
    while (true) {
      const int result = SSL_connect(ssl.get());
      if (result == 1) {
        break;
      }
      const int reason = SSL_get_error(ssl.get(), result);
      if ((reason == SSL_ERROR_WANT_READ && wait_for(socket.fd(), POLLIN, deadline)) ||
          (reason == SSL_ERROR_WANT_WRITE && wait_for(socket.fd(), POLLOUT, deadline))) {
        continue;
      }
      const long verified = SSL_get_verify_result(ssl.get());
      ERR_clear_error();
      if (verified != X509_V_OK) {
        return failed(target, "certificate not verified for " + target.server_name +
                                  " by ca.crt alone: " + X509_verify_cert_error_string(verified));
      }
      return failed(target, reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE
                                ? std::string("TLS handshake timed out")
                                : std::string("TLS handshake failed"));
    }
    std::string subject = "verified";
    if (const kube::X509Ptr peer{SSL_get1_peer_certificate(ssl.get())}) {
      char line[256];
      X509_NAME_oneline(X509_get_subject_name(peer.get()), line, sizeof(line));
      subject = line;
    }
    SSL_shutdown(ssl.get());
    ERR_clear_error();
    return ProbeResult{target.endpoint, true, subject};
  }
  return failed(target, last_error);
}

}  // namespace vmgate::certs
