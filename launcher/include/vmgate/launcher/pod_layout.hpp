#pragma once
// Where the virt-launcher pod keeps the files a VMI's volumes and devices use. The converter
// writes these paths into the domain XML and the volume preparation creates the files there,
// so both take them from here. Defaults follow KubeVirt's pod layout (docs/launcher.md, "Pod layout").
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"
#include "vmgate/kube/pod_paths.hpp"

namespace vmgate::launcher {

struct PodLayout {
  /// Filesystem PVC `vol` → `<pvc_dir>/<vol>/disk.img`.
  std::string pvc_dir{kube::pod_paths::pvc_dir};
  /// PVC and DataVolume volumes that are block devices → `<block_device_dir>/<vol>` (KubeVirt's
  /// volumeDevices mount); block_volumes() finds them in a pod.
  std::set<std::string> block_pvcs;
  std::string block_device_dir{kube::pod_paths::block_device_dir};
  /// The containerDisk at spec.volumes[i] → its image volume, the directory
  /// `<container_disk_dir>/disk_<i>`, whose disk is the one file under `disk/` (the controller
  /// mounts it there: kube/pod_paths.hpp).
  std::string container_disk_dir{kube::pod_paths::image_volume_dir};
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
  /// Tap devices: `<tap_prefix>0` for the pod network, `<tap_prefix>` and 11 hex digits of the
  /// network name's SHA-256 for a Multus network (KubeVirt's names).
  std::string tap_prefix = "tap";
  /// The pod's service account token, for a serviceAccount volume (pkg/config ServiceAccountSourceDir).
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  /// virtiofsd sockets of spec.domain.devices.filesystems.
  std::string virtiofs_dir = "/var/run/kubevirt/virtiofs-containers";
};

/// True when `name` can be one component of a path in the pod: not empty, not "." or "..", no
/// '/' and no NUL. Volume names and the VMI's name and namespace become file names; a VMI that
/// did not go through admission must not reach outside the pod's directories with them.
bool is_file_name(std::string_view name);

/// A kernelBoot kernelPath or initrdPath (absolute or relative; either way taken from the
/// kernel-boot directory) resolved lexically below layout.kernel_boot_dir: empty and "."
/// components dropped, ".." removing the component before it. The file system is not consulted
/// (the files come from another container's image), so a symlink is libvirt's to follow. A VMI
/// that did not go through admission must not make QEMU read a host file
/// (`/../../../etc/shadow`). Errors, for the caller to prefix with the field: a ".." above the
/// directory, a path that resolves to the directory itself, a NUL byte.
Result<std::string> kernel_boot_file(const PodLayout& layout, std::string_view path);

/// The default layout with every directory moved below `root` (a pod's files when the
/// launcher runs outside a pod, as the boot tests do). Explicit files stay as they are.
PodLayout layout_below(std::string_view root);

std::string pvc_disk_file(const PodLayout& layout, std::string_view volume);
/// The hostDisk `volume` with node path `path`, where the pod mounts the node's directory:
/// `<pvc_dir>/<volume>/<file name of path>` (kube::pod_paths::host_disk_file_name; the caller
/// refuses a path without one).
std::string host_disk_file(const PodLayout& layout, std::string_view volume, std::string_view path);
std::string pvc_block_device(const PodLayout& layout, std::string_view volume);
/// The image volume directory of the containerDisk at spec.volumes[volume_index]; the disk file
/// in it is found when the volumes are prepared (container_disk_file, volume_prepare.hpp).
std::string container_disk_volume(const PodLayout& layout, std::size_t volume_index);
std::string container_disk_overlay(const PodLayout& layout, std::string_view volume);
std::string empty_disk_file(const PodLayout& layout, std::string_view volume);
std::string no_cloud_iso(const PodLayout& layout, std::string_view vmi_namespace, std::string_view vmi_name);
/// cloudInitConfigDrive → `<cloud_init_dir>/<namespace>/<name>/configdrive.iso`.
std::string config_drive_iso(const PodLayout& layout, std::string_view vmi_namespace, std::string_view vmi_name);
/// Where the pod mounts a cloud-init secretRef of volume `volume`: `<private_dir>/secret/<vol>`.
std::string cloud_init_secret_dir(const PodLayout& layout, std::string_view volume);

/// A configMap, secret, downwardAPI, serviceAccount or sysprep volume given to the guest as a
/// disk: an ISO the launcher builds from the files the pod mounted (KubeVirt's config disks,
/// pkg/config). `kind` is the volume source's key ("configMap", ...).
struct ConfigDisk {
  std::string source_dir;  // the pod's mount: <private_dir>/config-map/<vol>, ..., the service account's
  std::string iso;         // <private_dir>/config-map-disks/<vol>.iso, ...
};
/// The config disk of volume `volume` of source `kind`; nullopt for another kind.
std::optional<ConfigDisk> config_disk(const PodLayout& layout, std::string_view kind, std::string_view volume);

/// The virtiofsd socket of filesystem `name`: <virtiofs_dir>/<name>.sock (KubeVirt's virtiofs
/// container writes it).
std::string virtiofs_socket(const PodLayout& layout, std::string_view name);

}  // namespace vmgate::launcher
