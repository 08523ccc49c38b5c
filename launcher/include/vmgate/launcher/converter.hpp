#pragma once
// The pure VMI → libvirt domain XML converter: no libvirt calls, no I/O. Every file path comes
// from the injected PodLayout, so tests and the launcher choose where disks, ISOs, logs live.
// Follows KubeVirt pkg/virt-launcher/virtwrap/converter/converter.go (mapping table: docs/launcher.md,
// "VMI to domain XML"); fields it does not map are errors naming the field path, never dropped.
// Thread-safety: convert() shares no state.
#include <map>
#include <string>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/launcher/pod_layout.hpp"

namespace vmgate::launcher {

/// OVMF files. Debian 12's names differ from KubeVirt's (docs/launcher.md, "OVMF file names on Debian 12").
struct FirmwarePaths {
  std::string efi_code = "/usr/share/OVMF/OVMF_CODE_4M.fd";
  std::string efi_vars = "/usr/share/OVMF/OVMF_VARS_4M.fd";
  std::string secure_boot_code = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd";
  std::string secure_boot_vars = "/usr/share/OVMF/OVMF_VARS_4M.ms.fd";
};

/// A volume's block sizes as the launcher probed them (blockSize.matchVolume). KubeVirt also
/// probes the discard granularity; libvirt 9.0's schema has no attribute for it.
struct BlockSizes {
  unsigned logical = 0;
  unsigned physical = 0;
};

struct ConvertOptions {
  /// true: `<domain type='qemu'>` (TCG); false: `type='kvm'`.
  bool software_emulation = false;
  PodLayout layout;
  FirmwarePaths firmware;
  /// The host CPUs the pod may use (its cgroup cpuset), in order: dedicatedCpuPlacement pins
  /// vCPU i to the i-th, and an isolated emulator thread to the one after the vCPUs.
  std::vector<int> cpuset;
  /// Host CPU → its host NUMA node (/sys/devices/system/node), for numa.guestMappingPassthrough;
  /// empty: no topology reported, no guest NUMA cells (as KubeVirt).
  std::map<int, int> cpu_numa_nodes;
  /// Volume name → its probed block sizes (probe_block_sizes in volume_prepare.hpp), for the
  /// disks with blockSize.matchVolume.
  std::map<std::string, BlockSizes> block_sizes;
};

/// The domain XML for an admitted VMI (a JSON object with metadata and spec).
/// Errors: a field vmgate does not map ("spec.domain.devices.gpus: not supported by
/// vmgate-launcher"), a field of the wrong type, or a missing required value (memory, a disk
/// without its volume), each naming the field path.
Result<std::string> convert(const json::Value& vmi, const ConvertOptions& options);

}  // namespace vmgate::launcher
