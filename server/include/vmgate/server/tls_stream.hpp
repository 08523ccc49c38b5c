#pragma once
// A TLS server connection for Asio: a TlsChannel (tls_channel.hpp) driven by the socket's
// executor, with one deadline for whatever operation is pending, as beast::tcp_stream's
// expires_at. Models Asio's AsyncReadStream (for Beast's http::async_read); writes and the TLS
// handshake and shutdown are its own operations.
//
// Errors are Asio's ssl::stream's: OpenSSL's in net::error::get_ssl_category(), net::error::eof
// for the peer's close_notify, net::ssl::error::stream_truncated for an end without one, and
// beast::error::timeout when the deadline passed (the socket is then closed).
//
// Only serve/server.cpp and its tests include this header (Asio and Beast compile slowly).
// Not thread-safe: every call and every completion on the socket's executor (a strand).
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "vmgate/server/tls_channel.hpp"

namespace vmgate::serve {

class TlsStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  using Clock = std::chrono::steady_clock;
  using error_code = boost::system::error_code;

  /// `socket` connected; `context` and `method` outlive the stream.
  TlsStream(boost::asio::ip::tcp::socket socket, SSL_CTX* context, const BIO_METHOD* method)
      : socket_(std::move(socket)),
        channel_(context, prepared(socket_), method),
        deadline_(std::make_shared<Deadline>(socket_.get_executor(), socket_)) {}
  TlsStream(const TlsStream&) = delete;  // the channel's BIO and pending operations point at it
  TlsStream& operator=(const TlsStream&) = delete;
  ~TlsStream() { deadline_->timer.cancel(); }

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return socket_; }
  SSL* native_handle() const { return channel_.ssl(); }

  /// The deadline of the operations pending now and started later, until set again. When it
  /// passes during an operation, the socket is closed and the operation fails with
  /// beast::error::timeout; when it passes between operations, the next one fails so.
  void expires_at(Clock::time_point deadline) {
    Deadline& state = *deadline_;
    state.at = deadline;
    state.passed = false;
    // The timer is moved only to an earlier time: a later deadline is looked at when the
    // armed one fires, which saves a cancellation per request (each request moves it later).
    if (!state.armed || deadline < state.timer.expiry()) {
      arm(deadline_, deadline);
    }
  }

  void cancel() {
    error_code ignored;
    socket_.cancel(ignored);
  }

  /// Closes the socket (close(2) sends the FIN) and cancels what is pending.
  void close() {
    error_code ignored;
    socket_.close(ignored);
    deadline_->timer.cancel();
    deadline_->armed = false;
  }

  template <class Token>
  auto async_handshake(Token&& token) {
    return async_tls<void(error_code)>(Handshake{}, std::forward<Token>(token));
  }

  /// Reads what is decrypted into the first buffer of `buffers`: void(error_code, std::size_t).
  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    const boost::asio::mutable_buffer first = *boost::asio::buffer_sequence_begin(buffers);
    return async_tls<void(error_code, std::size_t)>(Read{first}, std::forward<Token>(token));
  }

  /// Writes all of `buffer`: void(error_code, std::size_t).
  template <class Token>
  auto async_write(boost::asio::const_buffer buffer, Token&& token) {
    return async_tls<void(error_code, std::size_t)>(Write{buffer}, std::forward<Token>(token));
  }

  /// Sends a close_notify and waits for the peer's: void(error_code).
  template <class Token>
  auto async_shutdown(Token&& token) {
    return async_tls<void(error_code)>(Shutdown{}, std::forward<Token>(token));
  }

  /// The socket's own bytes, under the same deadline: the lingering close after a refusal, the
  /// plain-HTTP answer to a client that did not speak TLS. void(error_code, std::size_t).
  template <class Handler>
  void async_read_plain(boost::asio::mutable_buffer buffer, Handler&& handler) {
    start_plain(std::forward<Handler>(handler), [&](auto done) { socket_.async_read_some(buffer, std::move(done)); });
  }
  template <class Handler>
  void async_write_plain(boost::asio::const_buffer buffer, Handler&& handler) {
    start_plain(std::forward<Handler>(handler),
                [&](auto done) { boost::asio::async_write(socket_, buffer, std::move(done)); });
  }

 private:
  // Shared with the timer's completion, which may run after the stream is gone.
  struct Deadline {
    Deadline(const executor_type& executor, boost::asio::ip::tcp::socket& owner_socket)
        : timer(executor), socket(owner_socket) {}
    boost::asio::steady_timer timer;
    boost::asio::ip::tcp::socket& socket;  // used only while the stream (its owner) exists
    Clock::time_point at = Clock::time_point::max();
    unsigned generation = 0;  // of the armed wait; a completion of an older one is ignored
    unsigned pending = 0;     // operations in progress
    bool armed = false;
    bool passed = false;  // passed with nothing pending: the next operation fails
    bool fired = false;   // closed the socket: what completes now timed out
  };

  static int prepared(boost::asio::ip::tcp::socket& socket) {
    socket.non_blocking(true);  // the BIO's send(2) must not block; throws only on a closed socket
    return socket.native_handle();
  }

  static void arm(const std::shared_ptr<Deadline>& state, Clock::time_point at) {
    state->armed = true;
    const unsigned generation = ++state->generation;
    state->timer.expires_at(at);
    state->timer.async_wait([weak = std::weak_ptr<Deadline>(state), generation](error_code error) {
      const std::shared_ptr<Deadline> locked = weak.lock();
      if (error || locked == nullptr || locked->generation != generation) {
        return;  // cancelled, re-armed, or the stream is gone
      }
      locked->armed = false;
      if (Clock::now() < locked->at) {
        arm(locked, locked->at);  // the deadline moved later while this wait was armed
      } else if (locked->pending > 0) {
        locked->fired = true;
        error_code ignored;
        locked->socket.close(ignored);
      } else {
        locked->passed = true;
      }
    });
  }

  // Whether an operation may start; counts it as pending when it may.
  bool begin_operation() {
    Deadline& state = *deadline_;
    if (state.passed || state.fired) {
      return false;
    }
    ++state.pending;
    return true;
  }

  error_code end_operation(error_code error) {
    Deadline& state = *deadline_;
    --state.pending;
    if (error && state.fired) {
      return boost::beast::error::timeout;
    }
    return error;
  }

  template <class Handler, class Start>
  void start_plain(Handler&& handler, Start&& start) {
    if (!begin_operation()) {
      boost::asio::post(socket_.get_executor(), [handler = std::forward<Handler>(handler)]() mutable {
        std::move(handler)(error_code(boost::beast::error::timeout), std::size_t{0});
      });
      return;
    }
    start([this, handler = std::forward<Handler>(handler)](error_code error, std::size_t bytes) mutable {
      std::move(handler)(end_operation(error), bytes);
    });
  }

  // The error of an SSL call that failed with `code` (SSL_get_error's), as Asio's ssl::stream
  // reports it.
  error_code ssl_failure(int code) const {
    if (code == SSL_ERROR_ZERO_RETURN) {
      return boost::asio::error::eof;  // the peer's close_notify
    }
    const unsigned long queued = ERR_get_error();
    if (code == SSL_ERROR_SYSCALL && channel_.send_error() != 0) {
      return {channel_.send_error(), boost::system::system_category()};
    }
    if (queued == 0 || ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
      return boost::asio::ssl::error::stream_truncated;  // the socket ended without a close_notify
    }
    return {static_cast<int>(queued), boost::asio::error::get_ssl_category()};
  }

  // Each makes its SSL call and returns what SSL_get_error says of it (SSL_ERROR_NONE: done),
  // adding what it moved to `bytes`.
  static int outcome(SSL* ssl, int result) { return result > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl, result); }
  struct Handshake {
    int operator()(SSL* ssl, std::size_t& /*bytes*/) const { return outcome(ssl, SSL_do_handshake(ssl)); }
  };
  struct Read {
    boost::asio::mutable_buffer buffer;
    int operator()(SSL* ssl, std::size_t& bytes) const {
      return buffer.size() == 0 ? SSL_ERROR_NONE : outcome(ssl, SSL_read_ex(ssl, buffer.data(), buffer.size(), &bytes));
    }
  };
  struct Write {
    boost::asio::const_buffer buffer;
    int operator()(SSL* ssl, std::size_t& bytes) const {
      // Without SSL_MODE_ENABLE_PARTIAL_WRITE, and with a BIO that never asks to retry a
      // write, one call encrypts and hands over the whole buffer.
      return buffer.size() == 0 ? SSL_ERROR_NONE
                                : outcome(ssl, SSL_write_ex(ssl, buffer.data(), buffer.size(), &bytes));
    }
  };
  struct Shutdown {
    int operator()(SSL* ssl, std::size_t& /*bytes*/) const {
      const int result = SSL_shutdown(ssl);
      // 0: our close_notify went and the peer's has not come: read, and call again.
      return result == 0 ? SSL_ERROR_WANT_READ : outcome(ssl, result);
    }
  };

  template <class Action, bool with_bytes>
  struct Operation {
    enum class Step { start, sent, received, posted };
    Operation(TlsStream* owner, Action what) : stream(owner), action(what) {}
    TlsStream* stream;
    Action action;
    Step step = Step::start;
    bool waited = false;  // an operation on the socket ran: the completion may be called directly
    int code = SSL_ERROR_NONE;
    std::size_t bytes = 0;
    error_code result;

    template <class Self>
    void operator()(Self& self, error_code error = {}, std::size_t transferred = 0) {
      TlsStream& s = *stream;
      switch (step) {
        case Step::start:
          if (!s.begin_operation()) {
            result = boost::beast::error::timeout;
            step = Step::posted;
            boost::asio::post(s.socket_.get_executor(), std::move(self));
            return;
          }
          break;
        case Step::sent:
          s.channel_.output_sent();
          error = still_open(error);
          if (error) {
            finish(self, error);
            return;
          }
          if (code != SSL_ERROR_WANT_READ) {
            finish(self, code == SSL_ERROR_NONE ? error_code() : result);
            return;
          }
          receive(self);
          return;
        case Step::received:
          error = still_open(error);
          if (error == boost::asio::error::eof) {
            s.channel_.input_ended();
          } else if (error) {
            finish(self, error);
            return;
          } else {
            s.channel_.input_received(transferred);
          }
          break;
        case Step::posted:
          complete(self);
          return;
      }
      perform(self);
    }

    // A socket closed (by the deadline or the owner) while its read or write was completing:
    // OpenSSL must not be called again, its BIO would send on a descriptor since reused.
    error_code still_open(error_code error) const {
      return !error && !stream->socket_.is_open() ? error_code(boost::asio::error::operation_aborted) : error;
    }

    template <class Self>
    void perform(Self& self) {
      TlsStream& s = *stream;
      // SSL_get_error reads the thread's error queue: it must hold nothing older. Peeking
      // is cheaper than clearing all sixteen slots when it is empty, as it nearly always is.
      if (ERR_peek_error() != 0) {
        ERR_clear_error();
      }
      code = action(s.channel_.ssl(), bytes);
      if (code != SSL_ERROR_NONE && code != SSL_ERROR_WANT_READ) {
        result = s.ssl_failure(code);  // read now: the error queue belongs to this thread
      }
      if (!s.channel_.pending_output().empty()) {
        // What the socket did not take goes before anything else happens: the handshake's
        // flight before its next read, an alert before the error is reported.
        step = Step::sent;
        waited = true;
        const std::string_view output = s.channel_.pending_output();
        boost::asio::async_write(s.socket_, boost::asio::buffer(output.data(), output.size()), std::move(self));
        return;
      }
      if (code == SSL_ERROR_WANT_READ) {
        receive(self);
        return;
      }
      finish(self, code == SSL_ERROR_NONE ? error_code() : result);
    }

    template <class Self>
    void receive(Self& self) {
      TlsStream& s = *stream;
      step = Step::received;
      waited = true;
      const std::span<char> space = s.channel_.input_space();
      s.socket_.async_read_some(boost::asio::buffer(space.data(), space.size()), std::move(self));
    }

    template <class Self>
    void finish(Self& self, error_code error) {
      result = stream->end_operation(error);
      if (!waited) {
        // Completed without waiting (decrypted bytes were buffered, the socket took the
        // answer at once): the handler must not run inside the call that started it.
        step = Step::posted;
        boost::asio::post(stream->socket_.get_executor(), std::move(self));
        return;
      }
      complete(self);
    }

    template <class Self>
    void complete(Self& self) {
      if constexpr (with_bytes) {
        self.complete(result, bytes);
      } else {
        self.complete(result);
      }
    }
  };

  template <class Signature, class Action, class Token>
  auto async_tls(Action action, Token&& token) {
    constexpr bool with_bytes = std::is_same_v<Signature, void(error_code, std::size_t)>;
    return boost::asio::async_compose<Token, Signature>(Operation<Action, with_bytes>(this, action), token, socket_);
  }

  boost::asio::ip::tcp::socket socket_;
  TlsChannel channel_;
  std::shared_ptr<Deadline> deadline_;
};

}  // namespace vmgate::serve
