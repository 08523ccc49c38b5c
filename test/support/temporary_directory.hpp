#pragma once
// Files for tests that need real ones: a private temporary directory and whole-file writes.
#include <filesystem>
#include <string_view>

namespace vmgate::testing {

/// A fresh directory under the system's temporary directory, removed with the object.
class TemporaryDirectory {
 public:
  TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  ~TemporaryDirectory();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Replaces `path` with `content`; throws when it cannot.
void write_text(const std::filesystem::path& path, std::string_view content);

}  // namespace vmgate::testing
