#include "vmgate/node/device_plugin.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vmgate::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceKind kind_named(std::string_view name) {
  for (const DeviceKind& kind : known_devices()) {
    if (kind.name == name) {
      return kind;
    }
  }
  ADD_FAILURE() << "no device " << name;
  return {};
}

std::vector<std::string_view> names(const std::vector<DeviceKind>& kinds) {
  std::vector<std::string_view> result;
  for (const DeviceKind& kind : kinds) {
    result.push_back(kind.name);
  }
  return result;
}

TEST(KnownDevices, AreKubeVirtsWithTheirHostPaths) {
  std::vector<std::pair<std::string_view, std::string_view>> seen;
  for (const DeviceKind& kind : known_devices()) {
    seen.emplace_back(kind.name, kind.host_path);
  }
  EXPECT_THAT(seen,
              ElementsAre(std::pair{"kvm", "/dev/kvm"}, std::pair{"tun", "/dev/net/tun"},
                          std::pair{"vhost-net", "/dev/vhost-net"}, std::pair{"vhost-vsock", "/dev/vhost-vsock"}));
}

TEST(KnownDevices, OnlyTheHypervisorDeviceIsNotPreOpened) {
  EXPECT_FALSE(kind_named("kvm").pre_open);
  EXPECT_TRUE(kind_named("tun").pre_open);
  EXPECT_TRUE(kind_named("vhost-net").pre_open);
  EXPECT_TRUE(kind_named("vhost-vsock").pre_open);
}

TEST(ResourceNames, AndSocketNamesAreKubeVirts) {
  EXPECT_EQ(resource_name(kind_named("kvm")), "devices.kubevirt.io/kvm");
  EXPECT_EQ(resource_name(kind_named("vhost-vsock")), "devices.kubevirt.io/vhost-vsock");
  EXPECT_EQ(socket_name(kind_named("kvm")), "kubevirt-kvm.sock");
  EXPECT_EQ(socket_name(kind_named("vhost-net")), "kubevirt-vhost-net.sock");
}

TEST(ParseDeviceList, KeepsTheGivenOrder) {
  Result<std::vector<DeviceKind>> parsed = parse_device_list("tun,kvm");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_THAT(names(*parsed), ElementsAre("tun", "kvm"));
}

TEST(ParseDeviceList, RefusesUnknownEmptyAndRepeatedNames) {
  const Result<std::vector<DeviceKind>> unknown = parse_device_list("kvm,sev");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "unknown device \"sev\" (known: kvm, tun, vhost-net, vhost-vsock)");
  EXPECT_FALSE(parse_device_list(""));
  EXPECT_THAT(parse_device_list("kvm,,tun").error().message, HasSubstr("empty device name"));
  EXPECT_THAT(parse_device_list("kvm,").error().message, HasSubstr("empty device name"));
  EXPECT_EQ(parse_device_list("tun,tun").error().message, "device \"tun\" given twice");
}

TEST(Permissions, FollowTheCgroupVersionAsVirtHandler) {
  EXPECT_EQ(device_permissions(CgroupMode::v1), "rw");
  EXPECT_EQ(device_permissions(CgroupMode::v2), "rwm");
}

TEST(Health, IsWhetherTheDeviceNodeExists) {
  DeviceScan scan;
  scan.present.emplace("/dev/kvm");
  EXPECT_EQ(health_of(kind_named("kvm"), scan), Health::healthy);
  EXPECT_EQ(health_of(kind_named("tun"), scan), Health::unhealthy);
  EXPECT_EQ(health_name(Health::healthy), "Healthy");
  EXPECT_EQ(health_name(Health::unhealthy), "Unhealthy");
}

TEST(AdvertisedDevices, AreNumberedUnitsSharingOneHealth) {
  const std::vector<AdvertisedDevice> devices = advertised_devices(kind_named("tun"), 1000, Health::unhealthy);
  ASSERT_EQ(devices.size(), 1000U);
  EXPECT_EQ(devices.front().id, "tun0");
  EXPECT_EQ(devices.back().id, "tun999");
  for (const AdvertisedDevice& device : devices) {
    EXPECT_EQ(device.health, Health::unhealthy);
  }
}

TEST(Allocate, GivesEachContainerTheDeviceNodeOnce) {
  const std::vector<ContainerAllocation> allocations = allocate(kind_named("vhost-net"), "rwm", 2);
  const DeviceSpec expected{.container_path = "/dev/vhost-net", .host_path = "/dev/vhost-net", .permissions = "rwm"};
  ASSERT_EQ(allocations.size(), 2U);
  EXPECT_THAT(allocations[0].devices, ElementsAre(expected));
  EXPECT_THAT(allocations[1].devices, ElementsAre(expected));
}

TEST(Allocate, UsesTheHostPathInTheContainerToo) {
  const std::vector<ContainerAllocation> allocations = allocate(kind_named("tun"), "rw", 1);
  ASSERT_EQ(allocations.size(), 1U);
  EXPECT_THAT(
      allocations[0].devices,
      ElementsAre(DeviceSpec{.container_path = "/dev/net/tun", .host_path = "/dev/net/tun", .permissions = "rw"}));
}

TEST(Allocate, OfNoContainerIsEmpty) {
  EXPECT_TRUE(allocate(kind_named("kvm"), "rw", 0).empty());
}

constexpr FileId kubelet_a{.device = 1, .inode = 10};
constexpr FileId kubelet_b{.device = 1, .inode = 11};
constexpr FileId socket_a{.device = 1, .inode = 20};
constexpr FileId socket_b{.device = 1, .inode = 21};

TEST(PlanPlugin, WaitsForTheKubelet) {
  EXPECT_EQ(plan_plugin({}, {}), PluginAction::wait_for_kubelet);
  EXPECT_EQ(plan_plugin({.serving = socket_a, .registered_with = kubelet_a}, {.kubelet = {}, .plugin = socket_a}),
            PluginAction::wait_for_kubelet);
}

TEST(PlanPlugin, ServesAndRegistersAtFirst) {
  EXPECT_EQ(plan_plugin({}, {.kubelet = kubelet_a, .plugin = {}}), PluginAction::serve_and_register);
}

TEST(PlanPlugin, IsDoneWhenServingAndRegisteredWithThisKubelet) {
  EXPECT_EQ(
      plan_plugin({.serving = socket_a, .registered_with = kubelet_a}, {.kubelet = kubelet_a, .plugin = socket_a}),
      PluginAction::none);
}

TEST(PlanPlugin, ServesAgainWhenItsSocketIsGoneOrReplaced) {
  // A restarting kubelet empties its directory: our socket goes, kubelet.sock is new.
  EXPECT_EQ(plan_plugin({.serving = socket_a, .registered_with = kubelet_a}, {.kubelet = kubelet_b, .plugin = {}}),
            PluginAction::serve_and_register);
  EXPECT_EQ(
      plan_plugin({.serving = socket_a, .registered_with = kubelet_a}, {.kubelet = kubelet_a, .plugin = socket_b}),
      PluginAction::serve_and_register);
}

TEST(PlanPlugin, RegistersAgainWithANewKubeletOrAfterAFailure) {
  EXPECT_EQ(
      plan_plugin({.serving = socket_a, .registered_with = kubelet_a}, {.kubelet = kubelet_b, .plugin = socket_a}),
      PluginAction::register_again);
  EXPECT_EQ(plan_plugin({.serving = socket_a, .registered_with = {}}, {.kubelet = kubelet_a, .plugin = socket_a}),
            PluginAction::register_again);
}

}  // namespace
}  // namespace vmgate::node
