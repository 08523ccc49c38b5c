#pragma once
// A containerDisk's disk: found and checked where the image's files are (an image volume, or the
// emptyDir its init container copied it into, for the launcher; the image's own root, for
// `vmgate-container-disk copy` in that init container), and copied. The standard library and
// POSIX only, so that vmgate-container-disk links statically (docs/controller.md, "The
// launcher pod"). Thread-safety: no shared state.
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::launcher {

/// The formats a containerDisk image may hold (KubeVirt's VerifyImage).
enum class ImageFormat { raw, qcow2 };
std::string_view format_name(ImageFormat format);  // "raw", "qcow2"

struct ContainerDisk {
  std::string file;  // symbolic links resolved (inside the image): what QEMU opens
  ImageFormat format = ImageFormat::raw;
};

/// The disk of a containerDisk image volume (container_disk.cpp): the one entry under
/// `<image_volume>/disk/`, where KubeVirt's containerDisk images keep it (any name: disk.img,
/// disk.qcow2, ...), a symbolic link followed inside the image only (an absolute target or `..`
/// never leaves it), which must be a regular file of the image's own file system, raw or qcow2,
/// and a qcow2 without a backing file or an external data file: the guest reads the image's
/// bytes, never a file of the launcher's. Errors name the directory or the file and the reason.
Result<ContainerDisk> container_disk_file(const std::string& image_volume);

/// `vmgate-container-disk copy`: the disk container_disk_file(image_root) finds (so the same
/// rules: one entry under `<image_root>/disk/`, a regular file inside the image, raw or a
/// self-contained qcow2) copied to `<to>/disk/<its file name>`: written as `<to>/.<name>.copying`,
/// holes kept (SEEK_DATA/SEEK_HOLE: a sparse raw image stays sparse), synced, then renamed into
/// `disk/`, so the directory only ever holds the whole disk. `<to>` must exist; `disk/` is made.
/// Returns the copy's path. Errors name the image's directory or file, or the copy, and the reason.
Result<std::string> copy_container_disk(const std::string& image_root, const std::string& to);

/// `vmgate-container-disk install`: the regular file `from` (the tool passes /proc/self/exe)
/// copied to `to` with mode 0555, through a temporary file in the same directory and a rename.
/// Errors name the file and the reason.
Status install_executable(const std::string& from, const std::string& to);

}  // namespace vmgate::launcher
