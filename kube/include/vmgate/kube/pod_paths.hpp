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
/// The containerDisk at spec.volumes[i] is an image volume (Kubernetes ImageVolume, KubeVirt's
/// VirtImageVolumeDir) mounted as the directory `<image_volume_dir>/disk_<i>`; the disk is the
/// one file under its `disk/` directory, as KubeVirt's containerDisk images hold it.
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

/// `<dir>/disk_<index>`: the image volume of the containerDisk at spec.volumes[index], below
/// `dir` (image_volume_dir in a pod).
inline std::string container_disk_volume(std::string_view dir, std::size_t index) {
  return std::string(dir) + "/disk_" + std::to_string(index);
}

}  // namespace vmgate::kube::pod_paths
