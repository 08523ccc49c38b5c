// The launcher's status file (launcher/src/status/status_file.cpp): the format docs/launcher.md
// documents, written atomically, and the reader's errors.
#include "vmgate/launcher/status_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"

namespace vmgate::launcher {
namespace {

using vmgate::testing::read_file;
using vmgate::testing::TemporaryDirectory;
using vmgate::testing::write_text;

TEST(StatusFile, WritesTheDocumentedFormatAndReadsItBack) {
  const TemporaryDirectory directory;
  const std::string path = (directory.path() / "vmgate-status.json").string();
  ASSERT_TRUE(write_status_file(path, {"Running", "domain running", "2026-01-02T03:04:05Z", "2026-01-02T03:04:07Z",
                                       "2026-01-02T03:04:08Z"})
                  .ok());
  EXPECT_EQ(
      read_file(path),
      R"({"phase":"Running","reason":"domain running","paused":false,"timestamps":{"started":"2026-01-02T03:04:05Z",)"
      R"("running":"2026-01-02T03:04:07Z","updated":"2026-01-02T03:04:08Z"}})"
      "\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  Result<LauncherStatus> read = read_status_file(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->phase, "Running");
  EXPECT_EQ(read->reason, "domain running");
  EXPECT_EQ(read->running, "2026-01-02T03:04:07Z");
  EXPECT_FALSE(is_final_phase(read->phase));
  EXPECT_TRUE(is_final_phase("Succeeded"));
  EXPECT_TRUE(is_final_phase("Failed"));
  EXPECT_FALSE(is_final_phase("Scheduled"));
  // No running time before the domain runs; `updated` is now when not given.
  ASSERT_TRUE(write_status_file(path, {"Scheduled", "starting the domain", "2026-01-02T03:04:05Z", {}, {}}).ok());
  read = read_status_file(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read_file(path).find("\"running\""), std::string::npos);
  EXPECT_EQ(read->updated.size(), std::string("2026-01-02T03:04:05Z").size());
  EXPECT_FALSE(read->paused);
  // A paused domain (startStrategy Paused, virtctl pause).
  LauncherStatus paused{"Running", "domain paused by user", "2026-01-02T03:04:05Z", {}, {}, true};
  ASSERT_TRUE(write_status_file(path, paused).ok());
  EXPECT_NE(read_file(path).find(R"("reason":"domain paused by user","paused":true,)"), std::string::npos);
  read = read_status_file(path);
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->paused);
}

TEST(StatusFile, ReadErrorsNameTheFile) {
  const TemporaryDirectory directory;
  const std::string path = (directory.path() / "status.json").string();
  EXPECT_EQ(read_status_file(path).error().message, path + ": cannot open: No such file or directory");
  write_text(path, "{\"phase\":");
  EXPECT_EQ(read_status_file(path).error().message.rfind(path + ": not JSON: ", 0), 0U);
  write_text(path, R"({"phase":3})");
  EXPECT_EQ(read_status_file(path).error().message, path + ": phase: expected a string");
  EXPECT_EQ(
      write_status_file((directory.path() / "absent" / "s.json").string(), {"Failed", "x", "", "", ""}).error().message,
      (directory.path() / "absent" / "s.json.tmp").string() + ": cannot create: No such file or directory");
}

}  // namespace
}  // namespace vmgate::launcher
