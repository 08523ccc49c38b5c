// The Beast/Asio transport of `vmgate serve`. The one translation unit that includes Beast and
// Asio (each such unit takes about 30 s to compile with g++ 12 at -O2).
#include "vmgate/server/server.hpp"

#include <malloc.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vmgate/server/access_log.hpp"
#include "vmgate/server/review_scratch_pool.hpp"
#include "vmgate/server/routing.hpp"
#include "vmgate/server/tls_stream.hpp"

namespace vmgate::serve {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

// Go's net/http answer to plain HTTP on a TLS port: the user sees why, not a reset.
constexpr std::string_view plain_http_answer =
    "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
    "Content-Length: 48\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

// Out of descriptors (or kernel memory), accept(2) fails at once and, the connection still
// waiting in the backlog, fails again at once: re-arming it immediately spins a core and writes
// the same log line at full speed (measured: 125 % CPU, ~100 MB/s of log). Pause instead, so
// that the connections being served can finish and release theirs.
constexpr std::chrono::milliseconds accept_pause{50};
// At most one "accept failed" line per listener per interval; the line counts the ones left out.
constexpr std::chrono::seconds accept_log_interval{1};

bool out_of_resources(const error_code& error) {
  return error == net::error::no_descriptors || error == std::errc::too_many_files_open_in_system ||
         error == net::error::no_buffer_space || error == net::error::no_memory;
}

// A TLS connection takes ~90 KiB (OpenSSL's buffers, the session, Beast's); once closed, glibc
// keeps that memory for reuse (serve raises M_TRIM_THRESHOLD so that requests do not pay page
// faults), and after a burst of thousands of connections the idle process stayed at the
// burst's size (measured: 13 -> 313 MB after 3 x 3000). When this many connections have
// closed since the peak, the free memory is handed back to the kernel.
constexpr std::size_t trim_after_closed = 256;

// One listener's accept loop state beside its acceptor; touched only on the acceptor's strand.
struct AcceptPause {
  explicit AcceptPause(const net::any_io_executor& strand) : timer(strand) {}

  net::steady_timer timer;
  std::optional<Clock::time_point> last_logged;
  std::size_t unlogged = 0;  // failures since the last line
};

}  // namespace

class HttpsSession;
class HealthSession;

// The request bodies held at once by all connections (--max-body-memory); each connection
// reserves its body's size when the header is read and releases it once answered.
class BodyBudget {
 public:
  explicit BodyBudget(std::size_t limit) : limit_(limit) {}

  bool reserve(std::size_t bytes) {
    std::size_t held = held_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ - std::min(held, limit_)) {
        return false;
      }
    } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    return true;
  }

  void release(std::size_t bytes) {
    if (bytes > 0) {
      held_.fetch_sub(bytes, std::memory_order_relaxed);
    }
  }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> held_{0};
};

class HttpsSession;

// Admissions waiting for live lookups of objects the cache missed (kube/request_view.hpp). The
// lookups answer on their own threads, possibly after run() returned: an answer only posts to a
// session still listed here while the server runs, so a late answer touches nothing.
struct LookupWaits {
  std::mutex mutex;
  bool open = true;
  std::unordered_map<const HttpsSession*, std::shared_ptr<HttpsSession>> sessions;

  void add(const std::shared_ptr<HttpsSession>& session) {
    const std::lock_guard lock(mutex);
    sessions.emplace(session.get(), session);
  }
  // Posts the session's next admission round to its strand (defined after HttpsSession).
  void resume(const HttpsSession* session);
  // run() returned: the waiting sessions are released here, while the server still exists.
  void close() {
    std::unordered_map<const HttpsSession*, std::shared_ptr<HttpsSession>> released;
    {
      const std::lock_guard lock(mutex);
      open = false;
      released.swap(sessions);
    }
  }
};

struct ServerState {
  explicit ServerState(ServerParts server_parts)
      : parts(std::move(server_parts)),
        threads(std::max(1U, parts.options.threads)),
        body_budget(parts.options.max_body_memory),
        io(static_cast<int>(threads)),
        https_acceptor(net::make_strand(io)),
        health_acceptor(net::make_strand(io)),
        https_pause(https_acceptor.get_executor()),
        health_pause(health_acceptor.get_executor()),
        watch_timer(io),
        flush_timer(io),
        drain_timer(io),
        signals(io) {}

  ServerParts parts;
  unsigned threads;

  // Declared before the io_context: handlers it destroys at the end may still end sessions.
  std::atomic<bool> shutdown_started{false};
  std::atomic<bool> closing{false};  // listener closed: answer with Connection: close
  std::atomic<bool> stopped{false};  // run() returned: nothing more is posted
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> connection_peak{0};  // since the last trim (return_idle_memory)
  BodyBudget body_budget;
  std::mutex sessions_mutex;
  std::unordered_map<const HttpsSession*, std::weak_ptr<HttpsSession>> sessions;
  std::shared_ptr<LookupWaits> lookup_waits = std::make_shared<LookupWaits>();
  ReviewScratchPool review_scratches;  // lent to one review at a time (webhook::review)
  // The BIO of every connection's TLS (TlsChannel); before the io_context, whose destruction
  // ends the last sessions.
  BioMethodPtr bio_method = TlsChannel::make_bio_method();

  // The asio wrapper of the certificate snapshot new connections use; touched only by the
  // accept loop (one strand).
  std::shared_ptr<const tls::ServerContext> tls_source;
  std::shared_ptr<ssl::context> tls_context;

  net::io_context io;
  tcp::acceptor https_acceptor;
  tcp::acceptor health_acceptor;
  AcceptPause https_pause;
  AcceptPause health_pause;
  net::steady_timer watch_timer;
  net::steady_timer flush_timer;
  net::steady_timer drain_timer;
  net::signal_set signals;

  // Where a connection's handlers run. With one thread running the io_context its handlers are
  // already serialised, and a strand per connection would only add a queue and a lock to every
  // completion (about 2 % of a request's CPU); with more threads each connection needs one.
  [[nodiscard]] net::any_io_executor connection_executor() {
    if (threads == 1) {
      return io.get_executor();
    }
    return net::make_strand(io);
  }

  [[nodiscard]] Readiness readiness() const {
    Readiness readiness;
    readiness.certificate_loaded = parts.certificates.current() != nullptr;
    readiness.objects_loaded = parts.cluster.current() != nullptr;
    readiness.draining = shutdown_started.load();
    if (!readiness.objects_loaded) {
      readiness.objects_reason = parts.cluster.not_ready_reason();
    }
    return readiness;
  }

  void log_event(std::string_view level, std::string_view message,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> fields = {}) {
    parts.log.write_now(kube::event_line(std::chrono::system_clock::now(), level, message, fields));
  }

  std::shared_ptr<ssl::context> current_tls_context();
  void accept_https();
  void accept_health();
  bool paused_after(const error_code& error, std::string_view listener, AcceptPause& pause,
                    void (ServerState::*again)());
  void watch();
  void return_idle_memory();
  void flush_logs();
  void begin_shutdown();
  void wait_for_signal();
  void close_listener_and_drain();
  void session_ended();
  void register_session(const std::shared_ptr<HttpsSession>& session);
  void unregister_session(const HttpsSession* session);
};

// ------------------------------------------------------------------ HTTPS connections

class HttpsSession : public std::enable_shared_from_this<HttpsSession> {
 public:
  HttpsSession(tcp::socket&& socket, std::shared_ptr<ssl::context> context, ServerState& server)
      : context_(std::move(context)),
        stream_(std::move(socket), context_->native_handle(), server.bio_method.get()),
        server_(server) {}

  HttpsSession(const HttpsSession&) = delete;
  HttpsSession& operator=(const HttpsSession&) = delete;

  ~HttpsSession() {
    release_body();
    server_.unregister_session(this);
    server_.parts.metrics.connection_closed();
    server_.connections.fetch_sub(1);
    server_.session_ended();
  }

  void start() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&HttpsSession::detect, shared_from_this()));
  }

  // The live lookups of the admission answered (or its lookup deadline passed): run it again on
  // the connection's strand.
  void resume_review() {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->review_round(); });
  }

  // Drain: a connection in the middle of a request finishes it and closes after the answer. One
  // waiting for its next request gets a last call: a request arriving within `last_call` is
  // answered with Connection: close; after it the connection closes. Closing it at once would
  // race with a client that has just sent its next request on it, and the apiserver does not
  // retry a POST that met a closed connection (docs/webhook.md, "Retries on closed connections").
  void close_when_idle(std::chrono::milliseconds last_call) {
    net::post(stream_.get_executor(), [self = shared_from_this(), last_call] {
      self->last_call_.emplace(self->stream_.get_executor());
      self->last_call_->expires_after(last_call);
      self->last_call_->async_wait([self](error_code error) {
        if (!error && self->idle_) {
          // The idle read must end before the TLS shutdown may use the stream: its handler
          // (on_first_bytes) sends the close_notify.
          self->close_notify_ = true;
          self->stream_.cancel();
        }
      });
    });
  }

 private:
  const ServeOptions& options() const { return server_.parts.options; }

  bool reserve_body(std::size_t bytes) {
    release_body();
    if (!server_.body_budget.reserve(bytes)) {
      return false;
    }
    body_reserved_ = bytes;
    return true;
  }

  void release_body() {
    server_.body_budget.release(body_reserved_);
    body_reserved_ = 0;
  }
  // Saturates, as Asio's own addition does, for a timeout option of centuries.
  void expire_in(Clock::duration time) {
    const Clock::time_point now = Clock::now();
    stream_.expires_at(time < Clock::time_point::max() - now ? now + time : Clock::time_point::max());
  }

  void close() {
    if (last_call_) {
      last_call_->cancel();
    }
    // close(2) alone sends the FIN and cancels pending operations; a shutdown(2) first would be
    // one more system call per connection.
    stream_.close();
  }

  // An orderly end (Connection: close, the drain's last call) sends a TLS close_notify before
  // the FIN, so that the client sees the end of the connection, not a truncation.
  // async_shutdown then waits for the client's close_notify; close_notify_time bounds that.
  void shut_down_tls() {
    if (last_call_) {
      last_call_->cancel();
    }
    expire_in(close_notify_time);
    stream_.async_shutdown([self = shared_from_this()](error_code) { self->close(); });
  }

  void detect() {
    expire_in(options().handshake_timeout);
    stream_.async_handshake(beast::bind_front_handler(&HttpsSession::on_handshake, shared_from_this()));
  }

  void on_handshake(error_code error) {
    if (!error) {
      wait_for_request();
      return;
    }
    // OpenSSL recognises an HTTP request where a ClientHello should be: answer it in plain
    // HTTP, as Go's net/http does, so that the user reads why instead of a reset.
    if (error.category() == net::error::get_ssl_category() &&
        ERR_GET_REASON(static_cast<unsigned long>(error.value())) == SSL_R_HTTP_REQUEST) {
      server_.parts.metrics.record_rejection(Rejection::plain_http);
      stream_.async_write_plain(net::buffer(plain_http_answer.data(), plain_http_answer.size()),
                                [self = shared_from_this()](error_code, std::size_t) { self->close(); });
      return;
    }
    server_.parts.metrics.record_tls_handshake_error();
  }

  // Between requests: wait up to the idle timeout for a first byte, then give the whole header
  // the header timeout, so that a slow client cannot hold a connection open a byte at a time.
  void wait_for_request() {
    if (buffer_.size() > 0) {
      read_header();
      return;
    }
    // While draining, the last-call timer (close_when_idle) closes the connection if no request
    // comes.
    idle_ = true;
    expire_in(options().idle_timeout);
    stream_.async_read_some(buffer_.prepare(read_chunk),
                            beast::bind_front_handler(&HttpsSession::on_first_bytes, shared_from_this()));
  }

  void on_first_bytes(error_code error, std::size_t bytes) {
    idle_ = false;
    if (error) {
      if (close_notify_ && error == net::error::operation_aborted) {
        shut_down_tls();  // the drain's last call passed
      }
      return;  // closed by the client, idle timeout or drain: nothing to answer
    }
    buffer_.commit(bytes);
    read_header();
  }

  void read_header() {
    parser_.emplace();
    parser_->body_limit(options().max_body_bytes);
    request_start_ = Clock::now();
    header_bytes_ = 0;
    header_timer_armed_ = false;
    direct_body_.reset();
    parse_header();
  }

  // The header is read here rather than with http::async_read_header because Beast applies its
  // header_limit to each put() alone: fields parsed by an earlier call are not counted, so a
  // header of many small fields got through at any size when it came in several reads (and a
  // TLS record holds at most 16 KiB, so one write of 32 KiB is two reads). Each put() here is
  // given the limit minus the header bytes already parsed, which makes it hold however the
  // bytes arrive.
  void parse_header() {
    const std::size_t limit = options().max_header_bytes;
    error_code error = http::error::need_more;
    if (buffer_.size() > 0) {
      parser_->eager(false);  // stop at the end of the header: `used` is header bytes only
      parser_->header_limit(static_cast<std::uint32_t>(limit - header_bytes_));
      const std::size_t used = parser_->put(buffer_.data(), error);
      buffer_.consume(used);
      header_bytes_ += used;
      if (!error && parser_->is_header_done()) {
        finish_header();
        return;
      }
    }
    // Beast answers need_more, not header_limit, while the bytes it was allowed to look at end
    // inside a field: `limit` bytes from the start of the header without its end is the limit.
    if (error == http::error::need_more && header_bytes_ + buffer_.size() >= limit) {
      error = http::error::header_limit;
    }
    if (error != http::error::need_more) {
      on_header(error, 0);
      return;
    }
    // The whole request usually came with its first bytes (one TLS record): the socket is
    // only visited, and the header timeout armed, for what is missing.
    if (!header_timer_armed_) {
      expire_in(options().header_timeout);
      header_timer_armed_ = true;
    }
    stream_.async_read_some(buffer_.prepare(read_chunk),
                            beast::bind_front_handler(&HttpsSession::on_header_bytes, shared_from_this()));
  }

  void on_header_bytes(error_code error, std::size_t bytes) {
    if (error) {
      on_header(error, 0);
      return;
    }
    buffer_.commit(bytes);
    parse_header();
  }

  // Beast counts the start line apart from the fields within one put(): the total decides.
  // A body of known length is read by read_body, straight into the buffer; a chunked one goes
  // through Beast, whatever of it is buffered parsed at once, without a trip through Asio.
  void finish_header() {
    error_code error;
    if (const auto length = parser_->content_length(); length && !parser_->chunked()) {
      direct_body_ = static_cast<std::size_t>(*length);
    }
    if (header_bytes_ > options().max_header_bytes) {
      error = http::error::header_limit;
    } else if (buffer_.size() > 0 && !parser_->is_done() && !direct_body_) {
      parser_->eager(true);
      buffer_.consume(parser_->put(buffer_.data(), error));
      if (error == http::error::need_more) {
        error = {};
      }
    }
    on_header(error, 0);
  }

  void on_header(error_code error, std::size_t /*bytes*/) {
    if (error == http::error::body_limit) {  // a Content-Length above the limit, seen in the header
      refuse(body_too_large_answer(options().max_body_bytes), Rejection::body_too_large);
      return;
    }
    if (error == http::error::header_limit) {
      refuse(webhook::status_answer(431, "request header fields too large: the limit is " +
                                             std::to_string(options().max_header_bytes) + " bytes"),
             Rejection::header_too_large);
      return;
    }
    if (error == beast::error::timeout) {
      server_.parts.metrics.record_rejection(Rejection::timeout);
      return;  // the stream is closed on timeout
    }
    if (error == http::error::end_of_stream || error == net::error::eof || error == net::ssl::error::stream_truncated ||
        error == net::error::connection_reset || error == net::error::operation_aborted) {
      return;
    }
    if (error) {
      refuse(webhook::status_answer(400, "malformed HTTP request: " + error.message()), Rejection::bad_request);
      return;
    }
    const auto& request = parser_->get();
    RequestHead head;
    head.method = request.method_string();
    head.target = request.target();
    if (const auto field = request.find(http::field::content_type); field != request.end()) {
      head.content_type = field->value();
    }
    if (const auto length = parser_->content_length()) {
      head.content_length = *length;
    }
    if (request.version() != 11) {
      // HTTP/1.0 has no chunked bodies or default keep-alive; the apiserver speaks 1.1.
      refuse(webhook::status_answer(505, "HTTP/1.1 only"), Rejection::bad_request);
      return;
    }
    std::variant<Admit, Refusal> routed = route_webhook(head, options().max_body_bytes);
    if (auto* refusal = std::get_if<Refusal>(&routed)) {
      refuse(refusal->answer, refusal->reason,
             refusal->allow.empty() ? std::string() : "Allow: " + std::string(refusal->allow));
      return;
    }
    // The body is held whole until the answer is written: reserve it against the budget shared
    // by all connections before reading it (a chunked body may grow to the limit).
    const std::size_t body_bytes = direct_body_         ? *direct_body_
                                   : parser_->is_done() ? parser_->get().body().size()
                                                        : options().max_body_bytes;
    if (!reserve_body(body_bytes)) {
      refuse(webhook::status_answer(503, "too many request bodies in flight (--max-body-memory " +
                                             std::to_string(options().max_body_memory) + " bytes); retry"),
             Rejection::body_memory, "Retry-After: 1");
      return;
    }
    const Admit admit = std::get<Admit>(routed);
    endpoint_ = admit.endpoint;
    Clock::time_point deadline = request_start_ + options().body_timeout;
    if (admit.timeout) {
      deadline_ = request_start_ + std::chrono::duration_cast<Clock::duration>(*admit.timeout);
      deadline = std::min(deadline, *deadline_);
    } else {
      deadline_.reset();
    }
    // At least a millisecond, so that a deadline already past still lets a body that is on its
    // way be read and refused with 504 rather than the connection cut.
    stream_.expires_at(std::max(deadline, Clock::now() + std::chrono::milliseconds{1}));
    if (direct_body_) {
      read_body();
      return;
    }
    if (parser_->is_done()) {
      on_body({}, 0);
      return;
    }
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&HttpsSession::on_body, shared_from_this()));
  }

  // A Content-Length body, already admitted by the limits: left in the read buffer and reviewed
  // there (Beast's string body would copy it once more, after zero-filling its room).
  void read_body() {
    const std::size_t length = *direct_body_;
    if (buffer_.size() >= length) {
      on_body({}, 0);
      return;
    }
    stream_.async_read_some(buffer_.prepare(std::max(length - buffer_.size(), read_chunk)),
                            [self = shared_from_this()](error_code error, std::size_t bytes) {
                              if (error) {
                                self->on_body(error, 0);
                                return;
                              }
                              self->buffer_.commit(bytes);
                              self->read_body();
                            });
  }

  // The request's body: at the front of the read buffer, or in Beast's string body.
  std::string_view body() const {
    if (direct_body_) {
      return {static_cast<const char*>(buffer_.data().data()), *direct_body_};
    }
    return parser_->get().body();
  }

  void on_body(error_code error, std::size_t /*bytes*/) {
    if (error == http::error::body_limit) {
      refuse(body_too_large_answer(options().max_body_bytes), Rejection::body_too_large);
      return;
    }
    if (error == beast::error::timeout) {
      server_.parts.metrics.record_rejection(Rejection::timeout);
      return;
    }
    if (error) {
      return;  // the client went away mid-body: nobody to answer
    }
    if (deadline_ && Clock::now() >= *deadline_) {
      server_.parts.metrics.record_rejection(Rejection::timeout);
      refuse(webhook::status_answer(504, "the request's ?timeout= passed before its body was read"),
             Rejection::timeout);
      return;
    }
    admit();
  }

  void admit() {
    ServerState& server = server_;
    view_ = server.parts.cluster.request_view();
    if (view_ == nullptr) {  // loaded before the listener opens; never reached
      respond(webhook::status_answer(503, "cluster objects not loaded"), false, {});
      return;
    }
    server.parts.metrics.request_started(endpoint_);
    review_started_ = Clock::now();
    // Live lookups get at most half of what the apiserver waits (?timeout=, its timeoutSeconds),
    // and never more than max_lookup_time: the answer must reach it before it gives up.
    lookup_deadline_ = review_started_ + max_lookup_time;
    if (deadline_) {
      lookup_deadline_ = std::min(lookup_deadline_, review_started_ + (*deadline_ - review_started_) / 2);
    }
    lookup_rounds_ = 0;
    review_round();
  }

  // One admission on the request's view. When it read objects as absent that a live lookup may
  // find, they are looked up (without blocking this thread) and the admission runs again with
  // the answers; its last run is the answer. A chain (DataVolume -> DataSource) takes a round per
  // link.
  void review_round() {
    ServerState& server = server_;
    webhook::ReviewResult result = [&] {
      const ReviewScratchPool::Lease scratch = server.review_scratches.lend();
      return webhook::review(endpoint_, body(), server.parts.pipeline, *view_, server.parts.review_options, *scratch);
    }();
    if (view_->has_misses() && lookup_rounds_ < max_lookup_rounds && Clock::now() < lookup_deadline_) {
      ++lookup_rounds_;
      server.lookup_waits->add(shared_from_this());
      view_->resolve(lookup_deadline_, [waits = server.lookup_waits, self = this] { waits->resume(self); });
      return;
    }
    view_.reset();
    const auto latency = Clock::now() - review_started_;
    server.parts.metrics.record_review(endpoint_, result.summary, latency);
    server.parts.metrics.request_finished(endpoint_);
    if (server.parts.options.access_log) {
      server.parts.log.write(admission_line(std::chrono::system_clock::now(), endpoint_, result.summary, latency));
    }
    const bool keep_alive = parser_->get().keep_alive();
    respond(result.answer, keep_alive, {});
  }

  // `header`: one more header line for the answer ("Allow: POST", "Retry-After: 1").
  void refuse(const webhook::HttpAnswer& answer, Rejection reason, std::string_view header = {}) {
    server_.parts.metrics.record_rejection(reason);
    // The body, when there is one, was not read: its bytes must not be taken for a request,
    // so the connection closes after the answer, lingering so the client can read it.
    linger_ = true;
    respond(answer, false, header);
  }

  // Closing a socket with unread input sends a reset, and the client's TCP stack may then drop
  // the answer before the client reads it (a client still writing a 9 MiB body never sees its
  // 413). So, like nginx's lingering_close: stop sending, read and discard for a while, close.
  void linger() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    expire_in(linger_time);
    discard_.resize(read_chunk);
    discard_input();
  }

  void discard_input() {
    stream_.async_read_plain(net::buffer(discard_), [self = shared_from_this()](error_code error, std::size_t bytes) {
      self->discarded_ += bytes;
      if (error || self->discarded_ > linger_limit) {
        self->close();
        return;
      }
      self->discard_input();
    });
  }

  // The answer is written as one buffer, status line and header included: one TLS record
  // write for the common case, without Beast's serializer machinery (measured: several
  // microseconds per request on the benchmark).
  void respond(const webhook::HttpAnswer& answer, bool keep_alive, std::string_view header) {
    keep_alive_ = keep_alive && !server_.closing.load();
    const auto status = static_cast<http::status>(answer.status);
    std::string& out = out_;
    out.clear();
    out.reserve(answer.body.size() + 160);
    out += "HTTP/1.1 ";
    out += std::to_string(answer.status);
    out += ' ';
    const auto reason = http::obsolete_reason(status);
    out.append(reason.data(), reason.size());
    out += "\r\nContent-Type: ";
    out += answer.content_type;
    out += "\r\nContent-Length: ";
    out += std::to_string(answer.body.size());
    if (!header.empty()) {
      out += "\r\n";
      out += header;
    }
    out += keep_alive_ ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n";
    out += answer.body;
    expire_in(options().body_timeout);
    stream_.async_write(net::buffer(out_), beast::bind_front_handler(&HttpsSession::on_write, shared_from_this()));
  }

  void on_write(error_code error, std::size_t /*bytes*/) {
    if (direct_body_) {
      buffer_.consume(*direct_body_);  // what follows is the next request
    }
    parser_.reset();
    release_body();
    release_if_large(out_);
    if (error) {
      return;
    }
    if (!keep_alive_) {
      if (linger_) {
        linger();  // unread input: a close_notify would not be read before the reset
      } else {
        shut_down_tls();
      }
      return;
    }
    // An 8 MiB body must not stay allocated for the connection's life.
    if (buffer_.capacity() > large_buffer && buffer_.size() == 0) {
      buffer_.shrink_to_fit();
    }
    wait_for_request();
  }

  static constexpr std::size_t read_chunk = 16384;
  static constexpr std::chrono::milliseconds max_lookup_time{3000};
  static constexpr unsigned max_lookup_rounds = 4;
  static constexpr std::chrono::seconds linger_time{2};
  static constexpr std::chrono::seconds close_notify_time{1};
  static constexpr std::size_t linger_limit = std::size_t{64} << 20U;
  static constexpr std::size_t large_buffer = 65536;

  // A large request's or answer's memory is not kept for the connection's life.
  static void release_if_large(std::string& text) {
    if (text.capacity() > large_buffer) {
      std::string().swap(text);
    }
  }

  std::shared_ptr<ssl::context> context_;  // the certificate this connection presented
  TlsStream stream_;
  ServerState& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string out_;  // the answer being written
  bool keep_alive_ = true;
  webhook::Endpoint endpoint_ = webhook::Endpoint::vm_mutate;
  Clock::time_point request_start_;
  std::size_t header_bytes_ = 0;  // of the request being read, parsed so far
  // The length of a Content-Length body, which is read into buffer_ and reviewed there; unset
  // when Beast reads the body (chunked).
  std::optional<std::size_t> direct_body_;
  bool header_timer_armed_ = false;
  std::optional<Clock::time_point> deadline_;
  std::shared_ptr<kube::RequestView> view_;  // the admission's cluster, kept across lookup rounds
  Clock::time_point review_started_;
  Clock::time_point lookup_deadline_;
  unsigned lookup_rounds_ = 0;
  std::size_t body_reserved_ = 0;  // of ServerState::body_budget, for the request's body
  bool idle_ = false;
  bool close_notify_ = false;  // the pending idle read was cancelled to shut down TLS
  std::optional<net::steady_timer> last_call_;
  bool linger_ = false;
  std::vector<char> discard_;  // allocated only when lingering
  std::size_t discarded_ = 0;
};

void LookupWaits::resume(const HttpsSession* session) {
  std::shared_ptr<HttpsSession> waiting;
  {
    const std::lock_guard lock(mutex);
    const auto found = sessions.find(session);
    if (!open || found == sessions.end()) {
      return;
    }
    waiting = std::move(found->second);
    sessions.erase(found);
    // Posted under the lock: close() cannot run between the check and the post, so the
    // io_context is still there.
    waiting->resume_review();
  }
}

// ------------------------------------------------------------------ health and metrics

class HealthSession : public std::enable_shared_from_this<HealthSession> {
 public:
  HealthSession(tcp::socket&& socket, ServerState& server) : stream_(std::move(socket)), server_(server) {}

  void start() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&HealthSession::read, shared_from_this()));
  }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(health_header_limit);
    parser_->body_limit(health_body_limit);
    stream_.expires_after(server_.parts.options.header_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&HealthSession::on_read, shared_from_this()));
  }

  void on_read(error_code error, std::size_t /*bytes*/) {
    if (error) {
      error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    const auto& request = parser_->get();
    webhook::HttpAnswer answer = answer_health(request.method_string(), request.target(), server_.readiness(),
                                               server_.parts.metrics, server_.parts.cluster.metrics_text());
    response_.emplace();
    response_->version(request.version());
    response_->result(static_cast<unsigned>(answer.status));
    response_->set(http::field::content_type, answer.content_type);
    response_->keep_alive(request.keep_alive());
    const bool head = request.method() == http::verb::head;
    response_->body() = std::move(answer.body);
    response_->prepare_payload();
    if (head) {
      response_->body().clear();  // Content-Length stays that of the GET answer
    }
    http::async_write(stream_, *response_, beast::bind_front_handler(&HealthSession::on_write, shared_from_this()));
  }

  void on_write(error_code error, std::size_t /*bytes*/) {
    const bool keep_alive = response_->keep_alive();
    response_.reset();
    if (error || !keep_alive) {
      error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    read();
  }

  static constexpr std::uint32_t health_header_limit = 8192;
  static constexpr std::uint64_t health_body_limit = 65536;

  beast::tcp_stream stream_;
  ServerState& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
};

// ------------------------------------------------------------------ the server

std::shared_ptr<ssl::context> ServerState::current_tls_context() {
  std::shared_ptr<const tls::ServerContext> source = parts.certificates.current();
  if (source != tls_source) {
    // asio's context owns one reference to the SSL_CTX; the snapshot keeps its own.
    SSL_CTX_up_ref(source->context.get());
    tls_context = std::make_shared<ssl::context>(source->context.get());
    tls_source = std::move(source);
  }
  return tls_context;
}

void ServerState::register_session(const std::shared_ptr<HttpsSession>& session) {
  const std::lock_guard lock(sessions_mutex);
  sessions.emplace(session.get(), session);
}

void ServerState::unregister_session(const HttpsSession* session) {
  const std::lock_guard lock(sessions_mutex);
  sessions.erase(session);
}

void ServerState::accept_https() {
  https_acceptor.async_accept(connection_executor(), [this](error_code error, tcp::socket socket) {
    if (error == net::error::operation_aborted || !https_acceptor.is_open()) {
      return;  // the listener closed for the drain
    }
    if (!error) {
      if (connections.load() >= parts.options.max_connections) {
        parts.metrics.record_rejection(Rejection::connection_limit);
        error_code ignored;
        socket.close(ignored);
      } else {
        // Answers go out as soon as they are written, not held back for coalescing.
        error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        const std::size_t open = connections.fetch_add(1) + 1;
        if (open > connection_peak.load(std::memory_order_relaxed)) {
          connection_peak.store(open, std::memory_order_relaxed);  // a hint: races only delay a trim
        }
        parts.metrics.connection_opened();
        auto session = std::make_shared<HttpsSession>(std::move(socket), current_tls_context(), *this);
        register_session(session);
        session->start();
      }
    } else if (paused_after(error, "https", https_pause, &ServerState::accept_https)) {
      return;
    }
    accept_https();
  });
}

// After a failed accept: when the system is out of resources, logs (rate-limited) and re-arms
// the accept after accept_pause; returns false for other errors (a connection reset while in
// the backlog), which the caller retries at once.
bool ServerState::paused_after(const error_code& error, std::string_view listener, AcceptPause& pause,
                               void (ServerState::*again)()) {
  if (!out_of_resources(error)) {
    return false;
  }
  const auto now = Clock::now();
  if (!pause.last_logged || now - *pause.last_logged >= accept_log_interval) {
    log_event("error", "accept failed; pausing the listener",
              {{"listener", listener},
               {"err", error.message()},
               {"pause", std::to_string(accept_pause.count()) + "ms"},
               {"suppressed", std::to_string(pause.unlogged)}});
    pause.last_logged = now;
    pause.unlogged = 0;
  } else {
    ++pause.unlogged;
  }
  pause.timer.expires_after(accept_pause);
  pause.timer.async_wait([this, again](error_code wait_error) {
    if (!wait_error) {
      (this->*again)();  // the acceptor closed meanwhile: async_accept fails and the loop ends
    }
  });
  return true;
}

void ServerState::accept_health() {
  health_acceptor.async_accept(connection_executor(), [this](error_code error, tcp::socket socket) {
    if (error == net::error::operation_aborted || !health_acceptor.is_open()) {
      return;
    }
    if (!error) {
      std::make_shared<HealthSession>(std::move(socket), *this)->start();
    } else if (paused_after(error, "metrics", health_pause, &ServerState::accept_health)) {
      return;
    }
    accept_health();
  });
}

void ServerState::watch() {
  watch_timer.expires_after(parts.options.watch_interval);
  watch_timer.async_wait([this](error_code error) {
    if (error) {
      return;
    }
    return_idle_memory();
    if (std::optional<ReloadOutcome> reloaded = parts.certificates.poll()) {
      parts.metrics.record_certificate_reload(reloaded->succeeded);
      if (reloaded->succeeded) {
        parts.metrics.set_certificate_expiry(parts.certificates.current()->not_after);
      }
      log_event(reloaded->succeeded ? "info" : "error", "certificate reload", {{"result", reloaded->message}});
    }
    if (std::optional<ReloadOutcome> reloaded = parts.cluster.poll()) {
      parts.metrics.record_objects_reload(reloaded->succeeded);
      if (reloaded->succeeded) {
        const auto now = std::chrono::system_clock::now().time_since_epoch();
        parts.metrics.set_objects(parts.cluster.object_count(),
                                  std::chrono::duration_cast<std::chrono::seconds>(now).count());
      }
      log_event(reloaded->succeeded ? "info" : "error", "objects reload", {{"result", reloaded->message}});
    }
    watch();
  });
}

// malloc_trim walks every arena and gives free pages back (a few milliseconds for hundreds of
// MB); after a burst is the one time that is worth it.
void ServerState::return_idle_memory() {
  const std::size_t open = connections.load();
  if (connection_peak.load(std::memory_order_relaxed) >= open + trim_after_closed) {
    connection_peak.store(open, std::memory_order_relaxed);
    ::malloc_trim(0);
  }
}

void ServerState::flush_logs() {
  flush_timer.expires_after(std::chrono::milliseconds{200});
  flush_timer.async_wait([this](error_code error) {
    parts.log.flush();
    if (!error) {
      flush_logs();
    }
  });
}

void ServerState::wait_for_signal() {
  signals.async_wait([this](error_code error, int signal) {
    if (error) {
      return;
    }
    if (shutdown_started.load()) {
      log_event("warning", "second signal: stopping now", {{"signal", std::to_string(signal)}});
      io.stop();
      return;
    }
    begin_shutdown();
    wait_for_signal();
  });
}

void ServerState::begin_shutdown() {
  if (shutdown_started.exchange(true)) {
    return;
  }
  const std::string delay = std::to_string(parts.options.shutdown_delay.count()) + "ms";
  log_event("info", "shutting down: not ready; still serving for the shutdown delay", {{"delay", delay}});
  // The endpoints controller takes the pod out of the Service only after /readyz fails;
  // requests keep coming until then (KubeVirt's virt-api waits 5 s the same way).
  drain_timer.expires_after(parts.options.shutdown_delay);
  drain_timer.async_wait([this](error_code) { close_listener_and_drain(); });
}

void ServerState::close_listener_and_drain() {
  closing.store(true);
  net::post(https_acceptor.get_executor(), [this] {
    error_code ignored_error;
    https_acceptor.close(ignored_error);
    https_pause.timer.cancel();
  });
  std::vector<std::shared_ptr<HttpsSession>> open;
  {
    const std::lock_guard lock(sessions_mutex);
    for (const auto& [key, weak] : sessions) {
      if (auto session = weak.lock()) {
        open.push_back(std::move(session));
      }
    }
  }
  log_event("info", "listener closed; draining", {{"connections", std::to_string(open.size())}});
  // A second, at most half the grace period, for requests already on their way.
  const auto last_call = std::min(std::chrono::milliseconds{1000}, parts.options.grace_period / 2);
  for (const auto& session : open) {
    session->close_when_idle(last_call);
  }
  open.clear();
  drain_timer.expires_after(parts.options.grace_period);
  drain_timer.async_wait([this](error_code error) {
    if (error) {
      return;  // every connection ended first
    }
    log_event("warning", "grace period over; closing the remaining connections",
              {{"connections", std::to_string(connections.load())}});
    parts.log.flush();
    io.stop();
  });
  if (connections.load() == 0) {
    net::post(io, [this] { session_ended(); });
  }
}

void ServerState::session_ended() {
  if (!stopped.load() && closing.load() && connections.load() == 0) {
    net::post(io, [this] {
      log_event("info", "drained; exiting");
      io.stop();
    });
  }
}

// ------------------------------------------------------------------ public face

struct Server::Impl final : ServerState {
  using ServerState::ServerState;
};

namespace {

Result<bool> listen_on(tcp::acceptor& acceptor, const ListenAddress& address, std::string_view option) {
  error_code error;
  const net::ip::address ip = net::ip::make_address(address.host, error);
  if (error) {
    return Error{std::string(option) + " " + address.str() + ": " + error.message()};
  }
  const tcp::endpoint endpoint(ip, address.port);
  acceptor.open(endpoint.protocol(), error);
  if (!error) {
    acceptor.set_option(net::socket_base::reuse_address(true), error);
  }
  if (!error) {
    acceptor.bind(endpoint, error);
  }
  if (!error) {
    acceptor.listen(net::socket_base::max_listen_connections, error);
  }
  if (error) {
    return Error{std::string(option) + " " + address.str() + ": " + error.message()};
  }
  return true;
}

}  // namespace

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() = default;

Result<std::unique_ptr<Server>> Server::bind(ServerParts parts) {
  auto impl = std::make_unique<Impl>(std::move(parts));
  if (Result<bool> bound = listen_on(impl->https_acceptor, impl->parts.options.listen, "--listen"); !bound) {
    return bound.error();
  }
  if (Result<bool> bound = listen_on(impl->health_acceptor, impl->parts.options.metrics_listen, "--metrics-listen");
      !bound) {
    return bound.error();
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

std::uint16_t Server::https_port() const {
  return impl_->https_acceptor.local_endpoint().port();
}

std::uint16_t Server::metrics_port() const {
  return impl_->health_acceptor.local_endpoint().port();
}

void Server::shutdown() {
  Impl* impl = impl_.get();
  net::post(impl->io, [impl] { impl->begin_shutdown(); });
}

void Server::run(bool handle_signals) {
  Impl& impl = *impl_;
  if (const auto certificate = impl.parts.certificates.current()) {
    impl.parts.metrics.set_certificate_expiry(certificate->not_after);
  }
  if (handle_signals) {
    impl.signals.add(SIGTERM);
    impl.signals.add(SIGINT);
    impl.wait_for_signal();
  }
  net::dispatch(impl.https_acceptor.get_executor(), [&impl] { impl.accept_https(); });
  net::dispatch(impl.health_acceptor.get_executor(), [&impl] { impl.accept_health(); });
  impl.watch();
  impl.flush_logs();

  std::vector<std::thread> workers;
  workers.reserve(impl.threads - 1);
  for (unsigned i = 1; i < impl.threads; ++i) {
    workers.emplace_back([&impl] { impl.io.run(); });
  }
  impl.io.run();
  for (std::thread& worker : workers) {
    worker.join();
  }
  // Connections cut at the end of the grace period are released with the io_context.
  impl.stopped.store(true);
  impl.lookup_waits->close();
  impl.parts.log.flush();
}

}  // namespace vmgate::serve
