// The pod network carried out (pod_plumbing.hpp). The steps and their order follow KubeVirt's
// nmstate driver (pkg/network/driver/nmstate/spec.go: create, rename, MAC, MTU, controller,
// addresses, up, route_localnet, learning; then the stack's sysctls) and the tap maker
// (cmd/virt-chroot/tap-device-maker.go: TUNTAP_DEFAULTS or TUNTAP_MULTI_QUEUE_DEFAULTS,
// persistent, owner and group).
#include "vmgate/node/pod_plumbing.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "vmgate/node/netlink_message.hpp"

namespace vmgate::node {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

// The tap's name while it is being set up: its existence under the final name is the launcher's
// signal that the pod network is ready.
constexpr std::string_view temporary_tap = "vmgate-tap-new";

// ---- the cgroup and /proc ----

std::optional<std::string> read_small_file(const std::string& path, std::size_t limit) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    return std::nullopt;
  }
  std::string text(limit, '\0');
  std::size_t used = 0;
  while (used < limit) {
    const ssize_t got = ::read(fd.get(), text.data() + used, limit - used);
    if (got <= 0) {
      break;
    }
    used += static_cast<std::size_t>(got);
  }
  text.resize(used);
  return text;
}

std::vector<int> pids_in(const std::string& procs_file) {
  std::vector<int> pids;
  // A container's processes: a launcher has a few dozen. The cap bounds the work, not the search:
  // any one process of the pod will do.
  const std::optional<std::string> text = read_small_file(procs_file, std::size_t{64} * 1024);
  if (!text) {
    return pids;
  }
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line) && pids.size() < 4096) {
    int pid = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (error == std::errc{} && end == line.data() + line.size() && pid > 0) {
      pids.push_back(pid);
    }
  }
  return pids;
}

std::vector<std::string> subdirectories(const std::string& directory) {
  std::vector<std::string> names;
  DIR* listing = ::opendir(directory.c_str());
  if (listing == nullptr) {
    return names;
  }
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != ".." && entry->d_type == DT_DIR) {
      names.emplace_back(name);
    }
  }
  ::closedir(listing);
  std::sort(names.begin(), names.end());
  return names;
}

bool same_file(int fd, const std::string& path) {
  struct stat ours {};
  struct stat theirs {};
  return ::fstat(fd, &ours) == 0 && ::stat(path.c_str(), &theirs) == 0 && ours.st_dev == theirs.st_dev &&
         ours.st_ino == theirs.st_ino;
}

// ---- netlink ----

class Netlink {
 public:
  static Result<Netlink> open() {
    UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (!fd.valid()) {
      return Error{"netlink socket: " + errno_text(errno)};
    }
    // A silent kernel is a bug, not a wait: bound every receive.
    const timeval timeout{.tv_sec = 5, .tv_usec = 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_nl local{};
    local.nl_family = AF_NETLINK;
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
      return Error{"netlink bind: " + errno_text(errno)};
    }
    return Netlink(std::move(fd));
  }

  std::uint32_t next_sequence() { return ++sequence_; }

  // Sends one request and gathers its answer: the dump's messages until NLMSG_DONE, or the ACK.
  Result<Answer> call(const Bytes& request, std::uint32_t sequence) {
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd_.get(), request.data(), request.size(), 0, reinterpret_cast<const sockaddr*>(&kernel),
                 sizeof kernel) < 0) {
      return Error{"netlink send: " + errno_text(errno)};
    }
    Answer all;
    std::vector<std::uint8_t> buffer(std::size_t{64} * 1024);
    // A pod has a handful of links; a dump of more than this many datagrams is not a pod's.
    for (int datagrams = 0; datagrams < 1024; ++datagrams) {
      const ssize_t got = ::recv(fd_.get(), buffer.data(), buffer.size(), 0);
      if (got < 0) {
        return Error{"netlink receive: " + errno_text(errno)};
      }
      Result<Answer> answer = parse_answer(buffer.data(), static_cast<std::size_t>(got), sequence);
      if (!answer) {
        return answer.error();
      }
      all.links.insert(all.links.end(), answer->links.begin(), answer->links.end());
      all.addresses.insert(all.addresses.end(), answer->addresses.begin(), answer->addresses.end());
      if (answer->done) {
        all.done = true;
        all.failure = answer->failure;
        return all;
      }
    }
    return Error{"netlink: an answer without end"};
  }

  Status apply(const std::string& what, const Bytes& request, std::uint32_t sequence, int tolerated = 0) {
    Result<Answer> answer = call(request, sequence);
    if (!answer) {
      return Error{what + ": " + answer.error().message};
    }
    if (answer->failure && *answer->failure != tolerated) {
      return Error{what + ": " + errno_text(*answer->failure)};
    }
    return Ok{};
  }

  Result<std::vector<LinkInfo>> links() {
    const std::uint32_t sequence = next_sequence();
    Result<Answer> answer = call(link_dump_request(sequence), sequence);
    if (!answer) {
      return answer.error();
    }
    if (answer->failure) {
      return Error{"listing links: " + errno_text(*answer->failure)};
    }
    return std::move(answer->links);
  }

  Result<std::vector<AddressInfo>> addresses() {
    const std::uint32_t sequence = next_sequence();
    Result<Answer> answer = call(address_dump_request(sequence), sequence);
    if (!answer) {
      return answer.error();
    }
    if (answer->failure) {
      return Error{"listing addresses: " + errno_text(*answer->failure)};
    }
    return std::move(answer->addresses);
  }

 private:
  explicit Netlink(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
  std::uint32_t sequence_ = 0;
};

const LinkInfo* find_link(const std::vector<LinkInfo>& links, std::string_view name) {
  const auto found =
      std::find_if(links.begin(), links.end(), [name](const LinkInfo& link) { return link.name == name; });
  return found == links.end() ? nullptr : &*found;
}

bool is_global_unicast(const AddressInfo& address) {
  return address.scope == RT_SCOPE_UNIVERSE;
}

// ---- /proc/sys, in the namespace of the calling thread ----

Status write_sysctl(const std::string& path, std::string_view value) {
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid() || ::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
    return Error{"writing " + path + ": " + errno_text(errno)};
  }
  return Ok{};
}

// ---- the tap ----

Status create_tap(std::string_view name, int queues) {
  const UniqueFd tun(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
  if (!tun.valid()) {
    return Error{"opening /dev/net/tun: " + errno_text(errno)};
  }
  ifreq request{};
  name.copy(request.ifr_name, IFNAMSIZ - 1);
  // TUNTAP_DEFAULTS / TUNTAP_MULTI_QUEUE_DEFAULTS of vishvananda/netlink; libvirt reopens the tap
  // with the same multi-queue flag (the kernel refuses a mismatch).
  request.ifr_flags = static_cast<short>(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (queues > 1 ? IFF_MULTI_QUEUE : 0));
  if (::ioctl(tun.get(), TUNSETIFF, &request) != 0) {
    return Error{"TUNSETIFF " + std::string(name) + ": " + errno_text(errno)};
  }
  // QEMU runs as root in vmgate's launcher: owner and group 0 (KubeVirt passes its qemu user).
  if (::ioctl(tun.get(), TUNSETOWNER, 0UL) != 0 || ::ioctl(tun.get(), TUNSETGROUP, 0UL) != 0) {
    return Error{"TUNSETOWNER " + std::string(name) + ": " + errno_text(errno)};
  }
  if (::ioctl(tun.get(), TUNSETPERSIST, 1UL) != 0) {
    return Error{"TUNSETPERSIST " + std::string(name) + ": " + errno_text(errno)};
  }
  return Ok{};
}

// ---- nft, in a child that entered the namespace ----

Status run_nft(int netns_fd, const std::string& nft_path, const std::string& script) {
  if (nft_path.empty()) {
    return Error{"nft: not found (install nftables in the agent's image)"};
  }
  // The script goes in through a memfd on stdin: no pipe to keep fed while reading the output.
  const UniqueFd input(::memfd_create("vmgate-nft", MFD_CLOEXEC));
  if (!input.valid() || ::write(input.get(), script.data(), script.size()) != static_cast<ssize_t>(script.size()) ||
      ::lseek(input.get(), 0, SEEK_SET) != 0) {
    return Error{"nft: the script's memfd: " + errno_text(errno)};
  }
  std::array<int, 2> output{-1, -1};
  if (::pipe2(output.data(), O_CLOEXEC) != 0) {
    return Error{"nft: pipe: " + errno_text(errno)};
  }
  UniqueFd read_end(output[0]);
  UniqueFd write_end(output[1]);
  const pid_t child = ::fork();
  if (child < 0) {
    return Error{"nft: fork: " + errno_text(errno)};
  }
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec: the agent has other threads.
    if (::setns(netns_fd, CLONE_NEWNET) != 0 || ::dup2(input.get(), 0) < 0 || ::dup2(write_end.get(), 1) < 0 ||
        ::dup2(write_end.get(), 2) < 0) {
      ::_exit(126);
    }
    const char* const argv[] = {"nft", "-f", "-", nullptr};
    const char* const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", nullptr};
    ::execve(nft_path.c_str(), const_cast<char* const*>(argv), const_cast<char* const*>(envp));
    ::_exit(127);
  }
  write_end = UniqueFd(-1);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd readable{.fd = read_end.get(), .events = POLLIN, .revents = 0};
    if (::poll(&readable, 1, static_cast<int>(left)) <= 0) {
      continue;
    }
    std::array<char, 4096> buffer{};
    const ssize_t got = ::read(read_end.get(), buffer.data(), buffer.size());
    if (got <= 0) {
      break;
    }
    if (text.size() < 4096) {
      text.append(buffer.data(), static_cast<std::size_t>(got));
    }
  }
  if (timed_out) {
    ::kill(child, SIGKILL);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Error{"nft: no answer within 10 s"};
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
      text.pop_back();
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return Error{"nft failed (status " + std::to_string(code) + (code == 126 ? ", setns or dup2" : "") +
                 (code == 127 ? ", exec" : "") + "): " + text.substr(0, 1024)};
  }
  return Ok{};
}

// ---- the steps, in the namespace ----

LinkChange up_change(bool up) {
  LinkChange change;
  change.up = up;
  return change;
}

struct Namespace {
  Netlink& netlink;
  const PodNetworkPlan& plan;

  Status apply(const std::string& what, const Bytes& request, std::uint32_t sequence, int tolerated = 0) {
    return netlink.apply(what, request, sequence, tolerated);
  }
  Status change_link(const std::string& what, int index, const LinkChange& change) {
    const std::uint32_t sequence = netlink.next_sequence();
    return apply(what, link_change_request(sequence, index, change), sequence);
  }
  Status add_address(const std::string& link_name, int index, const IpPrefix& address) {
    const std::uint32_t sequence = netlink.next_sequence();
    return apply("adding " + address_text(address) + "/" + std::to_string(address.length) + " to " + link_name,
                 address_request(sequence, true, index, address), sequence, EEXIST);
  }
  Status create_link(std::string_view kind, const std::string& name, std::optional<std::uint32_t> mtu,
                     const std::optional<Mac>& mac, int tolerated = 0) {
    const std::uint32_t sequence = netlink.next_sequence();
    return apply("creating " + std::string(kind) + " " + name, link_create_request(sequence, kind, name, mtu, mac),
                 sequence, tolerated);
  }

  Result<LinkInfo> link(const std::string& name) {
    Result<std::vector<LinkInfo>> links = netlink.links();
    if (!links) {
      return links.error();
    }
    const LinkInfo* found = find_link(*links, name);
    if (found == nullptr) {
      return Error{"link " + name + " not found"};
    }
    return *found;
  }

  // The bridge, up, created when missing.
  Result<LinkInfo> ensure_bridge(const std::vector<LinkInfo>& links, std::optional<std::uint32_t> mtu,
                                 const std::optional<Mac>& mac) {
    if (find_link(links, plan.bridge) == nullptr) {
      if (Status created = create_link("bridge", plan.bridge, mtu, mac); !created) {
        return created.error();
      }
    }
    Result<LinkInfo> bridge = link(plan.bridge);
    if (!bridge) {
      return bridge.error();
    }
    if (bridge->kind != "bridge") {
      return Error{plan.bridge + " exists and is not a bridge"};
    }
    if (Status up = change_link("setting " + plan.bridge + " up", bridge->index, up_change(true)); !up) {
      return up.error();
    }
    return bridge;
  }

  Status masquerade(const std::vector<LinkInfo>& links, const LinkInfo& pod, const std::vector<AddressInfo>& addresses,
                    int netns_fd, const std::string& nft_path) {
    const bool ipv4 = std::any_of(addresses.begin(), addresses.end(), [&](const AddressInfo& a) {
      return a.index == pod.index && !a.address.ipv6 && is_global_unicast(a);
    });
    const bool ipv6 = std::any_of(addresses.begin(), addresses.end(), [&](const AddressInfo& a) {
      return a.index == pod.index && a.address.ipv6 && is_global_unicast(a);
    });
    Result<LinkInfo> bridge = ensure_bridge(links, pod.mtu, masquerade_bridge_mac);
    if (!bridge) {
      return bridge.error();
    }
    if (ipv4) {
      IpPrefix gateway = nth_address(plan.vm_ipv4, 1);
      if (Status added = add_address(plan.bridge, bridge->index, gateway); !added) {
        return added;
      }
      if (Status set = write_sysctl("/proc/sys/net/ipv4/conf/" + plan.bridge + "/route_localnet", "1"); !set) {
        return set;
      }
      if (Status set = write_sysctl("/proc/sys/net/ipv4/ip_forward", "1"); !set) {
        return set;
      }
    }
    if (ipv6) {
      IpPrefix gateway = nth_address(plan.vm_ipv6, 1);
      if (Status added = add_address(plan.bridge, bridge->index, gateway); !added) {
        return added;
      }
      if (Status set = write_sysctl("/proc/sys/net/ipv6/conf/all/forwarding", "1"); !set) {
        return set;
      }
    }
    if (!ipv4 && !ipv6) {
      return Error{"the pod interface " + plan.pod_interface + " has no global address"};
    }
    return run_nft(netns_fd, nft_path, masquerade_nft_script(plan, ipv4, ipv6));
  }

  Status bridge_binding(const std::vector<LinkInfo>& links, const std::vector<AddressInfo>& addresses) {
    const std::string nic_name = plan.pod_interface + "-nic";
    const LinkInfo* nic = find_link(links, nic_name);
    const LinkInfo* original = nic != nullptr ? nic : find_link(links, plan.pod_interface);
    if (original == nullptr) {
      return Error{"the pod interface " + plan.pod_interface + " is missing"};
    }
    const LinkInfo pod = *original;
    std::vector<IpPrefix> pod_addresses;
    for (const AddressInfo& address : addresses) {
      if (address.index == pod.index && is_global_unicast(address)) {
        pod_addresses.push_back(address.address);
      }
    }
    const bool ipv4 =
        std::any_of(pod_addresses.begin(), pod_addresses.end(), [](const IpPrefix& a) { return !a.ipv6; });
    Result<LinkInfo> bridge = ensure_bridge(links, std::nullopt, std::nullopt);
    if (!bridge) {
      return bridge.error();
    }
    if (ipv4) {
      if (Status added = add_address(plan.bridge, bridge->index, bridge_fake_address(plan.interface_index)); !added) {
        return added;
      }
    }
    // The pod interface becomes the bridge's port: down for the rename, the bridge's MAC (the
    // guest takes the pod's), no addresses (they move to the guest), learning off.
    if (Status down = change_link("setting " + pod.name + " down", pod.index, up_change(false)); !down) {
      return down;
    }
    LinkChange port{
        .name = nic_name, .mtu = std::nullopt, .mac = bridge->mac, .master = bridge->index, .up = std::nullopt};
    if (Status changed = change_link("making " + pod.name + " the bridge's port " + nic_name, pod.index, port);
        !changed) {
      return changed;
    }
    for (const AddressInfo& address : addresses) {
      if (address.index == pod.index) {
        const std::uint32_t sequence = netlink.next_sequence();
        if (Status removed =
                apply("removing an address of " + nic_name,
                      address_request(sequence, false, pod.index, address.address), sequence, EADDRNOTAVAIL);
            !removed) {
          return removed;
        }
      }
    }
    if (Status up = change_link("setting " + nic_name + " up", pod.index, up_change(true)); !up) {
      return up;
    }
    {
      const std::uint32_t sequence = netlink.next_sequence();
      if (Status learning =
              apply("turning learning off on " + nic_name, port_learning_off_request(sequence, pod.index), sequence);
          !learning) {
        return learning;
      }
    }
    // The dummy keeps the pod's identity (MAC, MTU, addresses) for whoever reads it later (KubeVirt's
    // launcher serves them to the guest by DHCP).
    if (nic == nullptr || find_link(links, plan.pod_interface) == nullptr) {
      // A kernel without the dummy driver (EOPNOTSUPP) keeps no record: only the guest's DHCP
      // server, which vmgate does not run yet, would read it.
      if (Status created = create_link("dummy", plan.pod_interface, pod.mtu, pod.mac, EOPNOTSUPP); !created) {
        return created;
      }
      Result<LinkInfo> dummy = link(plan.pod_interface);
      for (const IpPrefix& address : pod_addresses) {
        if (!dummy) {
          break;
        }
        if (Status added = add_address(plan.pod_interface, dummy->index, address); !added) {
          return added;
        }
      }
    }
    if (ipv4) {
      return write_sysctl("/proc/sys/net/ipv4/conf/all/arp_ignore", "1");
    }
    return Ok{};
  }

  Status tap(std::uint32_t mtu) {
    Result<std::vector<LinkInfo>> links = netlink.links();
    if (!links) {
      return links.error();
    }
    if (const LinkInfo* leftover = find_link(*links, std::string(temporary_tap)); leftover != nullptr) {
      const std::uint32_t sequence = netlink.next_sequence();
      if (Status removed = apply("removing a leftover " + std::string(temporary_tap),
                                 link_delete_request(sequence, leftover->index), sequence);
          !removed) {
        return removed;
      }
    }
    if (Status created = create_tap(temporary_tap, plan.queues); !created) {
      return created;
    }
    Result<LinkInfo> made = link(std::string(temporary_tap));
    Result<LinkInfo> bridge = link(plan.bridge);
    if (!made || !bridge) {
      return Error{"the new tap or the bridge vanished"};
    }
    LinkChange ready{.name = plan.tap, .mtu = mtu, .mac = std::nullopt, .master = bridge->index, .up = std::nullopt};
    if (Status changed = change_link("naming the tap " + plan.tap, made->index, ready); !changed) {
      return changed;
    }
    return change_link("setting " + plan.tap + " up", made->index, up_change(true));
  }
};

Result<NetworkSetup> setup_here(int netns_fd, const PodNetworkPlan& plan, const std::string& nft_path) {
  Result<Netlink> netlink = Netlink::open();
  if (!netlink) {
    return netlink.error();
  }
  Result<std::vector<LinkInfo>> links = netlink->links();
  if (!links) {
    return links.error();
  }
  if (find_link(*links, plan.tap) != nullptr) {
    return NetworkSetup::present;
  }
  Result<std::vector<AddressInfo>> addresses = netlink->addresses();
  if (!addresses) {
    return addresses.error();
  }
  Namespace ns{*netlink, plan};
  std::uint32_t mtu = 0;
  if (plan.binding == PodBinding::masquerade) {
    const LinkInfo* pod = find_link(*links, plan.pod_interface);
    if (pod == nullptr) {
      return Error{"the pod interface " + plan.pod_interface + " is missing"};
    }
    mtu = pod->mtu;
    if (Status done = ns.masquerade(*links, *pod, *addresses, netns_fd, nft_path); !done) {
      return done.error();
    }
  } else {
    const LinkInfo* pod = find_link(*links, plan.pod_interface + "-nic");
    pod = pod != nullptr ? pod : find_link(*links, plan.pod_interface);
    mtu = pod != nullptr ? pod->mtu : 0;
    if (Status done = ns.bridge_binding(*links, *addresses); !done) {
      return done.error();
    }
  }
  if (Status made = ns.tap(mtu); !made) {
    return made.error();
  }
  return NetworkSetup::created;
}

}  // namespace

std::vector<std::string> pod_cgroup_candidates(std::string_view pod_uid) {
  const std::string uid(pod_uid);
  std::string underscored = uid;
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  const std::vector<std::string> pod_dirs{
      // cgroupfs driver
      "kubepods/pod" + uid,
      "kubepods/burstable/pod" + uid,
      "kubepods/besteffort/pod" + uid,
      // systemd driver
      "kubepods.slice/kubepods-pod" + underscored + ".slice",
      "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + underscored + ".slice",
      "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + underscored + ".slice",
  };
  std::vector<std::string> candidates;
  // v1: one hierarchy that every container joins (pids, memory, cpu); v2: the unified root.
  for (const std::string_view hierarchy : {"pids/", "memory/", "cpu,cpuacct/", "systemd/", ""}) {
    for (const std::string& pod_dir : pod_dirs) {
      candidates.push_back(std::string(hierarchy) + pod_dir);
    }
  }
  return candidates;
}

Result<std::optional<UniqueFd>> open_pod_netns(const std::string& cgroup_root, const std::string& proc_root,
                                               std::string_view pod_uid) {
  bool host_only = false;
  for (const std::string& candidate : pod_cgroup_candidates(pod_uid)) {
    const std::string pod_dir = std::string(cgroup_root).append("/").append(candidate);
    struct stat info {};
    if (::stat(pod_dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      continue;
    }
    for (const std::string& container : subdirectories(pod_dir)) {
      const std::string procs = std::string(pod_dir).append("/").append(container).append("/cgroup.procs");
      for (const int pid : pids_in(procs)) {
        UniqueFd netns(::open((proc_root + "/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC));
        if (!netns.valid()) {
          continue;
        }
        // The PID may have ended and been reused between the read and the open: it must still be
        // the pod's now that the namespace is held.
        const std::vector<int> again = pids_in(procs);
        if (std::find(again.begin(), again.end(), pid) == again.end()) {
          continue;
        }
        // The node's own namespace (the agent's, which runs on the host network, or init's):
        // a hostNetwork pod, or a container process caught before it entered the pod's
        // namespace (runc joins the cgroup first). Never built on; another process may do.
        if (same_file(netns.get(), "/proc/self/ns/net") || same_file(netns.get(), proc_root + "/1/ns/net")) {
          host_only = true;
          continue;
        }
        return std::optional<UniqueFd>(std::move(netns));
      }
    }
  }
  if (host_only) {
    return Error{"the pod's processes are on the node's own network namespace: not touched"};
  }
  return std::optional<UniqueFd>();
}

Result<NetworkSetup> setup_pod_network(int netns_fd, const PodNetworkPlan& plan, const std::string& nft_path) {
  // setns changes the calling thread only: a thread of its own enters the pod's namespace and
  // ends with it, so no other thread of the agent ever runs there.
  // Never the agent's own namespace (the node's): whatever the caller passed.
  if (same_file(netns_fd, "/proc/self/ns/net")) {
    return Error{"the namespace given is the node's own: not touched"};
  }
  Result<NetworkSetup> result = Error{"not run"};
  std::thread worker([&] {
    if (::setns(netns_fd, CLONE_NEWNET) != 0) {
      result = Error{"setns: " + errno_text(errno)};
      return;
    }
    result = setup_here(netns_fd, plan, nft_path);
  });
  worker.join();
  return result;
}

std::string find_nft() {
  for (const char* path : {"/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", "/bin/nft"}) {
    if (::access(path, X_OK) == 0) {
      return path;
    }
  }
  return {};
}

}  // namespace vmgate::node
