#pragma once
// The OpenSSL side of one server connection, without an event loop: the SSL object and the BIO
// that joins it to the socket. Bytes read from the socket are handed to OpenSSL with one copy;
// records OpenSSL writes go straight to the socket with a non-blocking send(2), and only what
// the socket does not take at once is kept for the caller to send when it can. (Asio's
// ssl::stream puts a BIO pair between the two: two more copies of every byte, two zero-filled
// 17 KiB buffers per connection.)
// The event loop that drives it (reads the socket when OpenSSL wants input, sends what is
// pending) is serve::TlsStream (tls_stream.hpp). Not thread-safe: one connection, one strand.
#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace vmgate::serve {

struct BioMethodFree {
  void operator()(BIO_METHOD* method) const { BIO_meth_free(method); }
};
using BioMethodPtr = std::unique_ptr<BIO_METHOD, BioMethodFree>;

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using SslPtr = std::unique_ptr<SSL, SslFree>;

class TlsChannel {
 public:
  /// The BIO method every channel's BIO is made from: one per server, shared by its connections
  /// (immutable once made). Throws std::bad_alloc when OpenSSL cannot allocate it.
  static BioMethodPtr make_bio_method();

  /// A server-side channel on a connected, non-blocking socket. Throws std::bad_alloc when
  /// OpenSSL cannot allocate the SSL object or its BIO.
  TlsChannel(SSL_CTX* context, int socket, const BIO_METHOD* method);
  TlsChannel(const TlsChannel&) = delete;  // the BIO points at this object
  TlsChannel& operator=(const TlsChannel&) = delete;
  ~TlsChannel();

  SSL* ssl() const { return ssl_.get(); }

  /// Where the next read from the socket goes (allocated on first use).
  std::span<char> input_space();
  /// `bytes` were read into input_space().
  void input_received(std::size_t bytes);
  /// The peer closed its sending side: once the bytes received are used, OpenSSL sees the end.
  void input_ended();

  /// Records OpenSSL wrote that the socket did not take yet, to be sent in order; nothing more
  /// goes to the socket directly until output_sent().
  std::string_view pending_output() const { return pending_output_; }
  void output_sent();

  /// errno of a failed send(2) (0: none): OpenSSL reports it as SSL_ERROR_SYSCALL.
  int send_error() const { return send_error_; }

  // Two whole records (16 KiB + overhead each): a request of up to ~32 KiB is one read(2).
  static constexpr std::size_t input_capacity = std::size_t{34} * 1024;

 private:
  static int read_callback(BIO* bio, char* out, int size);
  static int write_callback(BIO* bio, const char* data, int size);
  static long control_callback(BIO* bio, int command, long number, void* pointer);
  static int create_callback(BIO* bio);

  int socket_;
  SslPtr ssl_;
  std::unique_ptr<char[]> input_;  // [input_begin_, input_end_) not yet taken by OpenSSL
  std::size_t input_begin_ = 0;
  std::size_t input_end_ = 0;
  bool input_ended_ = false;
  std::string pending_output_;
  int send_error_ = 0;
};

}  // namespace vmgate::serve
