#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "vmgate/launcher/volume_prepare.hpp"

#include "vmgate/kube/pod_paths.hpp"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <algorithm>

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
  Result<ContainerDisk> image = container_disk_file(overlay.image_volume);
  if (!image) {
    return Error{overlay.field + ": " + image.error().message};
  }
  // The checked format, given to QEMU: it never probes the image itself.
  return create_qcow2_once(overlay.field, overlay.overlay,
                           {"-b", image->file, "-F", std::string(format_name(image->format))}, "");
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
// The first of `names` in `dir` (cloud-init.go readFirstFoundFileFromDir); nullopt when none is.
std::optional<std::string> read_first(const std::string& dir, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    std::ifstream in(fs::path(dir) / name, std::ios::binary);
    if (in) {
      std::ostringstream content;
      content << in.rdbuf();
      return content.str();
    }
  }
  return std::nullopt;
}

Status create_no_cloud_iso(const NoCloudIso& iso) {
  const fs::path target(iso.iso);
  const fs::path data = target.parent_path() / (iso.config_drive ? "configdrive-data" : "data");
  std::string user_data = iso.user_data;
  std::string network_config = iso.network_config;
  if (!iso.user_data_secret_dir.empty() && user_data.empty()) {
    std::optional<std::string> secret = read_first(iso.user_data_secret_dir, {"userdata", "userData"});
    if (!secret) {
      return file_error(iso.field + ".secretRef", iso.user_data_secret_dir, "has no userdata or userData file");
    }
    user_data = std::move(*secret);
  }
  if (!iso.network_data_secret_dir.empty() && network_config.empty()) {
    std::optional<std::string> secret = read_first(iso.network_data_secret_dir, {"networkdata", "networkData"});
    if (!secret) {
      return file_error(iso.field + ".networkDataSecretRef", iso.network_data_secret_dir,
                        "has no networkdata or networkData file");
    }
    network_config = std::move(*secret);
  }
  std::error_code error;
  fs::remove_all(data, error);
  const fs::path files = iso.config_drive ? data / "openstack/latest" : data;
  fs::create_directories(files, error);
  if (error) {
    return file_error(iso.field, files.string(), "cannot create the directory: " + error.message());
  }
  const bool drive = iso.config_drive;
  for (const auto& [name, content] :
       {std::pair<const char*, const std::string*>{drive ? "meta_data.json" : "meta-data", &iso.meta_data},
        {drive ? "user_data" : "user-data", &user_data},
        {drive ? "network_data.json" : "network-config", &network_config}}) {
    if (content == &network_config && content->empty()) {
      continue;
    }
    if (Status written = write_file(iso.field, files / name, *content); !written) {
      return written;
    }
  }
  const std::string staging = iso.iso + ".staging";
  Status built = run_tool({"xorrisofs", "-quiet", "-output", staging, "-volid", drive ? "config-2" : "cidata",
                           "-joliet", "-rock", "-partition_cyl_align", "on", data.string()},
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

namespace {

// A config disk (pkg/config): the files the pod mounted, as an ISO, rebuilt at every start (the
// ConfigMap or Secret may have changed) and swapped in by rename.
Status create_config_iso(const ConfigIso& iso) {
  std::error_code error;
  if (!fs::is_directory(iso.source_dir, error)) {
    return file_error(iso.field, iso.source_dir, "the pod did not mount the volume's files here");
  }
  if (Status made = make_parent(iso.field, iso.iso); !made) {
    return made;
  }
  const std::string staging = iso.iso + ".staging";
  Status built = run_tool({"xorrisofs", "-quiet", "-output", staging, "-volid", iso.label, "-joliet", "-rock",
                           "-partition_cyl_align", "on", iso.source_dir},
                          iso_timeout);
  if (!built) {
    fs::remove(staging, error);
    return file_error(iso.field, iso.iso, built.error().message);
  }
  fs::rename(staging, iso.iso, error);
  if (error) {
    return file_error(iso.field, iso.iso, "cannot rename the new ISO into place: " + error.message());
  }
  return Ok{};
}

}  // namespace

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
  for (const ConfigIso& iso : plan.config_isos) {
    if (Status done = create_config_iso(iso); !done) {
      return done;
    }
  }
  return Ok{};
}

namespace {

// The file a volume's disk reads in the pod, and whether it is a block device (as the converter
// writes it into the domain).
std::optional<std::pair<std::string, bool>> backing_file(const json::Value& volume, std::size_t index,
                                                         const PodLayout& layout) {
  const std::string_view name = json::find_string(volume, "name");
  if (json::find_object(volume, "containerDisk") != nullptr) {
    return std::pair{container_disk_overlay(layout, name), false};
  }
  if (json::find_object(volume, "emptyDisk") != nullptr) {
    return std::pair{empty_disk_file(layout, name), false};
  }
  if (is_claim(volume)) {
    const bool block = layout.block_pvcs.count(std::string(name)) != 0;
    return std::pair{block ? pvc_block_device(layout, name) : pvc_disk_file(layout, name), block};
  }
  if (const json::Value* host = json::find_object(volume, "hostDisk"); host != nullptr) {
    return std::pair{std::string(json::find_string(*host, "path")), false};
  }
  (void)index;
  return std::nullopt;
}

Result<BlockSizes> probe_device(const std::string& field, const std::string& device) {
  const int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return file_error(field, device, std::string("cannot open: ") + std::strerror(errno));
  }
  unsigned int logical = 0;
  unsigned int physical = 0;
  const bool ok = ::ioctl(fd, BLKSSZGET, &logical) == 0 && ::ioctl(fd, BLKPBSZGET, &physical) == 0;
  ::close(fd);
  if (!ok || (logical == 0 && physical == 0)) {
    return file_error(field, device, "cannot read its block sizes");
  }
  if (logical == 0 || physical == 0) {
    logical = physical = std::max(logical, physical);
  }
  return BlockSizes{logical, physical};
}

Result<BlockSizes> probe_file(const std::string& field, const std::string& file) {
  fs::path path(file);
  std::error_code error;
  while (!path.empty() && !fs::exists(path, error) && path.has_parent_path() && path != path.parent_path()) {
    path = path.parent_path();
  }
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) {
    return file_error(field, file, std::string("cannot read its file system: ") + std::strerror(errno));
  }
  const auto size = static_cast<unsigned>(info.f_bsize);
  return BlockSizes{size, size};
}

}  // namespace

Result<std::map<std::string, BlockSizes>> probe_block_sizes(const json::Value& vmi, const PodLayout& layout) {
  std::map<std::string, BlockSizes> sizes;
  const json::Value* disks = json::find_path(vmi, {"spec", "domain", "devices", "disks"});
  const json::Value* volumes = json::find_path(vmi, {"spec", "volumes"});
  if (disks == nullptr || !disks->IsArray() || volumes == nullptr || !volumes->IsArray()) {
    return sizes;
  }
  for (rapidjson::SizeType i = 0; i < disks->Size(); ++i) {
    const json::Value& disk = (*disks)[i];
    const json::Value* match = json::find_path(disk, {"blockSize", "matchVolume"});
    if (match == nullptr || !match->IsObject()) {
      continue;
    }
    if (const json::Value* enabled = json::find(*match, "enabled"); enabled != nullptr && enabled->IsFalse()) {
      continue;
    }
    const std::string_view name = json::find_string(disk, "name");
    for (rapidjson::SizeType v = 0; v < volumes->Size(); ++v) {
      const json::Value& volume = (*volumes)[v];
      if (!volume.IsObject() || json::find_string(volume, "name") != name) {
        continue;
      }
      const std::string field = "spec.domain.devices.disks[" + std::to_string(i) + "].blockSize.matchVolume";
      const auto backing = backing_file(volume, v, layout);
      if (!backing) {
        return Error{field + ": the volume of disk \"" + std::string(name) + "\" has no file to probe"};
      }
      Result<BlockSizes> probed =
          backing->second ? probe_device(field, backing->first) : probe_file(field, backing->first);
      if (!probed) {
        return probed.error();
      }
      sizes[std::string(name)] = *probed;
    }
  }
  return sizes;
}

}  // namespace vmgate::launcher
