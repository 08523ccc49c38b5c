#include "vmgate/node/node_options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vmgate::node {
namespace {

using ::testing::HasSubstr;

Result<NodeOptions> parse(std::vector<std::string_view> args) {
  return parse_node_options(args);
}

TEST(NodeOptions, DefaultToEveryDeviceInKubeletsDirectory) {
  Result<NodeOptions> options = parse({});
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->device_plugin_dir, "/var/lib/kubelet/device-plugins");
  ASSERT_EQ(options->devices.size(), 4U);
  EXPECT_EQ(options->devices[0].name, "kvm");
  EXPECT_EQ(options->devices[3].name, "vhost-vsock");
  EXPECT_EQ(options->max_devices, 1000);
  EXPECT_EQ(options->dev_root, "");
  EXPECT_FALSE(options->help);
}

TEST(NodeOptions, TakeDirectoryDevicesRootAndCount) {
  Result<NodeOptions> options =
      parse({"--device-plugin-dir", "/tmp/dp", "--devices=tun,kvm", "--dev-root", "/tmp/root", "--max-devices", "7"});
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->device_plugin_dir, "/tmp/dp");
  ASSERT_EQ(options->devices.size(), 2U);
  EXPECT_EQ(options->devices[0].name, "tun");
  EXPECT_EQ(options->devices[1].name, "kvm");
  EXPECT_EQ(options->dev_root, "/tmp/root");
  EXPECT_EQ(options->max_devices, 7);
}

TEST(NodeOptions, RefuseWhatTheyCannotUse) {
  EXPECT_THAT(parse({"--devices", "kvm,gpu"}).error().message, HasSubstr("--devices: unknown device \"gpu\""));
  EXPECT_THAT(parse({"--max-devices", "0"}).error().message, HasSubstr("--max-devices"));
  EXPECT_THAT(parse({"--max-devices", "12x"}).error().message, HasSubstr("--max-devices"));
  EXPECT_FALSE(parse({"--device-plugin-dir="}));
  EXPECT_FALSE(parse({"--bogus"}));
  EXPECT_FALSE(parse({"operand"}));
  EXPECT_FALSE(parse({"--devices", "kvm", "--devices", "tun"}));
}

TEST(NodeOptions, HelpListsTheOptions) {
  Result<NodeOptions> options = parse({"-h"});
  ASSERT_TRUE(options);
  EXPECT_TRUE(options->help);
  EXPECT_THAT(node_usage(), HasSubstr("--device-plugin-dir DIR"));
  EXPECT_THAT(node_usage(), HasSubstr("--devices LIST"));
}

}  // namespace
}  // namespace vmgate::node
