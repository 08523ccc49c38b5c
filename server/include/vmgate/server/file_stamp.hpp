#pragma once
// Change detection for the files `vmgate serve` re-reads (certificates, --objects): what
// stat(2) says about each file, following symlinks, so that a mounted Secret or ConfigMap
// whose "..data" symlink is swapped to a new version counts as changed.
// Thread-safety: no shared state; reads the file system.
#include <cstdint>
#include <string>
#include <vector>

namespace vmgate::serve {

struct FileStamp {
  std::string path;
  bool exists = false;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = 0;
  std::int64_t modified_ns = 0;

  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

/// One file, symlinks followed; `exists` false when stat fails.
FileStamp stamp_file(const std::string& path);

/// The stamps of `inputs` as --objects reads them: a file, or a directory and every manifest
/// file under it (manifest_files). "-" (stdin) is never re-read and has no stamp.
std::vector<FileStamp> stamp_inputs(const std::vector<std::string>& inputs);

}  // namespace vmgate::serve
