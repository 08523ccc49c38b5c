#include "vmgate/server/sources.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "server/serve/serve_test_support.hpp"

namespace vmgate::serve {
namespace {

namespace fs = std::filesystem;
using testing::TemporaryDirectory;
using testing::write_text;

constexpr const char* instancetype =
    "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n"
    "metadata:\n  name: NAME\nspec:\n  cpu:\n    guest: 1\n  memory:\n    guest: 1Gi\n";

std::string named(const std::string& name) {
  std::string text = instancetype;
  text.replace(text.find("NAME"), 4, name);
  return text;
}

// mtime granularity: make a rewrite visible even on coarse-timestamp file systems.
void touch_later(const fs::path& path) {
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds{1});
}

TEST(Sources, ClusterReloadsOnlyWhenFilesChange) {
  TemporaryDirectory directory;
  write_text(directory.path() / "a.yaml", named("a"));
  const admission::Pipeline pipeline;
  FileClusterSource source({directory.path().string()}, "default", pipeline);
  ASSERT_TRUE(source.load().ok());
  EXPECT_EQ(source.object_count(), 1U);
  EXPECT_FALSE(source.poll().has_value());

  write_text(directory.path() / "b.yaml", named("b"));
  std::optional<ReloadOutcome> added = source.poll();
  ASSERT_TRUE(added.has_value());
  EXPECT_TRUE(added->succeeded);
  EXPECT_EQ(added->message, "loaded 2 cluster objects");
  EXPECT_EQ(source.object_count(), 2U);

  write_text(directory.path() / "b.yaml", "kind: [\n");
  touch_later(directory.path() / "b.yaml");
  const auto before = source.current();
  std::optional<ReloadOutcome> broken = source.poll();
  ASSERT_TRUE(broken.has_value());
  EXPECT_FALSE(broken->succeeded);
  EXPECT_NE(broken->message.find("b.yaml:"), std::string::npos) << broken->message;
  EXPECT_NE(broken->message.find("(still serving the previous objects)"), std::string::npos);
  EXPECT_EQ(source.current(), before);
  EXPECT_FALSE(source.poll().has_value());  // not retried until the files change again

  fs::remove(directory.path() / "b.yaml");
  std::optional<ReloadOutcome> removed = source.poll();
  ASSERT_TRUE(removed.has_value());
  EXPECT_TRUE(removed->succeeded);
  EXPECT_EQ(source.object_count(), 1U);
}

TEST(Sources, ConfigMapVolumeIsReadOnceThroughItsVisibleFiles) {
  TemporaryDirectory directory;
  const fs::path volume = directory.path();
  fs::create_directories(volume / "..2026_11_22_v1");
  write_text(volume / "..2026_11_22_v1" / "types.yaml", named("a"));
  fs::create_directory_symlink("..2026_11_22_v1", volume / "..data");
  fs::create_symlink("..data/types.yaml", volume / "types.yaml");
  const admission::Pipeline pipeline;
  FileClusterSource source({volume.string()}, "default", pipeline);
  auto loaded = source.load();
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ((*loaded)->store.size(), 1U);

  // An update: a new version directory and ..data swapped to it.
  fs::create_directories(volume / "..2026_11_22_v2");
  write_text(volume / "..2026_11_22_v2" / "types.yaml", named("a") + "---\n" + named("b"));
  fs::create_directory_symlink("..2026_11_22_v2", volume / "..data_tmp");
  fs::rename(volume / "..data_tmp", volume / "..data");
  std::optional<ReloadOutcome> reloaded = source.poll();
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_TRUE(reloaded->succeeded) << reloaded->message;
  EXPECT_EQ(source.object_count(), 2U);
}

TEST(Sources, CertificateReloadKeepsThePreviousOnFailure) {
  TemporaryDirectory directory;
  testing::TestPki pki(directory.path());
  const auto [cert, key] = pki.issue("serving", "first");
  CertificateSource source(tls::ServerFiles{cert, key, {}}, TlsProfile::intermediate);
  ASSERT_TRUE(source.load().ok());
  EXPECT_FALSE(source.poll().has_value());
  const auto first = source.current();
  EXPECT_EQ(first->subject, "CN=first");

  write_text(key, "garbage\n");
  touch_later(key);
  std::optional<ReloadOutcome> failed = source.poll();
  ASSERT_TRUE(failed.has_value());
  EXPECT_FALSE(failed->succeeded);
  EXPECT_EQ(source.current(), first);

  pki.issue("serving", "second");  // rewrites both files
  touch_later(cert);
  touch_later(key);
  std::optional<ReloadOutcome> reloaded = source.poll();
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_TRUE(reloaded->succeeded) << reloaded->message;
  EXPECT_EQ(reloaded->message, "loaded certificate CN=second");
  EXPECT_EQ(source.current()->subject, "CN=second");
}

}  // namespace
}  // namespace vmgate::serve
