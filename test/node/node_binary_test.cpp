// The `vmgate-node` executable as a process: it registers its plugins with a kubelet played by
// the test, and SIGTERM stops it with status 0 and its sockets removed.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "node/fake_kubelet.hpp"
#include "support/temporary_directory.hpp"

namespace vmgate::node {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A child process running vmgate-node with `args`, its stderr in `log`; killed if still running
// when the object goes.
class NodeProcess {
 public:
  NodeProcess(const std::vector<std::string>& options, const fs::path& log) {
    std::vector<std::string> args{std::string(VMGATE_NODE_BINARY)};
    args.insert(args.end(), options.begin(), options.end());
    std::vector<char*> argv;
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      ::dup2(fd, STDERR_FILENO);
      ::dup2(fd, STDOUT_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~NodeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;

  void signal(int number) const { ::kill(pid_, number); }
  // The exit status once it exited within `patience`; -1 otherwise (still running, or a signal).
  int wait(std::chrono::milliseconds patience) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(NodeBinary, RegistersThenStopsOnSigtermRemovingItsSockets) {
  const vmgate::testing::TemporaryDirectory directory;
  const fs::path plugins = directory.path() / "device-plugins";
  const fs::path root = directory.path() / "root";
  fs::create_directories(plugins);
  fs::create_directories(root / "dev");
  vmgate::testing::write_text(root / "dev/kvm", "");
  testing::FakeKubelet kubelet(plugins);

  NodeProcess node({"--device-plugin-dir", plugins.string(), "--devices", "kvm,vhost-net", "--dev-root", root.string()},
                   directory.path() / "node.log");
  const std::vector<testing::Registration> registrations = kubelet.wait_for(2);
  ASSERT_EQ(registrations.size(), 2U) << read_file(directory.path() / "node.log");
  EXPECT_TRUE(fs::is_socket(plugins / "kubevirt-kvm.sock"));
  EXPECT_TRUE(fs::is_socket(plugins / "kubevirt-vhost-net.sock"));

  const auto stopping = std::chrono::steady_clock::now();
  node.signal(SIGTERM);
  EXPECT_EQ(node.wait(10s), 0) << read_file(directory.path() / "node.log");
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, 3s);
  EXPECT_FALSE(fs::exists(plugins / "kubevirt-kvm.sock"));
  EXPECT_FALSE(fs::exists(plugins / "kubevirt-vhost-net.sock"));
  EXPECT_TRUE(fs::exists(plugins / "kubelet.sock"));
  const std::string log = read_file(directory.path() / "node.log");
  EXPECT_THAT(log, ::testing::HasSubstr(R"("msg":"vmgate-node stopped")"));
  // vhost-net is missing under the device root: said once at start.
  EXPECT_THAT(
      log, ::testing::HasSubstr(
               R"("msg":"device node missing: advertised as unhealthy","resource":"devices.kubevirt.io/vhost-net")"));
}

TEST(NodeBinary, RefusesBadOptionsWithStatus2) {
  const vmgate::testing::TemporaryDirectory directory;
  NodeProcess node({"--devices", "kvm,gpu"}, directory.path() / "node.log");
  EXPECT_EQ(node.wait(10s), 2);
  EXPECT_THAT(read_file(directory.path() / "node.log"), ::testing::HasSubstr("unknown device \"gpu\""));
}

}  // namespace
}  // namespace vmgate::node
