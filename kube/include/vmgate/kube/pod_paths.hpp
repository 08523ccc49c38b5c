#pragma once
// Where a virt-launcher pod's volumes are mounted: vmgate controller writes these mount paths
// into the pod, vmgate-launcher's PodLayout reads the volumes there, so both take them from
// here (KubeVirt's paths: pkg/util, pkg/virt-launcher). Header only, no I/O.
#include <cstddef>
#include <string>
#include <string_view>

namespace vmgate::kube::pod_paths {

/// Filesystem PVC `vol` → `<pvc_dir>/<vol>/disk.img`.
inline constexpr std::string_view pvc_dir = "/var/run/kubevirt-private/vmi-disks";
/// hostDisk `vol` with path `/node/dir/disk.img` → `<pvc_dir>/<vol>/disk.img`: the pod mounts the
/// node's directory `/node/dir` there (a hostPath volume, as KubeVirt's handleHostDisk), so that
/// the path names a file of the node, never one of the launcher container.
/// Block PVC `vol` → the device `<block_device_dir>/<vol>` (a volumeDevice).
inline constexpr std::string_view block_device_dir = "/dev";
/// The containerDisk at spec.volumes[i] is mounted as the directory `<image_volume_dir>/disk_<i>`
/// (KubeVirt's VirtImageVolumeDir): an image volume (Kubernetes ImageVolume), or the emptyDir
/// its init container copied the disk into; either way the disk is the one file under its
/// `disk/` directory, as KubeVirt's containerDisk images hold it.
inline constexpr std::string_view image_volume_dir = "/var/run/kubevirt-image-volume";
inline constexpr std::string_view container_disk_subdir = "disk";

/// The file name of a hostDisk path, or "" when the path is not absolute or names no file
/// ("/", "/data/", "/data/.", "relative.img").
inline std::string_view host_disk_file_name(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    return {};
  }
  const std::string_view name = path.substr(path.rfind('/') + 1);
  return name == "." || name == ".." ? std::string_view() : name;
}

/// The node directory a hostDisk path is in: "/node/dir" for "/node/dir/disk.img", "/" for "/x".
inline std::string_view host_disk_node_dir(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string_view::npos ? std::string_view("/") : path.substr(0, slash);
}

/// The launcher pod's containers and the volumes they share, as `vmgate controller` renders them (docs/controller.md,
/// "The launcher pod"). The node agent reads the launcher's status file through the kubelet's directory of the
/// `private` emptyDir (kubelet_empty_dir_file below), so these names are a contract between the three.
inline constexpr std::string_view compute_container = "compute";
inline constexpr std::string_view guest_console_log_container = "guest-console-log";  // KubeVirt's name

/// The VMI the pod runs, as JSON, in this pod annotation; the downwardAPI volume `vmi_volume`
/// puts it at `<vmi_dir>/<vmi_file_name>`, where `vmgate-launcher --vmi` reads it (no API token
/// in the pod). The kubelet refuses pods whose annotations exceed 256 KiB in all: the
/// controller refuses a VMI whose JSON exceeds vmi_annotation_max_bytes.
inline constexpr std::string_view vmi_annotation = "vmgate.kubevirt.io/vmi";
inline constexpr std::size_t vmi_annotation_max_bytes = std::size_t{200} * 1024;
inline constexpr std::string_view vmi_volume = "vmi";
inline constexpr std::string_view vmi_dir = "/var/run/vmgate/vmi";
inline constexpr std::string_view vmi_file_name = "vmi.json";

/// The emptyDir `private_volume` at `private_dir` (KubeVirt's VirtPrivateDir), shared by the
/// compute container (read-write) and guest-console-log (read-only): the launcher's status file
/// (JSON, docs/launcher.md "The status file") and the guest's serial console log.
inline constexpr std::string_view private_volume = "private";
inline constexpr std::string_view private_dir = "/var/run/kubevirt-private";
inline constexpr std::string_view status_file_name = "vmgate-status.json";
inline constexpr std::string_view serial_log_name = "virt-serial0-log";
/// The guest's serial console as a unix socket QEMU listens on (KubeVirt's `virt-serial0`): the
/// node agent relays it to `virtctl console` (docs/node.md, "The subresource endpoint").
inline constexpr std::string_view serial_socket_name = "virt-serial0";
/// The launcher's control socket (docs/launcher.md, "The control socket"): `pause` and
/// `unpause`, one line each, from the node agent.
inline constexpr std::string_view control_socket_name = "vmgate-control.sock";

/// containerDisks by copy (`--container-disk-delivery copy`): the init container
/// `container_disk_binary_container` copies the static `vmgate-container-disk` of the launcher
/// image into the emptyDir `container_disk_binary_volume` at `container_disk_binary_dir`; then
/// one init container per containerDisk (`volume<name>`, KubeVirt's naming), running in the
/// containerDisk's own image, copies the image's disk into the emptyDir
/// container_disk_copy_volume(i), which the compute container mounts read-only where an image
/// volume would be: container_disk_volume(image_volume_dir, i).
inline constexpr std::string_view container_disk_binary_container = "container-disk-binary";
inline constexpr std::string_view container_disk_binary_volume = "container-disk-binary";
inline constexpr std::string_view container_disk_binary_dir = "/init";
inline constexpr std::string_view container_disk_binary_name = "vmgate-container-disk";

/// The init container that copies the containerDisk of volume `volume_name` (KubeVirt's
/// toContainerName). A volume name is a DNS label, so this is one too when it fits in 63
/// characters; the controller shortens a longer one (docs/controller.md, "The launcher pod").
inline std::string container_disk_copy_container(std::string_view volume_name) {
  return "volume" + std::string(volume_name);
}

/// The emptyDir holding the copy of the containerDisk at spec.volumes[index].
inline std::string container_disk_copy_volume(std::size_t index) {
  return "container-disk-" + std::to_string(index);
}

/// A file of the emptyDir `volume` of pod `pod_uid` on its node, as the kubelet lays it out
/// (`<kubelet_root>/pods/<uid>/volumes/kubernetes.io~empty-dir/<volume>/<file>`; kubelet_root
/// is usually /var/lib/kubelet): how a node agent reads the launcher's status file, say
/// kubelet_empty_dir_file("/var/lib/kubelet", uid, private_volume, status_file_name).
inline std::string kubelet_empty_dir_file(std::string_view kubelet_root, std::string_view pod_uid,
                                          std::string_view volume, std::string_view file) {
  return std::string(kubelet_root) + "/pods/" + std::string(pod_uid) + "/volumes/kubernetes.io~empty-dir/" +
         std::string(volume) + "/" + std::string(file);
}

/// `<dir>/disk_<index>`: the image volume of the containerDisk at spec.volumes[index], below
/// `dir` (image_volume_dir in a pod).
inline std::string container_disk_volume(std::string_view dir, std::size_t index) {
  return std::string(dir) + "/disk_" + std::to_string(index);
}

}  // namespace vmgate::kube::pod_paths
