// The disk of a containerDisk image, checked before QEMU may read it (and before
// vmgate-container-disk copies it). The image is the VM author's: whatever it holds must stay
// data. KubeVirt resolves the disk inside the image's own root (pkg/container-disk GetImage,
// safepath) and refuses a format other than raw or qcow2 and a
// qcow2 with a backing file (pkg/os/disk VerifyImage); without that, a symbolic link
// `disk/disk.img -> /var/run/secrets/kubernetes.io/serviceaccount/token`, or a qcow2 whose
// backing file is that path, would hand a file of the launcher's own to the guest. vmgate also
// refuses a qcow2 with an external data file (the same escape through another header field).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "vmgate/kube/pod_paths.hpp"
#include "vmgate/launcher/container_disk.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;

constexpr int max_symlinks = 40;  // as the kernel's path walk (ELOOP)

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (end > start) {
      parts.emplace_back(path.substr(start, end - start));
    }
    start = end + 1;
  }
  return parts;
}

// `relative` below `root`, its symbolic links followed as if `root` were `/`: an absolute target
// starts again at `root`, and `..` never climbs above it. Errors: a component that does not
// exist, a loop.
Result<fs::path> resolve_in_root(const fs::path& root, const std::string& relative) {
  std::deque<std::string> pending = components(relative);
  std::vector<std::string> resolved;
  int links = 0;
  while (!pending.empty()) {
    const std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") {
      continue;
    }
    if (part == "..") {
      if (!resolved.empty()) {
        resolved.pop_back();
      }
      continue;
    }
    fs::path candidate = root;
    for (const std::string& done : resolved) {
      candidate /= done;
    }
    candidate /= part;
    struct stat status {};
    if (::lstat(candidate.c_str(), &status) != 0) {
      return Error{"/" + relative + " resolves to " + candidate.string() + ", which " +
                   (errno == ENOENT ? "is not in the image" : std::string("cannot be read: ") + std::strerror(errno))};
    }
    if (!S_ISLNK(status.st_mode)) {
      resolved.push_back(part);
      continue;
    }
    if (++links > max_symlinks) {
      return Error{"/" + relative + ": too many levels of symbolic links"};
    }
    std::array<char, 4096> target{};
    const ssize_t length = ::readlink(candidate.c_str(), target.data(), target.size());
    if (length < 0 || static_cast<std::size_t>(length) >= target.size()) {
      return Error{candidate.string() + ": cannot read the symbolic link"};
    }
    const std::string text(target.data(), static_cast<std::size_t>(length));
    if (text.starts_with('/')) {
      resolved.clear();  // absolute: from the image's root, not the launcher's
    }
    std::deque<std::string> inserted = components(text);
    pending.insert(pending.begin(), inserted.begin(), inserted.end());
  }
  fs::path path = root;
  for (const std::string& done : resolved) {
    path /= done;
  }
  return path;
}

std::uint64_t big_endian(const unsigned char* bytes, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    value = (value << 8U) | bytes[i];
  }
  return value;
}

// The formats QEMU would probe that a containerDisk may not hold, by their magic.
std::string_view other_format(const std::array<unsigned char, 512>& head, std::size_t size) {
  const auto starts = [&](std::string_view magic, std::size_t offset = 0) {
    return size >= offset + magic.size() && std::memcmp(head.data() + offset, magic.data(), magic.size()) == 0;
  };
  if (starts("KDMV") || starts("# Disk DescriptorFile")) {
    return "vmdk";
  }
  if (starts("vhdxfile")) {
    return "vhdx";
  }
  if (starts("conectix")) {
    return "vpc";
  }
  if (starts(std::string_view("QFI\0", 4))) {
    return "qed";
  }
  if (starts(std::string_view("LUKS\xba\xbe", 6))) {
    return "luks";
  }
  if (starts(std::string_view("\x7f\x10\xda\xbe", 4), 0x40)) {
    return "vdi";
  }
  return {};
}

// qcow2 header (QEMU docs/interop/qcow2.rst): version at 4, backing file offset at 8, and for
// version 3 the incompatible feature bits at 72, of which bit 2 is "external data file".
Result<ImageFormat> verify_image(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Error{file.string() + ": cannot be read"};
  }
  std::array<unsigned char, 512> head{};
  in.read(reinterpret_cast<char*>(head.data()), head.size());  // NOLINT: bytes of the file
  const auto size = static_cast<std::size_t>(in.gcount());
  if (size >= 4 && std::memcmp(head.data(), "QFI\xfb", 4) == 0) {
    if (size < 72) {
      return Error{"a qcow2 header cut short (" + std::to_string(size) + " bytes)"};
    }
    const std::uint64_t version = big_endian(head.data() + 4, 4);
    if (const std::uint64_t offset = big_endian(head.data() + 8, 8); offset != 0) {
      // The name, at most 1023 bytes (QEMU's limit), for the message.
      const std::uint64_t length = std::min<std::uint64_t>(big_endian(head.data() + 16, 4), 1023);
      std::string name(length, '\0');
      in.clear();
      in.seekg(static_cast<std::streamoff>(std::min<std::uint64_t>(offset, INT64_MAX)));
      in.read(name.data(), static_cast<std::streamsize>(length));
      name.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
      return Error{"expected no backing file, but found " + (name.empty() ? "(unreadable name)" : name)};
    }
    if (version >= 3 && size >= 80 && (big_endian(head.data() + 72, 8) & (1U << 2U)) != 0) {
      return Error{"expected no external data file, but the qcow2 image names one"};
    }
    return ImageFormat::qcow2;
  }
  if (const std::string_view other = other_format(head, size); !other.empty()) {
    return Error{"unsupported image format: " + std::string(other)};
  }
  return ImageFormat::raw;
}

}  // namespace

std::string_view format_name(ImageFormat format) {
  return format == ImageFormat::qcow2 ? "qcow2" : "raw";
}

Result<ContainerDisk> container_disk_file(const std::string& image_volume) {
  const fs::path root(image_volume);
  const std::string subdir(kube::pod_paths::container_disk_subdir);
  const fs::path dir = root / subdir;
  constexpr std::string_view layout = " (a containerDisk image holds its disk as the one file under disk/)";
  std::error_code error;
  if (!fs::exists(dir, error) && !error) {
    return Error{dir.string() + ": does not exist" + std::string(layout)};
  }
  fs::directory_iterator entries(dir, error);
  if (error) {
    return Error{dir.string() + ": cannot read the directory: " + error.message() + std::string(layout)};
  }
  // Every entry counts, as in KubeVirt: the disk is the only thing there.
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : entries) {
    names.push_back(entry.path().filename().string());
  }
  if (names.empty()) {
    return Error{dir.string() + ": no disk image file in it" + std::string(layout)};
  }
  if (names.size() > 1) {
    std::sort(names.begin(), names.end());
    std::string listed;
    for (const std::string& name : names) {
      listed += (listed.empty() ? "" : ", ") + name;
    }
    return Error{dir.string() + ": " + std::to_string(names.size()) + " entries (" + listed + "), which is the disk?" +
                 std::string(layout)};
  }
  Result<fs::path> resolved = resolve_in_root(root, subdir + "/" + names.front());
  if (!resolved) {
    return Error{dir.string() + ": " + resolved.error().message};
  }
  struct stat file {};
  struct stat image {};
  if (::lstat(resolved->c_str(), &file) != 0 || ::stat(root.c_str(), &image) != 0) {
    return Error{resolved->string() + ": cannot be read: " + std::strerror(errno)};
  }
  if (!S_ISREG(file.st_mode)) {
    return Error{resolved->string() + ": not a regular file" + std::string(layout)};
  }
  // A file of another file system under the image's root is not the image's (a mount).
  if (file.st_dev != image.st_dev) {
    return Error{resolved->string() + ": not on the image's own file system"};
  }
  Result<ImageFormat> format = verify_image(*resolved);
  if (!format) {
    return Error{resolved->string() + ": invalid image in the containerDisk: " + format.error().message};
  }
  return ContainerDisk{resolved->string(), *format};
}

}  // namespace vmgate::launcher
