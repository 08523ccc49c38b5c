#pragma once
// Makes the files of a VolumePlan in the pod (the I/O half of volume_plan.hpp): containerDisk
// overlays and emptyDisks through `qemu-img create`, the NoCloud ISO through `xorrisofs`,
// DiskOrCreate host disks as sparse files. Overlays and empty disks that already exist are kept:
// a launcher restarted in the same pod must not wipe what the guest wrote (or pull the file from
// under a QEMU it is about to re-attach to). The ISO is rebuilt and swapped in by rename.
// Errors name the field and the file.
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/launcher/container_disk.hpp"
#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/volume_plan.hpp"

namespace vmgate::launcher {

/// Runs `argv` (argv[0] looked up in PATH) with stdout discarded, and waits at most `timeout`
/// (then kills it). Errors: not found, killed, or a non-zero exit, with the tool's last line of
/// stderr.
Status run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

/// The PVC and DataVolume volumes of `vmi` whose `<block_device_dir>/<volume>` is a block
/// device: the pod mounted them as volumeDevices (KubeVirt's isBlockDeviceVolume).
std::set<std::string> block_volumes(const json::Value& vmi, const PodLayout& layout);

/// The block sizes of the volumes whose disks ask for blockSize.matchVolume, keyed by volume
/// name (disk.go detectOptimalBlockIO): a block device's logical and physical sector sizes
/// (BLKSSZGET, BLKPBSZGET); for a file, its file system's block size for both (statfs of the file, or of its nearest
/// existing directory: overlays and empty disks are made later). Errors name the disk and the file.
Result<std::map<std::string, BlockSizes>> probe_block_sizes(const json::Value& vmi, const PodLayout& layout);

/// Creates what `plan` lists, in order; stops at the first error.
Status prepare_volumes(const VolumePlan& plan);

}  // namespace vmgate::launcher
