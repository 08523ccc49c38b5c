// The pod network carried out (pod_plumbing.hpp): the cgroup lookup on a fake cgroup root, and,
// as root, a stand-in pod — a network namespace of the test's own with eth0 (one end of a veth
// pair whose other end stays inside too), an address and a `sleep` in it — built for masquerade
// and for bridge, checked with `ip` and `nft`, built again (idempotent), then removed. No traffic
// leaves the namespace; the machine is left as it was.
#include "vmgate/node/pod_plumbing.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "support/temporary_directory.hpp"
#include "vmgate/common/json_decode.hpp"

namespace vmgate::node {
namespace {

constexpr std::string_view pod_uid = "0b5e1c9e-3f5a-4d1e-9a51-3c1c2f0d9a10";

TEST(PodCgroup, CandidatesForBothDriversAndVersions) {
  const std::vector<std::string> candidates = pod_cgroup_candidates(pod_uid);
  const auto has = [&candidates](const std::string& path) {
    return std::find(candidates.begin(), candidates.end(), path) != candidates.end();
  };
  EXPECT_TRUE(has("pids/kubepods/besteffort/pod" + std::string(pod_uid)));
  EXPECT_TRUE(has("memory/kubepods/pod" + std::string(pod_uid)));
  EXPECT_TRUE(has("kubepods/burstable/pod" + std::string(pod_uid)));  // v2, cgroupfs
  EXPECT_TRUE(
      has("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0b5e1c9e_3f5a_4d1e_9a51_3c1c2f0d9a10.slice"));
  EXPECT_TRUE(has("systemd/kubepods.slice/kubepods-pod0b5e1c9e_3f5a_4d1e_9a51_3c1c2f0d9a10.slice"));
}

// A fake /proc: PID/ns/net are plain files (open() is all the lookup does with them).
class FakeRoots : public ::testing::Test {
 protected:
  void SetUp() override {
    cgroup_ = directory_.path() / "cgroup";
    proc_ = directory_.path() / "proc";
    std::filesystem::create_directories(proc_ / "1" / "ns");
    std::ofstream(proc_ / "1" / "ns" / "net") << "host";
  }
  void process(int pid, const std::string& contents) const {
    std::filesystem::create_directories(proc_ / std::to_string(pid) / "ns");
    std::ofstream(proc_ / std::to_string(pid) / "ns" / "net") << contents;
  }
  void container(const std::string& pod_dir, const std::string& procs) const {
    std::filesystem::create_directories(cgroup_ / pod_dir / "abc123");
    std::ofstream(cgroup_ / pod_dir / "abc123" / "cgroup.procs") << procs;
  }
  vmgate::testing::TemporaryDirectory directory_;
  std::filesystem::path cgroup_;
  std::filesystem::path proc_;
};

TEST_F(FakeRoots, FindsAProcessOfThePod) {
  process(4242, "pod");
  container("pids/kubepods/besteffort/pod" + std::string(pod_uid), "4242\n");
  Result<std::optional<UniqueFd>> netns = open_pod_netns(cgroup_.string(), proc_.string(), pod_uid);
  ASSERT_TRUE(netns.ok()) << netns.error().message;
  ASSERT_TRUE(netns->has_value());
  std::array<char, 8> text{};
  ASSERT_EQ(::read((*netns)->get(), text.data(), 3), 3);
  EXPECT_EQ(std::string(text.data()), "pod");
}

TEST_F(FakeRoots, NoProcessYetIsNothing) {
  container(
      "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0b5e1c9e_3f5a_4d1e_9a51_3c1c2f0d9a10.slice", "");
  Result<std::optional<UniqueFd>> netns = open_pod_netns(cgroup_.string(), proc_.string(), pod_uid);
  ASSERT_TRUE(netns.ok());
  EXPECT_FALSE(netns->has_value());
  // A PID whose /proc entry is gone (it ended) is skipped, as is junk in cgroup.procs.
  container("kubepods/pod" + std::string(pod_uid), "99999\nnot-a-pid\n-1\n");
  netns = open_pod_netns(cgroup_.string(), proc_.string(), pod_uid);
  ASSERT_TRUE(netns.ok());
  EXPECT_FALSE(netns->has_value());
}

TEST_F(FakeRoots, TheHostsNamespaceIsNeverTaken) {
  // PID 7's ns/net is the same file as PID 1's: a pod on the host network (or a process not yet
  // moved into the pod's namespace).
  std::filesystem::create_directories(proc_ / "7" / "ns");
  std::filesystem::create_hard_link(proc_ / "1" / "ns" / "net", proc_ / "7" / "ns" / "net");
  container("kubepods/pod" + std::string(pod_uid), "7\n");
  Result<std::optional<UniqueFd>> netns = open_pod_netns(cgroup_.string(), proc_.string(), pod_uid);
  ASSERT_FALSE(netns.ok());
  EXPECT_NE(netns.error().message.find("the node's own network namespace"), std::string::npos);
}

TEST_F(FakeRoots, TheAgentsOwnNamespaceIsSkipped) {
  // PID 8 is in the agent's own namespace (a container process before runc moved it), PID 9 in
  // the pod's: 9 is taken.
  std::filesystem::create_directories(proc_ / "8" / "ns");
  std::filesystem::create_symlink("/proc/self/ns/net", proc_ / "8" / "ns" / "net");
  process(9, "pod");
  container("kubepods/pod" + std::string(pod_uid), "8\n9\n");
  Result<std::optional<UniqueFd>> netns = open_pod_netns(cgroup_.string(), proc_.string(), pod_uid);
  ASSERT_TRUE(netns.ok()) << netns.error().message;
  ASSERT_TRUE(netns->has_value());
}

TEST(SetupPodNetwork, RefusesTheNodesOwnNamespace) {
  const UniqueFd own(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(own.valid());
  PodNetworkPlan plan;
  Result<NetworkSetup> done = setup_pod_network(own.get(), plan, "/nonexistent/nft");
  ASSERT_FALSE(done.ok());
  EXPECT_NE(done.error().message.find("the node's own"), std::string::npos);
}

// ---- the stand-in pod (root only) ----

std::string run(const std::string& command) {
  std::string output;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen((command + " 2>&1").c_str(), "r"), ::pclose);
  if (!pipe) {
    return output;
  }
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) {
    output += buffer.data();
  }
  return output;
}

int count(const std::string& text, const std::string& needle) {
  int found = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++found;
  }
  return found;
}

// A network namespace with eth0 (MTU 1400, 10.244.9.7/24 and fd00:9::7/64), a sleeping process in
// it, and the fake cgroup naming that process; everything removed in the destructor. The namespace
// is the process's own (`unshare --net`), not a named one: `ip netns add` would leave its
// /run/netns mount on the machine after the test.
class StandInPod {
 public:
  explicit StandInPod(const std::filesystem::path& cgroup_root) {
    pid_ = std::atoi(run("unshare --net sleep 600 >/dev/null 2>&1 & echo $!").c_str());
    // unshare enters the new namespace before it runs sleep: once the process is sleep, it is there.
    for (int i = 0; i < 200 && run("cat /proc/" + std::to_string(pid_) + "/comm") != "sleep\n"; ++i) {
      ::usleep(10000);
    }
    (void)in("ip link add eth0 type veth peer name peer0");
    (void)in("ip link set eth0 mtu 1400 up");
    (void)in("ip link set peer0 up");
    (void)in("ip addr add 10.244.9.7/24 dev eth0");
    (void)in("ip addr add fd00:9::7/64 dev eth0 nodad");
    const std::filesystem::path container =
        cgroup_root / "pids" / "kubepods" / "besteffort" / ("pod" + std::string(pod_uid)) / "c0ffee";
    std::filesystem::create_directories(container);
    std::ofstream(container / "cgroup.procs") << pid_ << "\n";
  }
  ~StandInPod() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);  // the namespace and its links go with its last process
    }
  }
  StandInPod(const StandInPod&) = delete;
  StandInPod& operator=(const StandInPod&) = delete;
  [[nodiscard]] std::string in(const std::string& command) const {
    return run("nsenter -t " + std::to_string(pid_) + " -n " + command);
  }
  [[nodiscard]] int pid() const { return pid_; }

 private:
  int pid_ = 0;
};

bool can_build_networks() {
  return ::geteuid() == 0 && ::access("/dev/net/tun", R_OK | W_OK) == 0 && !run("command -v ip").empty() &&
         !find_nft().empty();
}

PodNetworkPlan plan_for(std::string_view interface_json) {
  const std::string text = R"({"spec":{"domain":{"cpu":{"cores":2},"devices":{"networkInterfaceMultiqueue":true,)"
                           R"("interfaces":[)" +
                           std::string(interface_json) + R"(]}},"networks":[{"name":"default","pod":{}}]}})";
  Result<json::Document, json::DecodeError> vmi = json::parse_json(text);
  EXPECT_TRUE(vmi.ok());
  Result<std::optional<PodNetworkPlan>> plan = plan_pod_network(*vmi);
  EXPECT_TRUE(plan.ok() && plan->has_value());
  return **plan;
}

TEST(StandInPodNetwork, Masquerade) {
  if (!can_build_networks()) {
    GTEST_SKIP() << "needs root, /dev/net/tun, ip and nft";
  }
  vmgate::testing::TemporaryDirectory directory;
  const StandInPod pod(directory.path());
  ASSERT_GT(pod.pid(), 0);
  Result<std::optional<UniqueFd>> netns = open_pod_netns(directory.path().string(), "/proc", pod_uid);
  ASSERT_TRUE(netns.ok()) << netns.error().message;
  ASSERT_TRUE(netns->has_value()) << "the sleeping process was not found";
  const PodNetworkPlan plan = plan_for(R"({"name":"default","masquerade":{},"ports":[{"port":80}]})");
  Result<NetworkSetup> done = setup_pod_network((*netns)->get(), plan, find_nft());
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(*done, NetworkSetup::created);

  const std::string tap = pod.in("ip -d link show tap0");
  EXPECT_NE(tap.find("mtu 1400"), std::string::npos) << tap;
  EXPECT_NE(tap.find("master k6t-eth0"), std::string::npos) << tap;
  EXPECT_NE(tap.find("tun type tap"), std::string::npos) << tap;
  EXPECT_NE(tap.find("vnet_hdr on"), std::string::npos) << tap;
  EXPECT_NE(tap.find("persist on"), std::string::npos) << tap;
  EXPECT_NE(tap.find("multi_queue"), std::string::npos) << tap;  // 2 vCPUs, multiqueue asked
  EXPECT_NE(tap.find("user root group root"), std::string::npos) << tap;
  const std::string bridge = pod.in("ip -d addr show k6t-eth0");
  EXPECT_NE(bridge.find("link/ether 02:00:00:00:00:00"), std::string::npos) << bridge;
  EXPECT_NE(bridge.find("mtu 1400"), std::string::npos) << bridge;
  EXPECT_NE(bridge.find("inet 10.0.2.1/24"), std::string::npos) << bridge;
  EXPECT_NE(bridge.find("inet6 fd10:0:2::1/120"), std::string::npos) << bridge;
  EXPECT_NE(bridge.find("bridge "), std::string::npos) << bridge;
  EXPECT_EQ(pod.in("cat /proc/sys/net/ipv4/ip_forward"), "1\n");
  EXPECT_EQ(pod.in("cat /proc/sys/net/ipv4/conf/k6t-eth0/route_localnet"), "1\n");
  EXPECT_EQ(pod.in("cat /proc/sys/net/ipv6/conf/all/forwarding"), "1\n");
  // The pod's own interface keeps its address: masquerade NATs.
  EXPECT_NE(pod.in("ip addr show eth0").find("inet 10.244.9.7/24"), std::string::npos);
  const std::string rules = pod.in("nft list table ip nat");
  EXPECT_NE(rules.find("iifname \"eth0\" counter packets 0 bytes 0 jump KUBEVIRT_PREINBOUND"), std::string::npos)
      << rules;
  EXPECT_NE(rules.find("tcp dport 80 counter packets 0 bytes 0 dnat to 10.0.2.2"), std::string::npos) << rules;
  EXPECT_NE(rules.find("ip saddr 10.0.2.2 counter packets 0 bytes 0 masquerade"), std::string::npos) << rules;
  EXPECT_NE(pod.in("nft list table ip6 nat").find("dnat to fd10:0:2::2"), std::string::npos);

  // Again (a restarted agent): the tap is there, nothing is touched.
  done = setup_pod_network((*netns)->get(), plan, find_nft());
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(*done, NetworkSetup::present);
  // A partial earlier run (the tap never made): completed, the rules not doubled.
  EXPECT_EQ(pod.in("ip link del tap0"), "");
  done = setup_pod_network((*netns)->get(), plan, find_nft());
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(*done, NetworkSetup::created);
  EXPECT_EQ(count(pod.in("nft list table ip nat"), "dnat to 10.0.2.2"), count(rules, "dnat to 10.0.2.2"));
  EXPECT_NE(pod.in("ip link show tap0").find("master k6t-eth0"), std::string::npos);
}

TEST(StandInPodNetwork, Bridge) {
  if (!can_build_networks()) {
    GTEST_SKIP() << "needs root, /dev/net/tun, ip and nft";
  }
  vmgate::testing::TemporaryDirectory directory;
  const StandInPod pod(directory.path());
  Result<std::optional<UniqueFd>> netns = open_pod_netns(directory.path().string(), "/proc", pod_uid);
  ASSERT_TRUE(netns.ok() && netns->has_value());
  const std::string mac_before = pod.in("cat /sys/class/net/eth0/address");
  // This kernel may lack the dummy driver (a container cannot load it): then no dummy eth0.
  const bool dummy_supported = pod.in("ip link add probe0 type dummy").empty();
  if (dummy_supported) {
    EXPECT_EQ(pod.in("ip link del probe0"), "");
  }
  const PodNetworkPlan plan = plan_for(R"({"name":"default","bridge":{},"model":"e1000"})");
  Result<NetworkSetup> done = setup_pod_network((*netns)->get(), plan, find_nft());
  ASSERT_TRUE(done.ok()) << done.error().message;

  const std::string nic = pod.in("ip -d addr show eth0-nic");
  EXPECT_NE(nic.find("master k6t-eth0"), std::string::npos) << nic;
  EXPECT_EQ(nic.find("inet "), std::string::npos) << nic;  // the address moved to the guest
  EXPECT_NE(nic.find("learning off"), std::string::npos) << nic;
  if (dummy_supported) {
    const std::string dummy = pod.in("ip -d addr show eth0");
    EXPECT_NE(dummy.find("dummy"), std::string::npos) << dummy;
    EXPECT_NE(dummy.find("inet 10.244.9.7/24"), std::string::npos) << dummy;
    EXPECT_NE(dummy.find(mac_before.substr(0, 17)), std::string::npos) << dummy << mac_before;
  } else {
    EXPECT_NE(pod.in("ip link show eth0").find("does not exist"), std::string::npos);
  }
  EXPECT_NE(pod.in("ip addr show k6t-eth0").find("inet 169.254.75.10/32"), std::string::npos);
  const std::string tap = pod.in("ip -d link show tap0");
  EXPECT_NE(tap.find("master k6t-eth0"), std::string::npos) << tap;
  EXPECT_EQ(tap.find("multi_queue"), std::string::npos) << tap;  // e1000: one queue
  EXPECT_EQ(pod.in("cat /proc/sys/net/ipv4/conf/all/arp_ignore"), "1\n");
  EXPECT_EQ(pod.in("nft list tables"), "");  // bridge binding writes no rules

  done = setup_pod_network((*netns)->get(), plan, find_nft());
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, NetworkSetup::present);
}

}  // namespace
}  // namespace vmgate::node
