// vmgate-container-disk's work: a containerDisk's disk copied into an emptyDir by an init
// container running in the containerDisk's own image (its root is the image's), for runtimes
// without image volumes (containerd 1.6). KubeVirt's counterpart is the container-disk binary
// its init containers copy the same way (pkg/virt-controller/services/template.go, "cp
// --preserve=all /usr/bin/container-disk /init/usr/bin/container-disk").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "vmgate/kube/pod_paths.hpp"
#include "vmgate/launcher/container_disk.hpp"
#include "vmgate/launcher/unique_fd.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t copy_buffer_bytes = std::size_t{1} << 20U;  // bounded memory, whatever the disk's size
constexpr off_t flush_every_bytes = off_t{32} << 20U;

std::string system_error(const std::string& file, std::string_view what) {
  return file + ": " + std::string(what) + ": " + std::strerror(errno);
}

Status write_all(int fd, const char* data, std::size_t size, off_t offset, const std::string& name) {
  while (size > 0) {
    const ssize_t count = ::pwrite(fd, data, size, offset);
    if (count < 0 && errno == EINTR) {
      continue;
    }
    if (count <= 0) {
      return Error{system_error(name, "cannot write")};
    }
    data += count;
    size -= static_cast<std::size_t>(count);
    offset += count;
  }
  return Ok{};
}

// Bytes [begin, end) of `source` to the same offsets of `target`.
Status copy_range(int source, int target, off_t begin, off_t end, std::vector<char>& buffer,
                  const std::string& source_name, const std::string& target_name) {
  while (begin < end) {
    const auto want = static_cast<std::size_t>(std::min<off_t>(end - begin, static_cast<off_t>(buffer.size())));
    const ssize_t count = ::pread(source, buffer.data(), want, begin);
    if (count < 0 && errno == EINTR) {
      continue;
    }
    if (count < 0) {
      return Error{system_error(source_name, "cannot read")};
    }
    if (count == 0) {
      return Error{source_name + ": ended before its size: changed while copied"};
    }
    if (Status written = write_all(target, buffer.data(), static_cast<std::size_t>(count), begin, target_name);
        !written) {
      return written;
    }
    begin += count;
    // The page cache of the copy is charged to the init container's small memory limit, and
    // with cgroup v1 dirty pages are not written back for a cgroup's sake: flush and drop them
    // as the copy goes, so that a disk of any size copies within 40M.
    if (begin % flush_every_bytes < count) {
      ::fdatasync(target);
      ::posix_fadvise(target, 0, 0, POSIX_FADV_DONTNEED);
      ::posix_fadvise(source, 0, 0, POSIX_FADV_DONTNEED);
    }
  }
  return Ok{};
}

// `source` (open, `size` bytes) into `target`, data segments only where the file system reports
// holes, then the size set: a sparse raw disk stays sparse on the node.
Status copy_contents(int source, int target, off_t size, const std::string& source_name,
                     const std::string& target_name) {
  std::vector<char> buffer(copy_buffer_bytes);
  off_t position = 0;
  while (position < size) {
    off_t data = ::lseek(source, position, SEEK_DATA);
    if (data < 0 && errno == ENXIO) {
      break;  // only a hole is left
    }
    off_t hole = data < 0 ? size : ::lseek(source, data, SEEK_HOLE);
    if (data < 0) {
      data = position;  // no SEEK_DATA here (EINVAL): copy everything
    }
    if (hole < 0 || hole > size) {
      hole = size;
    }
    if (Status copied = copy_range(source, target, data, hole, buffer, source_name, target_name); !copied) {
      return copied;
    }
    position = hole;
  }
  if (::ftruncate(target, size) != 0) {
    return Error{system_error(target_name, "cannot set the size")};
  }
  return Ok{};
}

// `from` copied to the new file `temporary` with `mode`, synced, renamed to `to`. The temporary
// is removed on failure.
Status copy_file_then_rename(const std::string& from, const std::string& temporary, const std::string& to,
                             mode_t mode) {
  const UniqueFd source(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!source) {
    return Error{system_error(from, "cannot open")};
  }
  struct stat status {};
  if (::fstat(source.get(), &status) != 0) {
    return Error{system_error(from, "cannot read its status")};
  }
  if (!S_ISREG(status.st_mode)) {
    return Error{from + ": not a regular file"};
  }
  ::unlink(temporary.c_str());  // a leftover of an interrupted copy
  UniqueFd target(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!target) {
    return Error{system_error(temporary, "cannot create")};
  }
  Status copied = copy_contents(source.get(), target.get(), status.st_size, from, temporary);
  if (copied && ::fchmod(target.get(), mode) != 0) {  // the umask may have taken bits away
    copied = Error{system_error(temporary, "cannot set its mode")};
  }
  if (copied && ::fsync(target.get()) != 0) {
    copied = Error{system_error(temporary, "cannot sync")};
  }
  target.reset();
  if (copied && std::rename(temporary.c_str(), to.c_str()) != 0) {
    copied = Error{system_error(to, "cannot rename " + temporary + " to it")};
  }
  if (!copied) {
    ::unlink(temporary.c_str());
    return copied;
  }
  // The rename itself is durable only once its directory is synced.
  if (const UniqueFd directory(::open(fs::path(to).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      directory) {
    ::fsync(directory.get());
  }
  return Ok{};
}

}  // namespace

Result<std::string> copy_container_disk(const std::string& image_root, const std::string& to) {
  Result<ContainerDisk> disk = container_disk_file(image_root);
  if (!disk) {
    return disk.error();
  }
  std::error_code error;
  if (!fs::is_directory(to, error)) {
    return Error{to + ": not a directory (the emptyDir the copy goes to)"};
  }
  const fs::path target_dir = fs::path(to) / kube::pod_paths::container_disk_subdir;
  fs::create_directories(target_dir, error);
  if (error) {
    return Error{target_dir.string() + ": cannot create: " + error.message()};
  }
  const std::string name = fs::path(disk->file).filename().string();
  const std::string target = (target_dir / name).string();
  // Outside disk/: the launcher counts every entry there.
  const std::string temporary = (fs::path(to) / ("." + name + ".copying")).string();
  if (Status copied = copy_file_then_rename(disk->file, temporary, target, 0444); !copied) {
    return copied.error();
  }
  return target;
}

Status install_executable(const std::string& from, const std::string& to) {
  const fs::path destination(to);
  const std::string temporary =
      (destination.parent_path() / ("." + destination.filename().string() + ".installing")).string();
  return copy_file_then_rename(from, temporary, to, 0555);
}

}  // namespace vmgate::launcher
