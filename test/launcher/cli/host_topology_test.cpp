// The host's NUMA topology from sysfs, for numa.guestMappingPassthrough.
#include "vmgate/launcher/host_topology.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/temporary_directory.hpp"

namespace vmgate::launcher {
namespace {

TEST(HostTopology, ParsesKernelCpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("3-1"), std::nullopt);
  EXPECT_EQ(parse_cpu_list("a"), std::nullopt);
  EXPECT_EQ(parse_cpu_list("0-99999999"), std::nullopt);
}

TEST(HostTopology, ReadsEachNodesCpus) {
  const vmgate::testing::TemporaryDirectory directory;
  std::filesystem::create_directories(directory.path() / "node0");
  std::filesystem::create_directories(directory.path() / "node1");
  vmgate::testing::write_text(directory.path() / "node0/cpulist", "0-1\n");
  vmgate::testing::write_text(directory.path() / "node1/cpulist", "2,3\n");
  vmgate::testing::write_text(directory.path() / "possible", "0-1\n");
  EXPECT_EQ(host_cpu_numa_nodes(directory.path().string()), (std::map<int, int>{{0, 0}, {1, 0}, {2, 1}, {3, 1}}));
  EXPECT_TRUE(host_cpu_numa_nodes((directory.path() / "absent").string()).empty());
}

}  // namespace
}  // namespace vmgate::launcher
