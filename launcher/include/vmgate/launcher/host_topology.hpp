#pragma once
// The host's NUMA topology, as numa.guestMappingPassthrough needs it (docs/launcher.md,
// "Dedicated CPUs"): which NUMA node each CPU belongs to, from sysfs. KubeVirt's virt-handler
// reports the same from libvirt's capabilities. Reads the file system; no shared state.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vmgate::launcher {

/// A kernel CPU list ("0-3,8,10-11") as CPUs in order; nullopt when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view list);

/// CPU → NUMA node from `<node_dir>/node<N>/cpulist`; empty when the directory has no node
/// (no NUMA topology reported: the converter then maps no guest NUMA cells, as KubeVirt).
std::map<int, int> host_cpu_numa_nodes(const std::string& node_dir = "/sys/devices/system/node");

}  // namespace vmgate::launcher
