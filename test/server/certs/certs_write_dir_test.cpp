// --write-dir: the kubelet's layout (..data symlink to a version directory, files as symlinks
// into ..data), swapped only when the content changes, the old version removed.
#include "vmgate/server/certs_write_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "support/temporary_directory.hpp"

namespace vmgate::certs {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::size_t version_directories(const fs::path& directory) {
  std::size_t count = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("..") && name != "..data" && entry.is_directory() && !entry.is_symlink()) {
      ++count;
    }
  }
  return count;
}

TEST(CertsWriteDir, WritesTheKubeletLayout) {
  vmgate::testing::TemporaryDirectory temporary;
  const fs::path dir = temporary.path() / "tls";
  Result<bool> written = write_atomically(dir, {{"tls.crt", "CERT"}, {"tls.key", "KEY"}, {"ca.crt", "CA"}});
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_TRUE(*written);
  EXPECT_TRUE(fs::is_symlink(dir / "..data"));
  EXPECT_EQ(fs::read_symlink(dir / "tls.crt"), "..data/tls.crt");
  EXPECT_EQ(read(dir / "tls.crt"), "CERT");
  EXPECT_EQ(read(dir / "tls.key"), "KEY");
  EXPECT_EQ(read(dir / "ca.crt"), "CA");
  struct stat key {};
  ASSERT_EQ(::stat((dir / "tls.key").c_str(), &key), 0);
  EXPECT_EQ(key.st_mode & 0777U, 0600U);
  EXPECT_EQ(version_directories(dir), 1U);
}

TEST(CertsWriteDir, UnchangedContentIsNotRewritten) {
  vmgate::testing::TemporaryDirectory temporary;
  const fs::path dir = temporary.path();
  ASSERT_TRUE(write_atomically(dir, {{"tls.crt", "A"}}));
  const fs::path version = fs::read_symlink(dir / "..data");
  Result<bool> again = write_atomically(dir, {{"tls.crt", "A"}});
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  EXPECT_EQ(fs::read_symlink(dir / "..data"), version);
}

TEST(CertsWriteDir, ANewVersionReplacesTheOldOne) {
  vmgate::testing::TemporaryDirectory temporary;
  const fs::path dir = temporary.path();
  ASSERT_TRUE(write_atomically(dir, {{"tls.crt", "A"}, {"tls.key", "a"}}));
  const fs::path first = fs::read_symlink(dir / "..data");
  // An open descriptor of the old version keeps reading the old content (a reader mid-swap).
  std::ifstream old_reader(dir / "tls.crt");
  Result<bool> swapped = write_atomically(dir, {{"tls.crt", "B"}, {"tls.key", "b"}});
  ASSERT_TRUE(swapped) << swapped.error().message;
  EXPECT_TRUE(*swapped);
  EXPECT_NE(fs::read_symlink(dir / "..data"), first);
  EXPECT_EQ(read(dir / "tls.crt"), "B");
  EXPECT_EQ(read(dir / "tls.key"), "b");
  EXPECT_FALSE(fs::exists(dir / first));
  EXPECT_EQ(version_directories(dir), 1U);
  std::string old_content;
  old_reader >> old_content;
  EXPECT_EQ(old_content, "A");
}

TEST(CertsWriteDir, AForeignFileIsNotReplaced) {
  vmgate::testing::TemporaryDirectory temporary;
  const fs::path dir = temporary.path();
  vmgate::testing::write_text(dir / "tls.crt", "mine");
  Result<bool> written = write_atomically(dir, {{"tls.crt", "A"}});
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().message.find("exists and is not a symlink into ..data"), std::string::npos);
  EXPECT_EQ(read(dir / "tls.crt"), "mine");
}

TEST(CertsWriteDir, NamesMustBePlain) {
  vmgate::testing::TemporaryDirectory temporary;
  EXPECT_EQ(write_atomically(temporary.path(), {{"../x", "A"}}).error().message,
            "--write-dir: \"../x\" is not a plain file name");
  EXPECT_FALSE(write_atomically(temporary.path(), {{"a/b", "A"}}));
}

TEST(CertsWriteDir, AnUncreatableDirectoryIsNamed) {
  vmgate::testing::TemporaryDirectory temporary;
  vmgate::testing::write_text(temporary.path() / "file", "x");
  Result<bool> written = write_atomically(temporary.path() / "file" / "dir", {{"a", "A"}});
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().message.rfind("--write-dir " + (temporary.path() / "file" / "dir").string(), 0), 0U);
}

}  // namespace
}  // namespace vmgate::certs
