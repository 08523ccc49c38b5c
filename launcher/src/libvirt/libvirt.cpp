#include "vmgate/launcher/libvirt.hpp"

#include <libvirt/virterror.h>

#include <filesystem>
#include <fstream>

namespace vmgate::launcher {

std::string last_libvirt_error() {
  const char* message = virGetLastErrorMessage();
  return message != nullptr ? std::string(message) : std::string("unknown libvirt error");
}

namespace {
// libvirt prints every error to stderr unless an error function is set; the launcher reports
// errors itself (last_libvirt_error), so the default printing is silenced.
void ignore_error(void* /*user_data*/, virErrorPtr /*error*/) {}
void wake(int /*timer*/, void* /*user_data*/) {}
}  // namespace

EventLoop::EventLoop() {
  virSetErrorFunc(nullptr, ignore_error);
  virEventRegisterDefaultImpl();
  // A periodic timer makes virEventRunDefaultImpl return regularly, so the thread sees stop_.
  wake_timer_ = virEventAddTimeout(100, wake, nullptr, nullptr);
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      virEventRunDefaultImpl();
    }
  });
}

EventLoop::~EventLoop() {
  stop_.store(true);
  thread_.join();
  if (wake_timer_ >= 0) {
    virEventRemoveTimeout(wake_timer_);
  }
}

std::string embed_uri(std::string_view root) {
  return "qemu:///embed?root=" + std::string(root);
}

Result<std::string> write_embed_qemu_conf(const std::string& root) {
  const std::filesystem::path etc = std::filesystem::path(root) / "etc";
  std::error_code error;
  std::filesystem::create_directories(etc, error);
  if (error) {
    return Error{"cannot create " + etc.string() + ": " + error.message()};
  }
  const std::filesystem::path file = etc / "qemu.conf";
  std::ofstream out(file);
  out << "# Written by vmgate-launcher for the embedded QEMU driver. QEMU runs as root (another user\n"
         "# makes every connect re-probe QEMU's capabilities) and writes its output to files (there is\n"
         "# no virtlogd); libvirt tracks no file owners and makes no mount namespace or cgroups.\n"
         "user = \"root\"\n"
         "group = \"root\"\n"
         "stdio_handler = \"file\"\n"
         "remember_owner = 0\n"
         "namespaces = [ ]\n"
         "cgroup_controllers = [ ]\n";
  out.close();
  if (!out) {
    return Error{"cannot write " + file.string()};
  }
  return file.string();
}

Result<ConnectHandle> open_connection(const std::string& uri) {
  ConnectHandle connection(virConnectOpen(uri.c_str()));
  if (!connection) {
    return Error{"cannot connect to " + uri + ": " + last_libvirt_error()};
  }
  return connection;
}

}  // namespace vmgate::launcher
