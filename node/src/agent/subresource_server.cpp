// The subresource endpoint (subresource_server.hpp). Follows KubeVirt's virt-handler REST server
// (pkg/virt-handler/rest/console.go: one console per VMI, bytes relayed between the WebSocket and
// the serial unix socket; lifecycle.go: pause and unpause through the launcher), reached by
// virt-api with a client certificate (pkg/virt-api/rest/subresource.go, the handler's port 8186).
#include "vmgate/node/subresource_server.hpp"

#include <fcntl.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <thread>

#include "vmgate/kube/openssl_handles.hpp"
#include "vmgate/kube/pod_paths.hpp"

namespace vmgate::node {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

// Mozilla's Intermediate TLS 1.2 suites (as vmgate serve's), TLS 1.3's are OpenSSL's defaults.
constexpr const char* intermediate_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr std::size_t request_body_limit = std::size_t{64} * 1024;
constexpr std::size_t request_header_limit = std::size_t{16} * 1024;
constexpr std::size_t console_chunk = std::size_t{16} * 1024;
constexpr std::size_t max_control_answer = 512;

struct OpensslFree {
  void operator()(unsigned char* data) const { OPENSSL_free(data); }
};

// The subject CNs of the peer's certificate (verified by OpenSSL against the client CA).
std::vector<std::string> peer_common_names(SSL* ssl) {
  std::vector<std::string> names;
  const kube::X509Ptr certificate(SSL_get1_peer_certificate(ssl));
  if (!certificate) {
    return names;
  }
  X509_NAME* subject = X509_get_subject_name(certificate.get());
  for (int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); at >= 0;
       at = X509_NAME_get_index_by_NID(subject, NID_commonName, at)) {
    unsigned char* raw = nullptr;
    const int length = ASN1_STRING_to_UTF8(&raw, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at)));
    const std::unique_ptr<unsigned char, OpensslFree> utf8(raw);
    if (length >= 0 && utf8) {
      names.emplace_back(reinterpret_cast<const char*>(utf8.get()),  // NOLINT: OpenSSL's bytes
                         static_cast<std::size_t>(length));
    }
  }
  return names;
}

std::string_view action_name(SubresourceAction action) {
  switch (action) {
    case SubresourceAction::pause:
      return "pause";
    case SubresourceAction::unpause:
      return "unpause";
    case SubresourceAction::console:
      return "console";
  }
  return "";
}

// The three files' identity (device, inode, size, modification time): a Secret volume's update
// (an atomic swap of its ..data link) or a file rewritten in place changes it.
std::string files_stamp(const SubresourceConfig& config) {
  std::string stamp;
  for (const std::string* file : {&config.tls_cert, &config.tls_key, &config.client_ca}) {
    struct stat info {};
    if (::stat(file->c_str(), &info) != 0) {
      stamp += "-;";
      continue;
    }
    stamp += std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino) + ":" + std::to_string(info.st_size) +
             ":" + std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec) + ";";
  }
  return stamp;
}

// A server TLS context from the files: TLS >= 1.2, the client's certificate required and
// verified against the client CA. Errors name the option and the file.
Result<std::shared_ptr<asio::ssl::context>> load_tls(const SubresourceConfig& c) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  asio::ssl::context& tls = *context;
  tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1 |
                  asio::ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(tls.native_handle(), TLS1_2_VERSION);
  SSL_CTX_set_cipher_list(tls.native_handle(), intermediate_ciphers);
  beast::error_code error;
  if (tls.use_certificate_chain_file(c.tls_cert, error); error) {
    return Error{"--subresource-tls-cert " + c.tls_cert + ": " + error.message()};
  }
  if (tls.use_private_key_file(c.tls_key, asio::ssl::context::pem, error); error) {
    return Error{"--subresource-tls-key " + c.tls_key + ": " + error.message()};
  }
  if (SSL_CTX_check_private_key(tls.native_handle()) != 1) {
    return Error{"--subresource-tls-key " + c.tls_key + ": does not match the certificate"};
  }
  if (tls.load_verify_file(c.client_ca, error); error) {
    return Error{"--subresource-client-ca " + c.client_ca + ": " + error.message()};
  }
  // The CAs named in the CertificateRequest, so that a client picks the right certificate.
  if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(c.client_ca.c_str()); names != nullptr) {
    SSL_CTX_set_client_CA_list(tls.native_handle(), names);  // takes ownership
  }
  tls.set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
  return context;
}

}  // namespace

Result<UniqueFd> connect_pod_socket(const std::string& directory, std::string_view name) {
  const UniqueFd dir(::open(directory.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir.valid()) {
    return Error{errno == ENOENT ? std::string("no such pod directory")
                                 : "the pod directory: " + std::string(std::strerror(errno))};
  }
  const std::string file(name);
  const UniqueFd node(::openat(dir.get(), file.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!node.valid()) {
    return Error{errno == ENOENT ? "no socket " + file + " (yet)" : file + ": " + std::strerror(errno)};
  }
  struct stat info {};
  if (::fstat(node.get(), &info) != 0) {
    return Error{file + ": " + std::strerror(errno)};
  }
  if (!S_ISSOCK(info.st_mode)) {
    return Error{file + " is not a socket"};  // a symbolic link included: O_PATH|O_NOFOLLOW opened the link itself
  }
  UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket.valid()) {
    return Error{std::string("socket: ") + std::strerror(errno)};
  }
  // The inode itself, through its O_PATH descriptor: no path is looked up again.
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = "/proc/self/fd/" + std::to_string(node.get());
  std::memcpy(address.sun_path, path.data(), path.size());
  if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address),  // NOLINT: C API
                sizeof address) != 0) {
    return Error{file + ": " +
                 (errno == EAGAIN ? std::string("busy (the listener's backlog is full)") : std::strerror(errno))};
  }
  return socket;
}

struct SubresourceServer::Impl {
  SubresourceConfig config;
  LauncherPodsSource pods;
  EventLog& log;
  // Declared before the io_context: the sessions that its destructor destroys with their pending
  // handlers still use them. The sessions hold the Impl by reference: it outlives them.
  std::set<std::string> consoles;  // VMI uids with a console open; the endpoint's thread only
  // The TLS context of new connections, replaced when the files change (each session keeps the
  // one it began with); the endpoint's thread only, like `stamp`.
  std::shared_ptr<asio::ssl::context> tls;
  std::string stamp;
  std::string reload_error;  // the last failed reload, logged once
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;
  bool stopped = false;

  Impl(SubresourceConfig c, LauncherPodsSource p, EventLog& l) : config(std::move(c)), pods(std::move(p)), log(l) {}

  void accept();
  void reload_if_changed();
};

namespace {

using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using Impl = SubresourceServer::Impl;

// One connection: the TLS handshake, one request, its answer or the console it opens.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl& server, tcp::socket socket)
      : server_(&server),
        tls_(server.tls),
        stream_(std::in_place, std::move(socket), *tls_),
        launcher_(server.io),
        timer_(server.io) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    if (console_held_) {
      server_->consoles.erase(target_.vmi_uid);
      server_->log.write("info", "console closed", {{"vmi", vmi_key(target_)}, {"uid", target_.vmi_uid}});
    }
  }

  void run() {
    beast::get_lowest_layer(*stream_).expires_after(server_->config.handshake_timeout);
    stream_->async_handshake(asio::ssl::stream_base::server,
                             [self = shared_from_this()](beast::error_code error) { self->on_handshake(error); });
  }

 private:
  void on_handshake(beast::error_code error) {
    if (error) {
      // No certificate, one the CA did not sign, TLS < 1.2: OpenSSL refused the handshake.
      server_->log.write("warning", "subresource handshake refused", {{"error", error.message()}});
      return;
    }
    client_names_ = peer_common_names(stream_->native_handle());
    parser_.emplace();
    parser_->body_limit(request_body_limit);
    parser_->header_limit(static_cast<std::uint32_t>(request_header_limit));
    http::async_read(*stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code read_error, std::size_t /*bytes*/) {
                       self->on_request(read_error);
                     });
  }

  void on_request(beast::error_code error) {
    if (error) {
      return;  // timeout, a broken or oversized request: nothing to answer on
    }
    const http::request<http::string_body>& request = parser_->get();
    method_ = std::string(request.method_string());
    path_ = std::string(request.target().substr(0, 512));
    if (std::optional<SubresourceReply> refused = refuse_client(client_names_, server_->config.client_name)) {
      reply(*refused);
      return;
    }
    Result<SubresourceTarget, SubresourceReply> target = parse_subresource_request(
        request.method_string(), request.target(), request[vmi_uid_header], websocket::is_upgrade(request));
    if (!target) {
      reply(target.error());
      return;
    }
    target_ = std::move(*target);
    const std::vector<LauncherPod> pods = server_->pods();
    Result<LauncherPod, SubresourceReply> pod = select_launcher(pods, target_);
    if (!pod) {
      reply(pod.error());
      return;
    }
    const std::string directory = private_dir(server_->config.kubelet_root, pod->uid);
    if (target_.action == SubresourceAction::console) {
      open_console(directory, request);
    } else {
      ask_launcher(directory);
    }
  }

  void reply(const SubresourceReply& answer) {
    server_->log.write(answer.status < 400 ? "info" : "warning", "subresource request",
                       {{"method", method_},
                        {"path", path_},
                        {"status", std::to_string(answer.status)},
                        {"client", client_names_.empty() ? "" : client_names_.front()}});
    response_.emplace(static_cast<http::status>(answer.status), 11);
    response_->set(http::field::content_type, "application/json");
    response_->keep_alive(false);
    response_->body() = answer.body;
    response_->prepare_payload();
    beast::get_lowest_layer(*stream_).expires_after(server_->config.handshake_timeout);
    http::async_write(*stream_, *response_, [self = shared_from_this()](beast::error_code error, std::size_t) {
      if (!error) {
        self->stream_->async_shutdown([self](beast::error_code /*ignored*/) {});
      }
    });
  }

  // pause, unpause: one line to the launcher's control socket, its one line back.
  void ask_launcher(const std::string& directory) {
    Result<UniqueFd> connected = connect_pod_socket(directory, kube::pod_paths::control_socket_name);
    if (!connected) {
      reply(refusal(502, "cannot reach the launcher of VMI " + vmi_key(target_) + ": " + connected.error().message));
      return;
    }
    beast::error_code error;
    launcher_.assign(asio::local::stream_protocol(), connected->release(), error);
    if (error) {
      reply(refusal(502, "cannot reach the launcher of VMI " + vmi_key(target_) + ": " + error.message()));
      return;
    }
    timer_.expires_after(server_->config.launcher_timeout);
    timer_.async_wait([self = shared_from_this()](beast::error_code timer_error) {
      if (!timer_error) {
        self->timed_out_ = true;
        beast::error_code ignored;
        self->launcher_.close(ignored);
      }
    });
    command_ = std::string(action_name(target_.action)) + "\n";
    asio::async_write(launcher_, asio::buffer(command_),
                      [self = shared_from_this()](beast::error_code write_error, std::size_t) {
                        if (write_error) {
                          self->finish_launcher(write_error);
                          return;
                        }
                        self->read_answer();
                      });
  }

  void read_answer() {
    launcher_.async_read_some(asio::buffer(chunk_),
                              [self = shared_from_this()](beast::error_code error, std::size_t bytes) {
                                self->answer_.append(self->chunk_.data(), std::min(bytes, max_control_answer));
                                if (error || self->answer_.size() >= max_control_answer) {
                                  self->finish_launcher(error == asio::error::eof ? beast::error_code() : error);
                                  return;
                                }
                                self->read_answer();
                              });
  }

  void finish_launcher(beast::error_code error) {
    timer_.cancel();
    beast::error_code ignored;
    launcher_.close(ignored);
    if (timed_out_) {
      const auto ms = server_->config.launcher_timeout.count();
      reply(refusal(504, "the launcher of VMI " + vmi_key(target_) + " did not answer within " +
                             (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms")));
    } else if (error && answer_.empty()) {
      reply(refusal(502, "the launcher of VMI " + vmi_key(target_) + ": " + error.message()));
    } else {
      reply(control_reply(answer_, target_));
    }
  }

  // console: the WebSocket upgrade, then bytes both ways until either side ends.
  void open_console(const std::string& directory, const http::request<http::string_body>& request) {
    if (server_->consoles.count(target_.vmi_uid) != 0) {
      reply(refusal(409, "a console is already connected to VMI " + vmi_key(target_)));
      return;
    }
    Result<UniqueFd> connected = connect_pod_socket(directory, kube::pod_paths::serial_socket_name);
    if (!connected) {
      reply(refusal(502,
                    "cannot reach the serial console of VMI " + vmi_key(target_) + ": " + connected.error().message));
      return;
    }
    beast::error_code error;
    launcher_.assign(asio::local::stream_protocol(), connected->release(), error);
    if (error) {
      reply(refusal(502, "cannot reach the serial console of VMI " + vmi_key(target_) + ": " + error.message()));
      return;
    }
    server_->consoles.insert(target_.vmi_uid);
    console_held_ = true;
    server_->log.write("info", "console opened", {{"vmi", vmi_key(target_)}, {"uid", target_.vmi_uid}});

    beast::get_lowest_layer(*stream_).expires_never();  // the WebSocket's own timeouts from here
    websocket_.emplace(std::move(*stream_));
    stream_.reset();
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = server_->config.handshake_timeout;
    timeouts.idle_timeout = std::chrono::seconds(60);  // a ping at half of it; no pong: closed
    timeouts.keep_alive_pings = true;
    websocket_->set_option(timeouts);
    websocket_->binary(true);
    websocket_->read_message_max(console_chunk * 4);
    const bool plain = std::string_view(request[http::field::sec_websocket_protocol]).find(console_subprotocol) !=
                       std::string_view::npos;
    websocket_->set_option(websocket::stream_base::decorator([plain](websocket::response_type& response) {
      if (plain) {
        response.set(http::field::sec_websocket_protocol, console_subprotocol);
      }
    }));
    websocket_->async_accept(request, [self = shared_from_this()](beast::error_code accept_error) {
      if (accept_error) {
        self->server_->log.write("warning", "console upgrade failed", {{"error", accept_error.message()}});
        return;
      }
      self->client_to_guest();
      self->guest_to_client();
    });
  }

  // The client's frames to the serial socket: the next frame is read only once these bytes are written.
  void client_to_guest() {
    websocket_->async_read(frame_, [self = shared_from_this()](beast::error_code error, std::size_t) {
      if (error) {
        self->end_guest_side();  // a close frame or a broken connection
        return;
      }
      asio::async_write(self->launcher_, self->frame_.data(), [self](beast::error_code write_error, std::size_t) {
        self->frame_.consume(self->frame_.size());
        if (write_error) {
          self->end_client_side(websocket::close_code::going_away);
          return;
        }
        self->client_to_guest();
      });
    });
  }

  // The guest's bytes to the client: the socket is read again only once the frame is sent.
  void guest_to_client() {
    launcher_.async_read_some(
        asio::buffer(chunk_), [self = shared_from_this()](beast::error_code error, std::size_t bytes) {
          if (error) {
            self->end_client_side(websocket::close_code::normal);  // QEMU closed the console (the guest is gone)
            return;
          }
          self->websocket_->async_write(asio::buffer(self->chunk_.data(), bytes),
                                        [self](beast::error_code write_error, std::size_t) {
                                          if (write_error) {
                                            self->end_guest_side();
                                            return;
                                          }
                                          self->guest_to_client();
                                        });
        });
  }

  void end_guest_side() {
    beast::error_code ignored;
    launcher_.shutdown(asio::socket_base::shutdown_both, ignored);
    launcher_.close(ignored);
  }

  // Only guest_to_client writes to the WebSocket, so the close frame never overlaps a write.
  void end_client_side(websocket::close_code code) {
    end_guest_side();
    if (closing_ || !websocket_->is_open()) {
      return;
    }
    closing_ = true;
    websocket_->async_close(code, [self = shared_from_this()](beast::error_code) {});
  }

  Impl* server_;
  std::shared_ptr<asio::ssl::context> tls_;  // before stream_, which uses it
  std::optional<TlsStream> stream_;
  std::optional<websocket::stream<TlsStream>> websocket_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  std::vector<std::string> client_names_;
  std::string method_;
  std::string path_;
  SubresourceTarget target_;
  asio::local::stream_protocol::socket launcher_;
  asio::steady_timer timer_;
  bool timed_out_ = false;
  std::string command_;
  std::string answer_;
  std::array<char, console_chunk> chunk_{};
  beast::flat_buffer frame_;
  bool console_held_ = false;
  bool closing_ = false;
};

}  // namespace

void SubresourceServer::Impl::accept() {
  acceptor.async_accept([self = this](beast::error_code error, tcp::socket socket) {
    if (error) {
      if (error != asio::error::operation_aborted) {
        self->accept();
      }
      return;
    }
    self->reload_if_changed();
    std::make_shared<Session>(*self, std::move(socket))->run();
    self->accept();
  });
}

void SubresourceServer::Impl::reload_if_changed() {
  std::string now = files_stamp(config);
  if (now == stamp) {
    return;
  }
  Result<std::shared_ptr<asio::ssl::context>> loaded = load_tls(config);
  if (!loaded) {
    // Half-written files, or a key that does not match yet: keep serving the old pair.
    if (loaded.error().message != reload_error) {
      reload_error = loaded.error().message;
      log.write("error", "subresource certificate not reloaded, keeping the old one", {{"error", reload_error}});
    }
    return;
  }
  tls = std::move(*loaded);
  stamp = std::move(now);
  reload_error.clear();
  log.write("info", "subresource certificate reloaded");
}

SubresourceServer::SubresourceServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SubresourceServer::~SubresourceServer() {
  stop();
}

Result<std::unique_ptr<SubresourceServer>> SubresourceServer::start(SubresourceConfig config, LauncherPodsSource pods,
                                                                    EventLog& log) {
  auto impl = std::make_unique<Impl>(std::move(config), std::move(pods), log);
  impl->stamp = files_stamp(impl->config);
  Result<std::shared_ptr<asio::ssl::context>> tls = load_tls(impl->config);
  if (!tls) {
    return tls.error();
  }
  impl->tls = std::move(*tls);
  beast::error_code error;
  const SubresourceConfig& c = impl->config;

  tcp::endpoint endpoint(asio::ip::make_address(c.listen.host, error), c.listen.port);
  if (error) {
    return Error{"--subresource-listen: \"" + c.listen.host + "\" is not an IP address"};
  }
  const std::string where = c.listen.host + ":" + std::to_string(c.listen.port);
  if (impl->acceptor.open(endpoint.protocol(), error); error) {
    return Error{"--subresource-listen " + where + ": " + error.message()};
  }
  impl->acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (impl->acceptor.bind(endpoint, error); error) {
    return Error{"--subresource-listen " + where + ": " + error.message()};
  }
  if (impl->acceptor.listen(asio::socket_base::max_listen_connections, error); error) {
    return Error{"--subresource-listen " + where + ": " + error.message()};
  }
  impl->accept();
  impl->thread = std::thread([raw = impl.get()] { raw->io.run(); });
  return std::unique_ptr<SubresourceServer>(new SubresourceServer(std::move(impl)));
}

std::uint16_t SubresourceServer::port() const {
  beast::error_code error;
  return impl_->acceptor.local_endpoint(error).port();
}

void SubresourceServer::stop() {
  if (!impl_ || impl_->stopped) {
    return;
  }
  impl_->stopped = true;
  asio::post(impl_->io, [raw = impl_.get()] {
    beast::error_code ignored;
    raw->acceptor.close(ignored);
  });
  impl_->io.stop();
  if (impl_->thread.joinable()) {
    impl_->thread.join();
  }
}

}  // namespace vmgate::node
