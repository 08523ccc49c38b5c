#include "vmgate/server/certs_write_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

namespace vmgate::certs {

namespace fs = std::filesystem;

namespace {

constexpr const char* data_link = "..data";

std::string errno_text() {
  return std::strerror(errno);
}

std::optional<std::string> read_whole(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return std::nullopt;
  }
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

// Whether ..data already holds exactly these files with this content.
bool unchanged(const fs::path& directory, const std::map<std::string, std::string>& files) {
  std::error_code error;
  const fs::path current = directory / data_link;
  if (!fs::is_symlink(fs::symlink_status(current, error))) {
    return false;
  }
  for (const auto& [name, content] : files) {
    const std::optional<std::string> found = read_whole(current / name);
    if (!found || *found != content) {
      return false;
    }
    if (!fs::is_symlink(fs::symlink_status(directory / name, error))) {
      return false;
    }
  }
  return true;
}

Status write_file(const fs::path& path, const std::string& content, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return Error{"--write-dir: cannot create " + path.string() + ": " + errno_text()};
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t result = ::write(fd, content.data() + written, content.size() - written);
    if (result < 0) {
      if (errno == EINTR) {
        continue;
      }
      const std::string reason = errno_text();
      ::close(fd);
      return Error{"--write-dir: cannot write " + path.string() + ": " + reason};
    }
    written += static_cast<std::size_t>(result);
  }
  ::fchmod(fd, mode);  // the umask may have narrowed it
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return Error{"--write-dir: cannot write " + path.string() + ": " + errno_text()};
  }
  return Ok{};
}

bool plain_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && !name.starts_with("..") && name != ".";
}

}  // namespace

Result<bool> write_atomically(const fs::path& directory, const std::map<std::string, std::string>& files) {
  for (const auto& [name, content] : files) {
    if (!plain_name(name)) {
      return Error{"--write-dir: \"" + name + "\" is not a plain file name"};
    }
  }
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) {
    return Error{"--write-dir " + directory.string() + ": " + error.message()};
  }
  if (unchanged(directory, files)) {
    return false;
  }
  // A new version directory: ..<UTC time>.<random>, as the kubelet names them.
  std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "..%Y_%m_%d_%H_%M_%S.", &parts);
  std::string pattern = (directory / stamp).string() + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Error{"--write-dir: cannot create a directory in " + directory.string() + ": " + errno_text()};
  }
  const fs::path version = pattern;
  ::chmod(version.c_str(), 0755);
  for (const auto& [name, content] : files) {
    const mode_t mode = name.ends_with(".key") ? 0600 : 0644;
    if (Status written = write_file(version / name, content, mode); !written) {
      fs::remove_all(version, error);
      return written.error();
    }
  }
  // ..data_tmp -> the new version, renamed over ..data: readers see the old or the new.
  const fs::path temporary = directory / "..data_tmp";
  fs::remove(temporary, error);
  if (::symlink(version.filename().c_str(), temporary.c_str()) != 0) {
    const std::string reason = errno_text();
    fs::remove_all(version, error);
    return Error{"--write-dir: cannot create " + temporary.string() + ": " + reason};
  }
  std::optional<fs::path> previous;
  if (fs::is_symlink(fs::symlink_status(directory / data_link, error))) {
    previous = directory / fs::read_symlink(directory / data_link, error);
  }
  if (::rename(temporary.c_str(), (directory / data_link).c_str()) != 0) {
    const std::string reason = errno_text();
    fs::remove(temporary, error);
    fs::remove_all(version, error);
    return Error{"--write-dir: cannot rename " + temporary.string() + " to ..data: " + reason};
  }
  for (const auto& [name, content] : files) {
    const fs::path link = directory / name;
    const fs::file_status status = fs::symlink_status(link, error);
    if (fs::is_symlink(status)) {
      continue;  // already ..data/<name>
    }
    if (fs::exists(status)) {
      return Error{"--write-dir: " + link.string() + " exists and is not a symlink into ..data; remove it"};
    }
    if (::symlink((std::string(data_link) + "/" + name).c_str(), link.c_str()) != 0) {
      return Error{"--write-dir: cannot create " + link.string() + ": " + errno_text()};
    }
  }
  if (previous && previous->filename() != version.filename()) {
    fs::remove_all(*previous, error);
  }
  return true;
}

}  // namespace vmgate::certs
