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

TEST(NodeOptions, SubresourceEndpointIsOffOrFullyConfigured) {
  Result<NodeOptions> off = parse({});
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->subresource_listen);
  EXPECT_EQ(off->subresource_client_name, "vmgate-subresources");
  Result<NodeOptions> on = parse({"--subresource-listen=0.0.0.0:8186", "--subresource-tls-cert=/s/tls.crt",
                                  "--subresource-tls-key=/s/tls.key", "--subresource-client-ca=/s/ca.crt",
                                  "--subresource-client-name", "serve"});
  ASSERT_TRUE(on) << on.error().message;
  EXPECT_EQ(*on->subresource_listen, (ListenAddress{"0.0.0.0", 8186}));
  EXPECT_EQ(on->subresource_tls_cert, "/s/tls.crt");
  EXPECT_EQ(on->subresource_tls_key, "/s/tls.key");
  EXPECT_EQ(on->subresource_client_ca, "/s/ca.crt");
  EXPECT_EQ(on->subresource_client_name, "serve");
  EXPECT_THAT(parse({"--subresource-listen=:8186"}).error().message, HasSubstr("not ADDR:PORT"));
  EXPECT_THAT(parse({"--subresource-listen=127.0.0.1:8186"}).error().message,
              HasSubstr("needs --subresource-tls-cert, --subresource-tls-key and --subresource-client-ca"));
  EXPECT_THAT(parse({"--subresource-tls-cert=/c"}).error().message, HasSubstr("need --subresource-listen"));
}

TEST(NodeOptions, ListenAddresses) {
  EXPECT_EQ(*parse_listen_address("127.0.0.1:0"), (ListenAddress{"127.0.0.1", 0}));
  EXPECT_EQ(*parse_listen_address("[::]:8186"), (ListenAddress{"::", 8186}));
  EXPECT_FALSE(parse_listen_address("::1:8186"));
  EXPECT_FALSE(parse_listen_address("127.0.0.1"));
  EXPECT_FALSE(parse_listen_address("127.0.0.1:65536"));
  EXPECT_FALSE(parse_listen_address("127.0.0.1:x"));
  EXPECT_FALSE(parse_listen_address("[]:1"));
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
