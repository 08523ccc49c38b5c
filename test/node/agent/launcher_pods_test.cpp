// The status file as the agent opens it (launcher_pods.hpp read_status_file): a tenant controls
// the directory's contents, so links, FIFOs, huge and growing files are refused without blocking.
#include "vmgate/node/launcher_pods.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/temporary_directory.hpp"
#include "vmgate/node/launcher_status.hpp"

namespace vmgate::node {
namespace {

class StatusFileTest : public ::testing::Test {
 protected:
  [[nodiscard]] std::string dir() const { return directory_.path().string(); }
  [[nodiscard]] std::string file() const { return dir() + "/vmgate-status.json"; }
  void write(const std::string& text) const { std::ofstream(file()) << text; }
  vmgate::testing::TemporaryDirectory directory_;
};

TEST_F(StatusFileTest, ReadsARegularFile) {
  write(R"({"phase":"Running","reason":"domain running"})");
  Result<std::optional<std::string>> text = read_status_file(dir());
  ASSERT_TRUE(text.ok()) << text.error().message;
  ASSERT_TRUE(text->has_value());
  EXPECT_TRUE(parse_launcher_status(**text).ok());
}

TEST_F(StatusFileTest, NoFileOrNoDirectoryIsNothingYet) {
  Result<std::optional<std::string>> text = read_status_file(dir());
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(text->has_value());
  text = read_status_file(dir() + "/missing");
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(text->has_value());
}

TEST_F(StatusFileTest, ASymbolicLinkIsRefused) {
  std::ofstream(dir() + "/secret") << R"({"phase":"Failed","reason":"the node's file"})";
  std::filesystem::create_symlink(dir() + "/secret", file());
  Result<std::optional<std::string>> text = read_status_file(dir());
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("symbolic link"), std::string::npos);
}

TEST_F(StatusFileTest, ASymbolicLinkedDirectoryIsRefused) {
  std::filesystem::create_directory(dir() + "/real");
  std::ofstream(dir() + "/real/vmgate-status.json") << R"({"phase":"Failed","reason":"x"})";
  std::filesystem::create_directory_symlink(dir() + "/real", dir() + "/private");
  EXPECT_FALSE(read_status_file(dir() + "/private").ok());
}

TEST_F(StatusFileTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(file().c_str(), 0600), 0);
  Result<std::optional<std::string>> text = read_status_file(dir());
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("not a regular file"), std::string::npos);
}

TEST_F(StatusFileTest, ADirectoryIsRefused) {
  std::filesystem::create_directory(file());
  EXPECT_FALSE(read_status_file(dir()).ok());
}

TEST_F(StatusFileTest, AHugeFileIsRefusedUnread) {
  {
    std::ofstream out(file());
    out << std::string(max_status_file_bytes + 1, ' ');
  }
  Result<std::optional<std::string>> text = read_status_file(dir());
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("larger than 65536"), std::string::npos);
  // Exactly the limit is read.
  std::filesystem::resize_file(file(), max_status_file_bytes);
  EXPECT_TRUE(read_status_file(dir()).ok());
  // A sparse file of 1 TiB: refused by its size, never read.
  std::filesystem::resize_file(file(), std::uintmax_t{1} << 40U);
  EXPECT_FALSE(read_status_file(dir()).ok());
}

}  // namespace
}  // namespace vmgate::node
