#include "vmgate/server/file_stamp.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "vmgate/kube/manifest_loader.hpp"

namespace vmgate::serve {

FileStamp stamp_file(const std::string& path) {
  FileStamp stamp;
  stamp.path = path;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return stamp;
  }
  stamp.exists = true;
  stamp.device = static_cast<std::uint64_t>(info.st_dev);
  stamp.inode = static_cast<std::uint64_t>(info.st_ino);
  stamp.size = static_cast<std::int64_t>(info.st_size);
  stamp.modified_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  return stamp;
}

std::vector<FileStamp> stamp_inputs(const std::vector<std::string>& inputs) {
  std::vector<FileStamp> stamps;
  for (const std::string& input : inputs) {
    if (input == "-") {
      continue;
    }
    stamps.push_back(stamp_file(input));
    std::error_code error;
    if (std::filesystem::is_directory(input, error)) {
      Result<std::vector<std::filesystem::path>> files = kube::manifest_files(input);
      if (files) {
        for (const std::filesystem::path& file : *files) {
          stamps.push_back(stamp_file(file.string()));
        }
      }
    }
  }
  return stamps;
}

}  // namespace vmgate::serve
