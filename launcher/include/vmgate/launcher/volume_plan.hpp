#pragma once
// The files a VMI's volumes need in the pod before its domain starts, computed without I/O
// (docs/launcher.md, "Volume preparation"): a qcow2 overlay per containerDisk over the
// image the pod mounted, a qcow2 of the requested capacity per emptyDisk, one NoCloud ISO with
// meta-data, user-data and network-config for cloudInitNoCloud, a sparse file for a hostDisk of
// type DiskOrCreate, and the files a filesystem PVC must already provide. The paths are the
// ones the converter writes into the domain XML (pod_layout.hpp). prepare_volumes() makes them.
// Thread-safety: plan_volumes() shares no state.
#include <cstdint>
#include <string>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/launcher/pod_layout.hpp"

namespace vmgate::launcher {

/// `qemu-img create -f qcow2 -b image -F <probed format> overlay` (container-disk.go).
struct ContainerDiskOverlay {
  std::string field;         // "spec.volumes[0].containerDisk", for error messages
  std::string image_volume;  // the image volume's directory; the disk is the one file under disk/
  std::string overlay;
};

/// `qemu-img create -f qcow2 file bytes`; bytes are the capacity rounded down to 1 MiB.
struct EmptyDisk {
  std::string field;
  std::string file;
  std::uint64_t bytes = 0;
};

/// A file that must exist before the domain starts (a PVC's disk.img or block device), or be
/// created sparse with `create_bytes` when missing (hostDisk DiskOrCreate).
struct RequiredFile {
  std::string field;
  std::string file;
  std::uint64_t create_bytes = 0;  // 0: must exist
};

/// The NoCloud seed ISO (cloud-init.go): volume label "cidata", files meta-data (JSON, as
/// KubeVirt writes it), user-data and network-config (only when there is network data).
/// cloudInitConfigDrive makes the same ISO the OpenStack way: label "config-2", files
/// openstack/latest/{meta_data.json, user_data, network_data.json}.
struct NoCloudIso {
  std::string field;
  std::string iso;
  std::string meta_data;
  std::string user_data;
  std::string network_config;
  bool config_drive = false;
  /// secretRef / networkDataSecretRef: the directories the pod mounted the secrets at, whose
  /// userdata (or userData) and networkdata (or networkData) files the preparation reads
  /// (cloud-init.go resolveNoCloudSecrets). Empty: none.
  std::string user_data_secret_dir;
  std::string network_data_secret_dir;
};

/// A config disk (configMap, secret, downwardAPI, serviceAccount, sysprep): an ISO of the files
/// the pod mounted at `source_dir`, with volume label `label` (the volume's volumeLabel, else
/// KubeVirt's "cfgdata").
struct ConfigIso {
  std::string field;
  std::string source_dir;
  std::string iso;
  std::string label;
};

struct VolumePlan {
  std::vector<ContainerDiskOverlay> overlays;
  std::vector<ConfigIso> config_isos;
  std::vector<EmptyDisk> empty_disks;
  std::vector<RequiredFile> files;
  std::vector<NoCloudIso> no_cloud;
};

/// True for a volume backed by a claim in the pod: persistentVolumeClaim or dataVolume.
bool is_claim(const json::Value& volume);

/// The plan for an admitted VMI. Errors name the field: an emptyDisk or hostDisk capacity that
/// is not a positive quantity, userDataBase64/networkDataBase64 that is not base64, a
/// cloudInitNoCloud without any data (KubeVirt's message), a second cloud-init volume.
Result<VolumePlan> plan_volumes(const json::Value& vmi, const PodLayout& layout);

}  // namespace vmgate::launcher
