#pragma once
// RAII for libvirt handles and the event loop the embedded QEMU driver needs (without one,
// virConnectOpen fails: "An event loop implementation must be registered"; docs/launcher.md,
// "Event loop").
// Errors are values carrying libvirt's own message.
// Thread-safety: a Connection may be used from several threads (libvirt locks internally);
// EventLoop owns its thread.
#include <libvirt/libvirt.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "vmgate/common/result.hpp"

namespace vmgate::launcher {

struct ConnectCloser {
  void operator()(virConnectPtr connection) const { virConnectClose(connection); }
};
struct DomainFreer {
  void operator()(virDomainPtr domain) const { virDomainFree(domain); }
};
struct StreamFreer {
  void operator()(virStreamPtr stream) const { virStreamFree(stream); }
};
using ConnectHandle = std::unique_ptr<virConnect, ConnectCloser>;
using DomainHandle = std::unique_ptr<virDomain, DomainFreer>;
using StreamHandle = std::unique_ptr<virStream, StreamFreer>;

/// libvirt's message for the calling thread's last error ("unknown libvirt error" if none).
std::string last_libvirt_error();

/// Runs virEventRunDefaultImpl in a thread from construction to destruction. libvirt's default
/// event implementation is registered once per process (virEventRegisterDefaultImpl); the
/// loop itself belongs to this object. Construct it before opening any connection.
class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

 private:
  std::atomic<bool> stop_{false};
  int wake_timer_ = -1;
  std::thread thread_;
};

/// Writes `<root>/etc/qemu.conf` for the embedded driver (docs/launcher.md, "qemu.conf" says why
/// each line is needed): root user (no 12 s capability re-probe), stdio_handler file (no virtlogd),
/// remember_owner 0, no mount namespace, no cgroups. Errors: the file cannot be written.
Result<std::string> write_embed_qemu_conf(const std::string& root);

/// "qemu:///embed?root=<root>".
std::string embed_uri(std::string_view root);

/// Opens `uri`. Errors: libvirt's message.
Result<ConnectHandle> open_connection(const std::string& uri);

}  // namespace vmgate::launcher
