// Lifecycle on the in-process test driver: create, events, shutdown, destroy, exit codes.
#include "vmgate/launcher/supervisor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <thread>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/launcher/libvirt.hpp"

namespace vmgate::launcher {
namespace {

constexpr const char* domain_xml = R"(<domain type='test'>
  <name>default_lifecycle</name>
  <memory unit='b'>67108864</memory>
  <os><type arch='x86_64'>hvm</type></os>
</domain>
)";

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<ConnectHandle> opened = open_connection("test:///default");
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    connection_ = std::move(*opened);
  }

  SupervisorConfig fast_config() {
    SupervisorConfig config;
    config.poll_interval = std::chrono::milliseconds(10);
    return config;
  }

  // fast_config() with the status file in a private directory.
  SupervisorConfig config_with_status() {
    SupervisorConfig config = fast_config();
    config.status_file = status_file();
    return config;
  }
  [[nodiscard]] std::string status_file() const { return (directory_.path() / "status.json").string(); }

  // Waits until the supervised domain is running and returns it.
  DomainHandle wait_running() {
    for (int i = 0; i < 500; ++i) {
      DomainHandle domain(virDomainLookupByName(connection_.get(), "default_lifecycle"));
      if (domain && virDomainIsActive(domain.get()) == 1) {
        return domain;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return DomainHandle();
  }

  vmgate::testing::TemporaryDirectory directory_;
  EventLoop loop_;
  ConnectHandle connection_;
};

TEST_F(SupervisorTest, GuestPowerOffExitsZero) {
  Supervisor supervisor(connection_.get(), fast_config());
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_xml); });
  DomainHandle domain = wait_running();
  ASSERT_TRUE(domain);
  ASSERT_EQ(virDomainShutdown(domain.get()), 0);  // what a guest poweroff looks like to libvirt
  const Outcome result = outcome.get();
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.reason, "guest powered off");
}

TEST_F(SupervisorTest, ExternalDestroyExitsNonZeroWithReason) {
  Supervisor supervisor(connection_.get(), fast_config());
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_xml); });
  DomainHandle domain = wait_running();
  ASSERT_TRUE(domain);
  ASSERT_EQ(virDomainDestroy(domain.get()), 0);
  const Outcome result = outcome.get();
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.reason, "domain destroyed outside the launcher");
}

// libvirt's event loop thread may be inside the lifecycle callback while the Supervisor is being
// destroyed (deregistering a callback that is being dispatched only marks it): what the callback
// touches must outlive the Supervisor. Under AddressSanitizer a callback reaching a destroyed
// Supervisor is a heap-use-after-free; the varying delays spread the destructions over the
// dispatches of the STOPPED events.
TEST_F(SupervisorTest, DestroyedWhileItsCallbackMayRun) {
  for (int i = 0; i < 300; ++i) {
    auto supervisor = std::make_unique<Supervisor>(connection_.get(), fast_config());
    DomainHandle domain(virDomainCreateXML(connection_.get(), domain_xml, 0));
    ASSERT_TRUE(domain) << last_libvirt_error();
    ASSERT_EQ(virDomainDestroy(domain.get()), 0);
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(i % 60);
    while (std::chrono::steady_clock::now() < until) {
    }
    supervisor.reset();
  }
}

// The test driver has no tap; the domain only names one, and the waiting is what is tested.
constexpr const char* domain_with_tap_xml = R"(<domain type='test'>
  <name>default_lifecycle</name>
  <memory unit='b'>67108864</memory>
  <os><type arch='x86_64'>hvm</type></os>
  <devices><interface type='ethernet'><target dev='tap0' managed='no'/></interface>
  <interface type='ethernet'><target dev="tapabc" managed="no"/></interface>
  <interface type='user'><target dev='vnet0'/></interface></devices>
</domain>
)";

TEST(UnmanagedTaps, FromTheTargets) {
  EXPECT_EQ(unmanaged_taps(domain_with_tap_xml), (std::vector<std::string>{"tap0", "tapabc"}));
  EXPECT_TRUE(unmanaged_taps(domain_xml).empty());
}

TEST_F(SupervisorTest, MissingTapFailsNamingIt) {
  SupervisorConfig config = config_with_status();
  config.tap_wait = std::chrono::seconds(1);
  config.link_exists = [](const std::string& name) { return name != "tapabc"; };
  std::vector<std::string> notes;
  config.on_note = [&notes](const std::string& line) { notes.push_back(line); };
  Supervisor supervisor(connection_.get(), config);
  const Outcome result = supervisor.run(domain_with_tap_xml);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.reason.find("tap device tapabc not created within 1 s"), std::string::npos) << result.reason;
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.front().find("waiting for the tap tapabc"), std::string::npos);
  const std::string text = vmgate::testing::read_file(status_file());
  EXPECT_NE(text.find(R"("phase":"Failed")"), std::string::npos) << text;
  EXPECT_NE(text.find("tapabc"), std::string::npos) << text;
}

TEST_F(SupervisorTest, TapThatAppearsLetsTheDomainStart) {
  SupervisorConfig config = fast_config();
  std::atomic<int> looks{0};
  config.link_exists = [&looks](const std::string& /*name*/) { return ++looks > 5; };
  Supervisor supervisor(connection_.get(), config);
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_with_tap_xml); });
  ASSERT_TRUE(wait_running());
  supervisor.request_stop();
  EXPECT_EQ(outcome.get().exit_code, 0);
}

TEST_F(SupervisorTest, StopWhileWaitingForATap) {
  SupervisorConfig config = fast_config();
  config.link_exists = [](const std::string& /*name*/) { return false; };
  Supervisor supervisor(connection_.get(), config);
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_with_tap_xml); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  supervisor.request_stop();
  const Outcome result = outcome.get();
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.reason, "stop requested before the domain started");
}

TEST_F(SupervisorTest, StopRequestShutsDownGracefully) {
  Supervisor supervisor(connection_.get(), config_with_status());
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_xml); });
  ASSERT_TRUE(wait_running());
  supervisor.request_stop();
  const Outcome result = outcome.get();
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.reason, "guest shut down after the stop request");
  const std::string text = vmgate::testing::read_file(status_file());
  EXPECT_NE(text.find(R"("phase":"Succeeded")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("running":")"), std::string::npos) << text;
}

TEST_F(SupervisorTest, ZeroGracePeriodDestroysAndExitsNonZero) {
  SupervisorConfig config = fast_config();
  config.grace_period = std::chrono::seconds(0);
  Supervisor supervisor(connection_.get(), config);
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_xml); });
  ASSERT_TRUE(wait_running());
  supervisor.request_stop();
  const Outcome result = outcome.get();
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.reason, "grace period of 0 s expired: domain destroyed");
  DomainHandle left(virDomainLookupByName(connection_.get(), "default_lifecycle"));
  EXPECT_FALSE(left && virDomainIsActive(left.get()) == 1);
}

TEST_F(SupervisorTest, LeftoverDomainOfTheSameNameIsCleanedUp) {
  DomainHandle leftover(virDomainCreateXML(connection_.get(), domain_xml, 0));
  ASSERT_TRUE(leftover) << last_libvirt_error();
  const unsigned int leftover_id = virDomainGetID(leftover.get());
  Supervisor supervisor(connection_.get(), fast_config());
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_xml); });
  // The supervised domain is a new one: the leftover was destroyed first.
  DomainHandle domain;
  for (int i = 0; i < 500 && !(domain && virDomainGetID(domain.get()) != leftover_id); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    domain = wait_running();
  }
  ASSERT_TRUE(domain);
  EXPECT_NE(virDomainGetID(domain.get()), leftover_id);
  EXPECT_NE(virDomainIsActive(leftover.get()), 1);
  supervisor.request_stop();
  const Outcome result = outcome.get();
  EXPECT_EQ(result.exit_code, 0) << result.reason;
}

// The test driver's crash dump stops the domain as crashed (STOPPED_CRASHED), as a QEMU guest
// panic with on_crash=destroy does.
TEST_F(SupervisorTest, GuestCrashExitsNonZeroWithReason) {
  Supervisor supervisor(connection_.get(), config_with_status());
  auto outcome = std::async(std::launch::async, [&] { return supervisor.run(domain_xml); });
  DomainHandle domain = wait_running();
  ASSERT_TRUE(domain);
  const std::string dump = (directory_.path() / "crash.core").string();
  ASSERT_EQ(virDomainCoreDump(domain.get(), dump.c_str(), VIR_DUMP_CRASH), 0) << last_libvirt_error();
  const Outcome result = outcome.get();
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.reason, "guest crashed");
  const std::string text = vmgate::testing::read_file(status_file());
  EXPECT_NE(text.find(R"("phase":"Failed","reason":"guest crashed")"), std::string::npos) << text;
}

TEST_F(SupervisorTest, InvalidDomainFailsWithLibvirtsReason) {
  Supervisor supervisor(connection_.get(), fast_config());
  const Outcome result = supervisor.run("<domain type='test'><name>x</name></domain>");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.reason.rfind("cannot start the domain: ", 0), 0U) << result.reason;
}

}  // namespace
}  // namespace vmgate::launcher
