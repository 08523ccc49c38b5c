#pragma once
// The pure VMI → libvirt domain XML converter: no libvirt calls, no I/O. Every file path comes
// from the injected PodLayout, so tests and the launcher choose where disks, ISOs, logs live.
// Follows KubeVirt pkg/virt-launcher/virtwrap/converter/converter.go (see launcher-libvirt.md
// part A); fields it does not map are errors naming the field path, never dropped.
// Thread-safety: convert() shares no state.
#include <set>
#include <string>

#include "vmgate/admission/json.hpp"
#include "vmgate/admission/result.hpp"

namespace vmgate::launcher {

/// Where the pod (or the test) keeps the files a VMI's volumes and devices use. Defaults follow
/// the virt-launcher pod layout.
struct PodLayout {
  /// Filesystem PVC `vol` → `<pvc_dir>/<vol>/disk.img`.
  std::string pvc_dir = "/var/run/kubevirt-private/vmi-disks";
  /// PVC names that are block devices → `/dev/<vol>` (KubeVirt's volumeDevices mount).
  std::set<std::string> block_pvcs;
  /// containerDisk `vol` → writable qcow2 overlay `<ephemeral_dir>/<vol>/disk.qcow2`.
  std::string ephemeral_dir = "/var/run/kubevirt-ephemeral-disks/disk-data";
  /// emptyDisk `vol` → `<empty_disk_dir>/<vol>.qcow2`.
  std::string empty_disk_dir = "/var/run/libvirt/empty-disks";
  /// cloudInitNoCloud → `<cloud_init_dir>/<namespace>/<name>/noCloud.iso`.
  std::string cloud_init_dir = "/var/run/kubevirt-ephemeral-disks/cloud-init-data";
  /// kernelBoot kernelPath/initrdPath are resolved below this directory.
  std::string kernel_boot_dir = "/var/run/kubevirt/container-disks/kernel-boot";
  /// Serial console log file; empty: `<private_dir>/virt-serial0-log`.
  std::string serial_log;
  /// VNC socket and default serial log live here.
  std::string private_dir = "/var/run/kubevirt-private";
  /// EFI NVRAM files: `<nvram_dir>/<domain name>_VARS.fd`.
  std::string nvram_dir = "/var/lib/libvirt/qemu/nvram";
  /// Tap device of interface i: `<tap_prefix><i>`.
  std::string tap_prefix = "tap";
};

/// OVMF files. Debian 12's names differ from KubeVirt's (launcher-libvirt.md A.1).
struct FirmwarePaths {
  std::string efi_code = "/usr/share/OVMF/OVMF_CODE_4M.fd";
  std::string efi_vars = "/usr/share/OVMF/OVMF_VARS_4M.fd";
  std::string secure_boot_code = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd";
  std::string secure_boot_vars = "/usr/share/OVMF/OVMF_VARS_4M.ms.fd";
};

struct ConvertOptions {
  /// true: `<domain type='qemu'>` (TCG); false: `type='kvm'`.
  bool software_emulation = false;
  PodLayout layout;
  FirmwarePaths firmware;
};

/// The domain XML for an admitted VMI (a JSON object with metadata and spec).
/// Errors: a field vmgate does not map ("spec.domain.devices.gpus: not supported by
/// vmgate-launcher"), a field of the wrong type, or a missing required value (memory, a disk
/// without its volume), each naming the field path.
Result<std::string> convert(const json::Value& vmi, const ConvertOptions& options);

}  // namespace vmgate::launcher
