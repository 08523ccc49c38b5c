#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "vmgate/launcher/volume_prepare.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;
using json::Value;

// KubeVirt's limits: qemu-img on a local file is quick; xorrisofs gets 10 s (cloud-init.go).
constexpr std::chrono::seconds qemu_img_timeout{60};
constexpr std::chrono::seconds iso_timeout{10};

Error file_error(const std::string& field, const std::string& file, std::string_view what) {
  return Error{field + ": " + file + ": " + std::string(what)};
}

Status make_parent(const std::string& field, const std::string& file) {
  std::error_code error;
  fs::create_directories(fs::path(file).parent_path(), error);
  if (error) {
    return file_error(field, fs::path(file).parent_path().string(), "cannot create the directory: " + error.message());
  }
  return Ok{};
}

bool exists(const std::string& file) {
  std::error_code error;
  return fs::exists(file, error);
}

// `qemu-img create -q -f qcow2 <options> file <size>` unless `file` exists already.
Status create_qcow2_once(const std::string& field, const std::string& file, std::vector<std::string> options,
                         const std::string& size) {
  if (exists(file)) {
    return Ok{};
  }
  if (Status made = make_parent(field, file); !made) {
    return made;
  }
  std::vector<std::string> argv{"qemu-img", "create", "-q", "-f", "qcow2"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(file);
  if (!size.empty()) {
    argv.push_back(size);
  }
  if (Status created = run_tool(argv, qemu_img_timeout); !created) {
    return file_error(field, file, created.error().message);
  }
  return Ok{};
}

Status create_overlay(const ContainerDiskOverlay& overlay) {
  Result<std::string> format = probe_image_format(overlay.image);
  if (!format) {
    return file_error(overlay.field, overlay.image, format.error().message);
  }
  return create_qcow2_once(overlay.field, overlay.overlay, {"-b", overlay.image, "-F", *format}, "");
}

Status create_empty_disk(const EmptyDisk& disk) {
  return create_qcow2_once(disk.field, disk.file, {}, std::to_string(disk.bytes));
}

Status ensure_file(const RequiredFile& required) {
  if (exists(required.file)) {
    return Ok{};
  }
  if (required.create_bytes == 0) {
    return file_error(required.field, required.file, "does not exist");
  }
  if (Status made = make_parent(required.field, required.file); !made) {
    return made;
  }
  const int fd = ::open(required.file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
  if (fd < 0) {
    return file_error(required.field, required.file, std::string("cannot create: ") + std::strerror(errno));
  }
  const bool sized = ::ftruncate(fd, static_cast<off_t>(required.create_bytes)) == 0;
  const int saved = errno;
  ::close(fd);
  if (!sized) {
    return file_error(required.field, required.file, std::string("cannot size: ") + std::strerror(saved));
  }
  return Ok{};
}

Status write_file(const std::string& field, const fs::path& file, const std::string& content) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) {
    return file_error(field, file.string(), "cannot write");
  }
  return Ok{};
}

// cloud-init.go GenerateLocalData: the files in a staging directory, the ISO built next to its
// final name and renamed over it.
Status create_no_cloud_iso(const NoCloudIso& iso) {
  const fs::path target(iso.iso);
  const fs::path data = target.parent_path() / "data";
  std::error_code error;
  fs::remove_all(data, error);
  fs::create_directories(data, error);
  if (error) {
    return file_error(iso.field, data.string(), "cannot create the directory: " + error.message());
  }
  for (const auto& [name, content] : {std::pair<const char*, const std::string*>{"meta-data", &iso.meta_data},
                                      {"user-data", &iso.user_data},
                                      {"network-config", &iso.network_config}}) {
    if (std::string_view(name) == "network-config" && content->empty()) {
      continue;
    }
    if (Status written = write_file(iso.field, data / name, *content); !written) {
      return written;
    }
  }
  const std::string staging = iso.iso + ".staging";
  Status built = run_tool({"xorrisofs", "-quiet", "-output", staging, "-volid", "cidata", "-joliet", "-rock",
                           "-partition_cyl_align", "on", data.string()},
                          iso_timeout);
  if (!built) {
    fs::remove(staging, error);
    return file_error(iso.field, iso.iso, built.error().message);
  }
  fs::rename(staging, target, error);
  if (error) {
    return file_error(iso.field, iso.iso, "cannot rename the new ISO into place: " + error.message());
  }
  return Ok{};
}

}  // namespace

Result<std::string> probe_image_format(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Error{exists(file) ? "cannot be read" : "does not exist"};
  }
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  if (in.gcount() == 4 && std::memcmp(magic.data(), "QFI\xfb", 4) == 0) {
    return std::string("qcow2");
  }
  return std::string("raw");
}

std::set<std::string> block_volumes(const json::Value& vmi, const PodLayout& layout) {
  std::set<std::string> block;
  const Value* spec = json::find_object(vmi, "spec");
  const Value* volumes = spec != nullptr ? json::find_array(*spec, "volumes") : nullptr;
  if (volumes == nullptr) {
    return block;
  }
  for (const Value& volume : volumes->GetArray()) {
    const std::string_view name = json::find_string(volume, "name");
    std::error_code error;
    if (!name.empty() && is_claim(volume) && fs::is_block_file(pvc_block_device(layout, name), error)) {
      block.emplace(name);
    }
  }
  return block;
}

Status prepare_volumes(const VolumePlan& plan) {
  for (const ContainerDiskOverlay& overlay : plan.overlays) {
    if (Status done = create_overlay(overlay); !done) {
      return done;
    }
  }
  for (const EmptyDisk& disk : plan.empty_disks) {
    if (Status done = create_empty_disk(disk); !done) {
      return done;
    }
  }
  for (const RequiredFile& file : plan.files) {
    if (Status done = ensure_file(file); !done) {
      return done;
    }
  }
  for (const NoCloudIso& iso : plan.no_cloud) {
    if (Status done = create_no_cloud_iso(iso); !done) {
      return done;
    }
  }
  return Ok{};
}

}  // namespace vmgate::launcher
