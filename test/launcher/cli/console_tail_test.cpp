// tail_console (launcher/src/cli/console_tail.cpp), the guest-console-log container: appends,
// truncation, a new file under the name, the end on a final status or a stop, with what is left
// printed first. The tail runs in a thread writing to a file the test reads.
#include "vmgate/launcher/console_tail.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/launcher/status_file.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using vmgate::testing::read_file;
using vmgate::testing::TemporaryDirectory;
using vmgate::testing::write_text;

class ConsoleTail : public ::testing::Test {
 protected:
  void start() {
    ConsoleTailConfig config;
    config.log_file = log_.string();
    config.status_file = status_.string();
    config.poll_interval = 10ms;
    out_.open(output_);
    exit_ = std::async(std::launch::async, [this, config] {
      return tail_console(config, out_, err_, [this](std::chrono::milliseconds timeout) {
        std::this_thread::sleep_for(timeout);
        return stop_.load();
      });
    });
  }

  // What the tail printed, once it has printed `expected` (or after 10 s).
  std::string printed_once(const std::string& expected) {
    for (int i = 0; i < 1000 && output() != expected; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    return output();
  }
  [[nodiscard]] std::string output() const { return fs::exists(output_) ? read_file(output_.string()) : ""; }

  void append(const std::string& text) {
    std::ofstream log(log_, std::ios::app | std::ios::binary);
    log << text;
  }
  void final_status(const std::string& phase) {
    ASSERT_TRUE(write_status_file(status_.string(), {phase, "guest powered off", "", "", ""}).ok());
  }
  int exit_code() {
    EXPECT_EQ(exit_.wait_for(10s), std::future_status::ready);
    return exit_.get();
  }

  TemporaryDirectory directory_;
  fs::path log_ = directory_.path() / "virt-serial0-log";
  fs::path status_ = directory_.path() / "vmgate-status.json";
  fs::path output_ = directory_.path() / "stdout";
  std::ofstream out_;
  std::ostringstream err_;  // read only after the tail has ended
  std::atomic<bool> stop_{false};
  std::future<int> exit_;
};

TEST_F(ConsoleTail, FollowsAppendsTruncationAndANewFileUntilTheStatusIsFinal) {
  start();  // no log yet: waited for
  std::this_thread::sleep_for(50ms);
  append("BIOS\n");
  EXPECT_EQ(printed_once("BIOS\n"), "BIOS\n");
  append("Linux version 6.1\n");
  EXPECT_EQ(printed_once("BIOS\nLinux version 6.1\n"), "BIOS\nLinux version 6.1\n");
  fs::resize_file(log_, 0);  // truncated: read again from the start
  append("tr\n");
  EXPECT_EQ(printed_once("BIOS\nLinux version 6.1\ntr\n"), "BIOS\nLinux version 6.1\ntr\n");
  const fs::path next = directory_.path() / "next";
  write_text(next, "new file\n");
  fs::rename(next, log_);  // a new file under the name
  const std::string all = "BIOS\nLinux version 6.1\ntr\nnew file\n";
  EXPECT_EQ(printed_once(all), all);
  append("reboot: Power down\n");
  final_status("Succeeded");
  EXPECT_EQ(exit_code(), 0) << err_.str();
  EXPECT_EQ(output(), all + "reboot: Power down\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(ConsoleTail, AStopPrintsWhatIsLeftAndEnds) {
  append(std::string(200 * 1024, 'x'));  // more than one buffer
  start();
  stop_.store(true);
  EXPECT_EQ(exit_code(), 0) << err_.str();
  EXPECT_EQ(output().size(), 200U * 1024U);
}

TEST_F(ConsoleTail, AFinalStatusWithoutALogEnds) {
  final_status("Failed");
  start();
  EXPECT_EQ(exit_code(), 0) << err_.str();
  EXPECT_EQ(output(), "");
}

TEST_F(ConsoleTail, ALogThatIsNotAFileIsAnErrorNamingIt) {
  fs::create_directories(log_);
  start();
  EXPECT_EQ(exit_code(), 1);
  EXPECT_EQ(err_.str(), "vmgate-launcher: " + log_.string() + ": not a regular file\n");
}

}  // namespace
}  // namespace vmgate::launcher
