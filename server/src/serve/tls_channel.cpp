#include "vmgate/server/tls_channel.hpp"

#include <openssl/bio.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace vmgate::serve {

BioMethodPtr TlsChannel::make_bio_method() {
  BioMethodPtr method(BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "vmgate socket"));
  if (method == nullptr || BIO_meth_set_read(method.get(), &TlsChannel::read_callback) != 1 ||
      BIO_meth_set_write(method.get(), &TlsChannel::write_callback) != 1 ||
      BIO_meth_set_ctrl(method.get(), &TlsChannel::control_callback) != 1 ||
      BIO_meth_set_create(method.get(), &TlsChannel::create_callback) != 1) {
    throw std::bad_alloc();
  }
  return method;
}

TlsChannel::TlsChannel(SSL_CTX* context, int socket, const BIO_METHOD* method)
    : socket_(socket), ssl_(SSL_new(context)) {
  if (ssl_ == nullptr) {
    throw std::bad_alloc();
  }
  BIO* bio = BIO_new(method);
  if (bio == nullptr) {
    throw std::bad_alloc();
  }
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_.get(), bio, bio);  // the SSL object owns the BIO from here
  SSL_set_accept_state(ssl_.get());
  // OpenSSL asks the BIO for as much as its buffer holds rather than a record header and then
  // its body: whatever one socket read brought is handed over in one copy.
  SSL_set_read_ahead(ssl_.get(), 1);
}

TlsChannel::~TlsChannel() = default;

std::span<char> TlsChannel::input_space() {
  if (input_ == nullptr) {
    input_.reset(new char[input_capacity]);  // not zero-filled: only written bytes are read
  }
  if (input_begin_ == input_end_) {
    input_begin_ = input_end_ = 0;
  } else if (input_end_ == input_capacity) {
    std::memmove(input_.get(), input_.get() + input_begin_, input_end_ - input_begin_);
    input_end_ -= input_begin_;
    input_begin_ = 0;
  }
  return {input_.get() + input_end_, input_capacity - input_end_};
}

void TlsChannel::input_received(std::size_t bytes) {
  input_end_ = std::min(input_end_ + bytes, input_capacity);
}

void TlsChannel::input_ended() {
  input_ended_ = true;
}

void TlsChannel::output_sent() {
  pending_output_.clear();
  if (pending_output_.capacity() > input_capacity) {
    std::string().swap(pending_output_);  // a large answer's backlog is not kept for the connection's life
  }
}

int TlsChannel::create_callback(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

int TlsChannel::read_callback(BIO* bio, char* out, int size) {
  auto& channel = *static_cast<TlsChannel*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const std::size_t available = channel.input_end_ - channel.input_begin_;
  if (available == 0) {
    if (channel.input_ended_) {
      return 0;  // the end of the stream: OpenSSL tells a truncation from a close_notify
    }
    BIO_set_retry_read(bio);
    return -1;
  }
  const std::size_t taken = std::min(available, static_cast<std::size_t>(std::max(size, 0)));
  std::memcpy(out, channel.input_.get() + channel.input_begin_, taken);
  channel.input_begin_ += taken;
  return static_cast<int>(taken);
}

int TlsChannel::write_callback(BIO* bio, const char* data, int size) {
  auto& channel = *static_cast<TlsChannel*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (size <= 0) {
    return 0;
  }
  std::size_t sent = 0;
  // Bytes already waiting go first: a direct send would overtake them.
  if (channel.pending_output_.empty() && channel.send_error_ == 0) {
    ssize_t result = 0;
    do {
      result = ::send(channel.socket_, data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
    } while (result < 0 && errno == EINTR);
    if (result >= 0) {
      sent = static_cast<std::size_t>(result);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      channel.send_error_ = errno;
      return -1;  // no retry flag: OpenSSL reports SSL_ERROR_SYSCALL
    }
  } else if (channel.send_error_ != 0) {
    return -1;
  }
  channel.pending_output_.append(data + sent, static_cast<std::size_t>(size) - sent);
  return size;
}

long TlsChannel::control_callback(BIO* bio, int command, long /*number*/, void* /*pointer*/) {
  const auto& channel = *static_cast<const TlsChannel*>(BIO_get_data(bio));
  switch (command) {
    case BIO_CTRL_FLUSH:
      return 1;  // what the socket did not take is the stream's to send
    case BIO_CTRL_PENDING:
      return static_cast<long>(channel.input_end_ - channel.input_begin_);
    case BIO_CTRL_WPENDING:
      return static_cast<long>(channel.pending_output_.size());
    case BIO_CTRL_EOF:
      return channel.input_ended_ && channel.input_begin_ == channel.input_end_ ? 1 : 0;
    default:
      return 0;
  }
}

}  // namespace vmgate::serve
