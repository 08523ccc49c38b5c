#pragma once
// The virt-launcher pod of a VirtualMachineInstance, as KubeVirt's virt-controller renders it
// (pkg/virt-controller/services/template.go renderLaunchManifest, renderresources.go,
// nodeselectorrenderer.go, rendervolumes.go), with vmgate-launcher as the compute container's
// command (docs/controller.md, "The launcher pod"). Pure: no I/O, no clock; thread-safe.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/quantity.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::controller {

/// How a containerDisk reaches the compute container (`--container-disk-delivery`).
enum class ContainerDiskDelivery {
  /// Init containers copy the disk out of its image into an emptyDir (any runtime).
  copy,
  /// A pod image volume (Kubernetes ImageVolume: containerd 2.1+ or CRI-O).
  image_volume,
};

/// The cluster-wide settings KubeVirt's template service reads from its configuration.
struct PodSettings {
  std::string image = "vmgate-launcher:latest";  // the launcher image (`vmgate controller --launcher-image`)
  std::string launcher_binary = "vmgate-launcher";
  std::string container_disk_binary = "vmgate-container-disk";  // in the launcher image's PATH
  ContainerDiskDelivery container_disk_delivery = ContainerDiskDelivery::copy;
  std::string cluster_architecture = "amd64";         // used when the VMI names none
  std::int64_t cpu_allocation_ratio = 10;             // developerConfiguration.cpuAllocationRatio
  std::int64_t memory_overcommit = 100;               // developerConfiguration.memoryOvercommit (percent)
  bool allow_emulation = false;                       // developerConfiguration.useEmulation: no devices.kubevirt.io/kvm
  std::optional<double> additional_overhead_ratio;    // additionalGuestMemoryOverheadRatio
  std::map<std::string, std::string> node_selectors;  // configuration.nodeSelectors (cluster-wide)
  std::set<std::string> block_claims;                 // PVCs with volumeMode Block (volumeDevices instead of mounts)
  bool host_disk_enabled = false;                     // the HostDisk feature gate of the KubeVirt CR
};

/// The most a KubeVirt CR's cpuAllocationRatio may say: at 1000 every vCPU already requests less
/// than the millicore a pod can ask for, so a larger ratio changes nothing but is surely a slip.
inline constexpr std::int64_t max_cpu_allocation_ratio = 1000;
/// The most a KubeVirt CR's memoryOvercommit may say (percent): 100 times overcommitted, a guest
/// requests 1 % of its memory; beyond that the request is no longer a reservation at all.
inline constexpr std::int64_t max_memory_overcommit = 10000;

/// Pod settings with the KubeVirt CR's share applied, and why any setting of it was refused.
struct ClusterPodSettings {
  PodSettings pod;
  /// One line per refused setting ("developerConfiguration.cpuAllocationRatio 5000 is more
  /// than 1000: the default, 10, is used"), for the controller's log.
  std::vector<std::string> refused;
};

/// `base` (the command line's settings) with what virt-controller's template service reads of
/// its cluster configuration: the default architecture, the HostDisk gate, and
/// developerConfiguration's cpuAllocationRatio, memoryOvercommit and nodeSelectors. A ratio
/// above max_cpu_allocation_ratio or max_memory_overcommit is refused (the default kept, the
/// refusal in `refused`); values <= 0 never get here (KubeVirt ignores such a configuration, and
/// so does ClusterConfig::from_kubevirt).
ClusterPodSettings with_cluster_configuration(PodSettings base, const admission::ClusterConfig& config);

/// Labels and names the controller relies on.
inline constexpr const char* app_label = "kubevirt.io";                    // = "virt-launcher" on the pod
inline constexpr const char* created_by_label = "kubevirt.io/created-by";  // the VMI's uid
inline constexpr const char* vm_name_label = "vm.kubevirt.io/name";
inline constexpr const char* vmi_id_label = "vmi.kubevirt.io/id";

/// KubeVirt's GetMemoryOverhead for the KVM backend (pkg/hypervisor/kvm/hypervisorbackend.go):
/// page tables for the requested memory, the fixed per-process overheads, 8 Mi per vCPU and
/// for the IO thread, video RAM, arm64 pflash, VFIO, downward metrics, exec probes, SEV, TPM,
/// dedicated CPUs / guaranteed QoS, reservedOverhead, times the additional ratio.
/// Errors: a quantity in the VMI that does not parse, naming the field.
Result<admission::Quantity> memory_overhead(const json::Value& vmi, const PodSettings& settings);

/// The pod's name: virt-launcher-<vmi name>-, cut to 58 characters as the apiserver cuts
/// KubeVirt's generateName, then 5 characters of the VMI's uid: at most 63 characters whatever
/// the VMI's name. Deterministic, so that a second create (a retry, another replica) gets 409
/// AlreadyExists instead of a second pod.
std::string launcher_pod_name(const json::Value& vmi);

/// "namespace/claim" of the PVCs (and DataVolumes' PVCs) the VMIs name whose spec.volumeMode is
/// Block, for PodSettings::block_claims. PVCs missing from `cluster` count as filesystems.
std::set<std::string> block_claims(const std::vector<const json::Value*>& vmis, const admission::ClusterView& cluster);

/// The launcher pod for `vmi` (which must carry metadata.name, namespace and uid), laid out as
/// settings.container_disk_delivery says (docs/controller.md, "The launcher
/// pod"; the names and paths are kube/pod_paths.hpp's). A hostDisk is the node's directory of its
/// path as a hostPath volume, mounted where the launcher reads it, and only with the HostDisk
/// gate: a VMI that bypassed the webhook gets no node path. Errors name the field: a missing
/// name/namespace/uid, a quantity that does not parse, a hostDisk without the gate or without an
/// absolute file path, a volume whose name the pod uses for its own; a VMI
/// whose JSON exceeds the annotation's limit. A serviceAccount volume makes the pod run as that
/// account with its token mounted (KubeVirt's rule), the only case where a launcher pod has one.
Result<json::Document> launcher_pod(const json::Value& vmi, const PodSettings& settings);

}  // namespace vmgate::controller
