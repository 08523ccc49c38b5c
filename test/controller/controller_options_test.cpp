// `vmgate controller`'s options: values, defaults and every refusal naming its option.
#include <gtest/gtest.h>

#include <vector>

#include "vmgate/controller/controller_command.hpp"

namespace vmgate::controller {
namespace {

Result<ControllerOptions> parse(std::vector<std::string_view> args) {
  return parse_controller_options(args);
}

TEST(ControllerOptions, DefaultsAndValues) {
  Result<ControllerOptions> defaults = parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->namespace_name.empty());
  EXPECT_TRUE(defaults->lease_name.empty());
  EXPECT_EQ(defaults->resync, std::chrono::seconds(30));
  EXPECT_EQ(defaults->lease_duration, std::chrono::seconds(15));
  EXPECT_EQ(defaults->container_disk_delivery, ContainerDiskDelivery::copy);
  Result<ControllerOptions> all = parse({"--kubeconfig",
                                         "k",
                                         "--context=c",
                                         "-n",
                                         "ns",
                                         "--lease-namespace",
                                         "kube-system",
                                         "--lease-name",
                                         "vmgate",
                                         "--identity",
                                         "a",
                                         "--launcher-image",
                                         "img:1",
                                         "--container-disk-delivery",
                                         "image-volume",
                                         "--use-emulation",
                                         "--resync",
                                         "2s",
                                         "--lease-duration",
                                         "5s"});
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->kubeconfig, "k");
  EXPECT_EQ(all->context, "c");
  EXPECT_EQ(all->namespace_name, "ns");
  EXPECT_EQ(all->lease_namespace, "kube-system");
  EXPECT_EQ(all->lease_name, "vmgate");
  EXPECT_EQ(all->identity, "a");
  EXPECT_EQ(all->launcher_image, "img:1");
  EXPECT_EQ(all->container_disk_delivery, ContainerDiskDelivery::image_volume);
  EXPECT_TRUE(all->use_emulation);
  EXPECT_EQ(all->resync, std::chrono::seconds(2));
  EXPECT_EQ(all->lease_duration, std::chrono::seconds(5));
}

TEST(ControllerOptions, KubeVirtVersion) {
  Result<ControllerOptions> defaults = parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->release.has_value());
  Result<ControllerOptions> v18 = parse({"--kubevirt-version", "v1.8.2"});
  ASSERT_TRUE(v18.ok()) << v18.error().message;
  EXPECT_EQ(v18->release, admission::Release::v1_8);
}

TEST(ControllerOptions, Refusals) {
  const std::vector<std::pair<std::vector<std::string_view>, std::string>> cases = {
      {{"--lease-name", "x"}, "--lease-name and --lease-namespace go together"},
      {{"--lease-namespace", "x"}, "--lease-name and --lease-namespace go together"},
      {{"--identity", "a"}, "--identity is only used with --lease-name"},
      {{"--context", "c"}, "--context needs --kubeconfig"},
      {{"--resync", "soon"}, "--resync:"},
      {{"--resync", "1ms"}, "--resync must be at least"},
      {{"--lease-duration", "1s"}, "--lease-duration must be at least"},
      {{"--namespace="}, "--namespace"},
      {{"--bogus"}, "--bogus"},
      {{"extra"}, "unexpected argument \"extra\""},
      // The launcher reads its VMI from the pod and holds no token: the api link is gone.
      {{"--launcher-link", "api"}, "--launcher-link"},
      {{"--launcher-service-account", "sa"}, "--launcher-service-account"},
      {{"--container-disk-delivery", "pull"}, "--container-disk-delivery must be copy or image-volume, not \"pull\""},
      {{"--kubevirt-version", "v1.6"},
       "--kubevirt-version: KubeVirt version \"v1.6\" is not supported (supported: v1.7, v1.8, main)"},
  };
  for (const auto& [args, message] : cases) {
    Result<ControllerOptions> parsed = parse(args);
    ASSERT_FALSE(parsed.ok()) << message;
    EXPECT_NE(parsed.error().message.find(message), std::string::npos) << parsed.error().message;
  }
}

TEST(ControllerOptions, UsageListsEveryOption) {
  const std::string usage = controller_usage();
  for (const char* option :
       {"--kubeconfig", "--context", "--namespace", "--lease-namespace", "--lease-name", "--identity",
        "--launcher-image", "--container-disk-delivery", "--use-emulation", "--resync", "--lease-duration", "--help"}) {
    EXPECT_NE(usage.find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace vmgate::controller
