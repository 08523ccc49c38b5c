#pragma once
// The node agent's hands in a launcher pod (docs/node.md, "Pod network"): the pod's network
// namespace found without CRI (a process of the pod from its cgroup, then /proc/PID/ns/net), and
// pod_network.hpp's plan carried out inside it — netlink for links and addresses, /dev/net/tun
// for the tap, /proc/sys for forwarding, `nft -f -` for the rules — from a dedicated thread
// that entered the namespace (setns), or a child process for nft. The launcher pod has no
// NET_ADMIN; this is what KubeVirt's virt-handler does for it.
// Thread-safety: the functions share nothing; each call may run on any thread.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/node/pod_network.hpp"
#include "vmgate/node/unique_fd.hpp"

namespace vmgate::node {

/// The cgroup directories a pod's containers live under, relative to the cgroup root, for the
/// kubelet's cgroupfs and systemd drivers, cgroup v1 (under a controller's hierarchy) and v2
/// (the unified root): "pids/kubepods/burstable/pod<uid>", "kubepods.slice/kubepods-besteffort.slice/
/// kubepods-besteffort-pod<uid with _>.slice", ... Pure.
std::vector<std::string> pod_cgroup_candidates(std::string_view pod_uid);

/// The network namespace of the pod `pod_uid`: the first process found in the cgroup.procs of
/// its containers (under `cgroup_root`, normally /sys/fs/cgroup), its `proc_root`/PID/ns/net
/// opened, and the process checked to still be in that cgroup afterwards (a PID reused meanwhile
/// is not taken). A process on the node's own namespace (the agent's, or `proc_root`/1's) is
/// skipped: a hostNetwork pod, or a container process caught before runc moved it into the pod's
/// namespace. nullopt: no process yet (the sandbox is not running). Errors: only processes on
/// the node's namespace were found (retry later).
Result<std::optional<UniqueFd>> open_pod_netns(const std::string& cgroup_root, const std::string& proc_root,
                                               std::string_view pod_uid);

/// What setup_pod_network did.
enum class NetworkSetup {
  created,  // the links, addresses, rules and the tap were made now
  present,  // the tap was there already (a restarted agent): nothing touched
};

/// Carries out `plan` in the namespace `netns_fd`: for masquerade the bridge (KubeVirt's fixed
/// MAC, the pod interface's MTU) with the gateway addresses of the families the pod has,
/// route_localnet on it, forwarding on, the nft rules (`nft_path` run in the namespace with the
/// script on stdin, 10 s at most); for bridge the bridge, the pod interface renamed
/// <name>-nic, stripped of its addresses, given the bridge's MAC, enslaved with learning off, a
/// dummy <name> holding the pod's MAC, MTU and addresses, arp_ignore 1; then the tap (IFF_TAP |
/// IFF_NO_PI | IFF_VNET_HDR, multi-queue when the plan says, persistent, owned by uid/gid 0,
/// the pod interface's MTU, under the bridge, up) — last, under a temporary name renamed when
/// ready, since its existence is what the launcher waits for. Idempotent: a tap already there
/// means done; a partial earlier run is completed. Errors name the step and the errno; the
/// agent's own namespace (the node's) is refused before anything is done.
Result<NetworkSetup> setup_pod_network(int netns_fd, const PodNetworkPlan& plan, const std::string& nft_path);

/// The nft executable: the first of /usr/sbin/nft, /sbin/nft, /usr/bin/nft, /bin/nft that
/// exists; "" when none does.
std::string find_nft();

}  // namespace vmgate::node
