#include "vmgate/launcher/pod_layout.hpp"

#include <vector>

namespace vmgate::launcher {

bool is_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

Result<std::string> kernel_boot_file(const PodLayout& layout, std::string_view path) {
  if (path.find('\0') != std::string_view::npos) {
    return Error{"contains a NUL byte"};
  }
  std::vector<std::string_view> components;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view component = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    if (component.empty() || component == ".") {
      continue;
    }
    if (component == "..") {
      if (components.empty()) {
        return Error{"leaves the kernel-boot directory (\"..\" above its root)"};
      }
      components.pop_back();
      continue;
    }
    components.push_back(component);
  }
  if (components.empty()) {
    return Error{"names the kernel-boot directory itself, not a file"};
  }
  std::string file = layout.kernel_boot_dir;
  for (const std::string_view component : components) {
    file += '/';
    file += component;
  }
  return file;
}

PodLayout layout_below(std::string_view root) {
  PodLayout layout;
  const std::string prefix(root);
  for (std::string* directory :
       {&layout.pvc_dir, &layout.container_disk_dir, &layout.ephemeral_dir, &layout.empty_disk_dir,
        &layout.cloud_init_dir, &layout.kernel_boot_dir, &layout.private_dir, &layout.nvram_dir, &layout.virtiofs_dir,
        &layout.service_account_dir}) {
    *directory = prefix + *directory;
  }
  return layout;
}

std::string pvc_disk_file(const PodLayout& layout, std::string_view volume) {
  return layout.pvc_dir + "/" + std::string(volume) + "/disk.img";
}

std::string host_disk_file(const PodLayout& layout, std::string_view volume, std::string_view path) {
  return layout.pvc_dir + "/" + std::string(volume) + "/" + std::string(kube::pod_paths::host_disk_file_name(path));
}

std::string pvc_block_device(const PodLayout& layout, std::string_view volume) {
  return layout.block_device_dir + "/" + std::string(volume);
}

std::string container_disk_volume(const PodLayout& layout, std::size_t volume_index) {
  return kube::pod_paths::container_disk_volume(layout.container_disk_dir, volume_index);
}

std::string container_disk_overlay(const PodLayout& layout, std::string_view volume) {
  return layout.ephemeral_dir + "/" + std::string(volume) + "/disk.qcow2";
}

std::string empty_disk_file(const PodLayout& layout, std::string_view volume) {
  return layout.empty_disk_dir + "/" + std::string(volume) + ".qcow2";
}

std::string no_cloud_iso(const PodLayout& layout, std::string_view vmi_namespace, std::string_view vmi_name) {
  return layout.cloud_init_dir + "/" + std::string(vmi_namespace) + "/" + std::string(vmi_name) + "/noCloud.iso";
}

std::string config_drive_iso(const PodLayout& layout, std::string_view vmi_namespace, std::string_view vmi_name) {
  return layout.cloud_init_dir + "/" + std::string(vmi_namespace) + "/" + std::string(vmi_name) + "/configdrive.iso";
}

std::string cloud_init_secret_dir(const PodLayout& layout, std::string_view volume) {
  return layout.private_dir + "/secret/" + std::string(volume);
}

std::optional<ConfigDisk> config_disk(const PodLayout& layout, std::string_view kind, std::string_view volume) {
  // pkg/config: <private>/<kind dir>/<vol> holds the mounted files, <private>/<kind dir>-disks the ISOs;
  // the service account is the pod's own token mount, with one ISO.
  const std::string vol(volume);
  for (const auto& [key, dir] : {std::pair{"configMap", "config-map"}, std::pair{"secret", "secret"},
                                 std::pair{"downwardAPI", "downwardapi"}, std::pair{"sysprep", "sysprep"}}) {
    if (kind == key) {
      return ConfigDisk{layout.private_dir + "/" + dir + "/" + vol,
                        layout.private_dir + "/" + dir + "-disks/" + vol + ".iso"};
    }
  }
  if (kind == "serviceAccount") {
    return ConfigDisk{layout.service_account_dir, layout.private_dir + "/service-account-disk/service-account.iso"};
  }
  return std::nullopt;
}

std::string virtiofs_socket(const PodLayout& layout, std::string_view name) {
  return layout.virtiofs_dir + "/" + std::string(name) + ".sock";
}

}  // namespace vmgate::launcher
