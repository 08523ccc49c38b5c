// The control socket (control_socket.hpp): the line protocol, its limits, and pause/unpause of
// a supervised domain on the in-process test driver.
#include "vmgate/launcher/control_socket.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/launcher/libvirt.hpp"
#include "vmgate/launcher/supervisor.hpp"

namespace vmgate::launcher {
namespace {

// A client: connects, sends `request` (as given: no newline added), reads the answer until the
// launcher closes (5 s at most). `keep_open`: do not send anything after `request`.
std::string ask(const std::string& path, const std::string& request) {
  const UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {  // NOLINT
    return "<connect: " + std::string(std::strerror(errno)) + ">";
  }
  if (!request.empty()) {
    (void)::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL);
  }
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd watched{fd.get(), POLLIN, 0};
    if (::poll(&watched, 1, 100) <= 0) {
      continue;
    }
    char buffer[256];
    const ssize_t got = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (got <= 0) {
      return answer;
    }
    answer.append(buffer, static_cast<std::size_t>(got));
  }
  return answer + "<timeout>";
}

TEST(ControlCommand, ParsesTheTwoCommands) {
  EXPECT_EQ(*parse_control_command("pause"), ControlCommand::pause);
  EXPECT_EQ(*parse_control_command("unpause\r"), ControlCommand::unpause);
  EXPECT_FALSE(parse_control_command("Pause").ok());
  EXPECT_FALSE(parse_control_command("pause now").ok());
  EXPECT_FALSE(parse_control_command("").ok());
}

TEST(ControlCommand, AnswerIsOneLine) {
  EXPECT_EQ(control_answer(""), "ok\n");
  EXPECT_EQ(control_answer("domain is not paused"), "error domain is not paused\n");
  EXPECT_EQ(control_answer("two\nlines"), "error two lines\n");
}

// A ControlSocket served by a thread of the test, answering with `verdict`.
class ControlSocketTest : public ::testing::Test {
 protected:
  void serve(std::string verdict) {
    Result<ControlSocket> listening = ControlSocket::listen(path());
    ASSERT_TRUE(listening.ok()) << listening.error().message;
    socket_.emplace(std::move(*listening));
    server_ = std::thread([this, verdict = std::move(verdict)] {
      while (!done_.load()) {
        socket_->serve(std::chrono::milliseconds(20), [&](ControlCommand command) {
          commands_.push_back(command);
          return verdict;
        });
      }
    });
  }
  void TearDown() override {
    done_.store(true);
    if (server_.joinable()) {
      server_.join();
    }
  }
  [[nodiscard]] std::string path() const { return (directory_.path() / "vmgate-control.sock").string(); }

  vmgate::testing::TemporaryDirectory directory_;
  std::optional<ControlSocket> socket_;
  std::thread server_;
  std::atomic<bool> done_{false};
  std::vector<ControlCommand> commands_;  // server thread until joined
};

TEST_F(ControlSocketTest, AnswersOkOrTheError) {
  serve("");
  EXPECT_EQ(ask(path(), "pause\n"), "ok\n");
  EXPECT_EQ(ask(path(), "unpause\n"), "ok\n");
  struct stat info {};
  ASSERT_EQ(::stat(path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  TearDown();
  EXPECT_EQ(commands_, (std::vector<ControlCommand>{ControlCommand::pause, ControlCommand::unpause}));
}

TEST_F(ControlSocketTest, RefusesGarbageAndLongRequests) {
  serve("domain is already paused");
  EXPECT_EQ(ask(path(), "pause\n"), "error domain is already paused\n");
  EXPECT_EQ(ask(path(), "reboot\n"), "error unknown command (pause or unpause)\n");
  EXPECT_EQ(ask(path(), std::string(100, 'p')), "error request longer than 64 bytes\n");
  EXPECT_EQ(ask(path(), std::string(70, ' ') + "\n"), "error request longer than 64 bytes\n");
  TearDown();
  EXPECT_EQ(commands_.size(), 1U);
}

TEST_F(ControlSocketTest, SilentClientDoesNotBlockTheNextOne) {
  serve("");
  // A client that connects and says nothing is dropped after the client timeout, and the loop
  // keeps turning meanwhile (serve never blocks longer than its timeout).
  auto silent = std::async(std::launch::async, [&] { return ask(path(), ""); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  const std::string next = ask(path(), "pause\n");
  EXPECT_EQ(silent.get().rfind("error timeout", 0), 0U);
  EXPECT_EQ(next, "ok\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(7));
}

TEST_F(ControlSocketTest, ReplacesALeftoverSocketButNotAFile) {
  // A socket file nobody listens on, as a launcher killed with SIGKILL leaves it.
  const UniqueFd stale(::socket(AF_UNIX, SOCK_STREAM, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path().c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(stale.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);  // NOLINT
  EXPECT_TRUE(ControlSocket::listen(path()).ok());
  const std::string file = (directory_.path() / "plain").string();
  std::ofstream(file) << "x";
  EXPECT_FALSE(ControlSocket::listen(file).ok());
  EXPECT_FALSE(ControlSocket::listen("/" + std::string(200, 'a')).ok());
}

constexpr const char* domain_xml = R"(<domain type='test'>
  <name>default_control</name>
  <memory unit='b'>67108864</memory>
  <os><type arch='x86_64'>hvm</type></os>
</domain>
)";

// The supervisor serves the socket: pause and unpause reach libvirt and the status file.
TEST(SupervisorControl, PausesAndUnpausesTheDomain) {
  vmgate::testing::TemporaryDirectory directory;
  const EventLoop loop;
  Result<ConnectHandle> connection = open_connection("test:///default");
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  SupervisorConfig config;
  config.poll_interval = std::chrono::milliseconds(10);
  config.status_file = (directory.path() / "status.json").string();
  config.control_socket = (directory.path() / "vmgate-control.sock").string();
  Supervisor supervisor(connection->get(), config);
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_xml); });
  DomainHandle domain;
  for (int i = 0; i < 500 && !(domain && std::filesystem::exists(config.control_socket)); ++i) {
    domain = DomainHandle(virDomainLookupByName(connection->get(), "default_control"));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(domain);
  const auto state = [&] {
    int value = 0;
    int reason = 0;
    virDomainGetState(domain.get(), &value, &reason, 0);
    return value;
  };
  EXPECT_EQ(ask(config.control_socket, "unpause\n"), "error domain is not paused\n");
  EXPECT_EQ(ask(config.control_socket, "pause\n"), "ok\n");
  EXPECT_EQ(state(), VIR_DOMAIN_PAUSED);
  std::string status = vmgate::testing::read_file(config.status_file);
  EXPECT_NE(status.find(R"("reason":"domain paused by user","paused":true)"), std::string::npos) << status;
  EXPECT_EQ(ask(config.control_socket, "pause\n"), "error domain is already paused\n");
  EXPECT_EQ(ask(config.control_socket, "unpause\n"), "ok\n");
  EXPECT_EQ(state(), VIR_DOMAIN_RUNNING);
  status = vmgate::testing::read_file(config.status_file);
  EXPECT_NE(status.find(R"("reason":"domain running","paused":false)"), std::string::npos) << status;
  supervisor.request_stop();
  EXPECT_EQ(outcome.get().exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(config.control_socket));  // removed with the supervision
}

}  // namespace
}  // namespace vmgate::launcher
