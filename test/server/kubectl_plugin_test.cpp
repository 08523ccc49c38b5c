// `vmgate` as the kubectl plugin `kubectl-vmgate`: the name from argv[0], kubectl's default
// kubeconfig, and what `check` accepts and prints under that name.
#include "vmgate/server/kubectl_plugin.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/server/check_options.hpp"

namespace vmgate::cli {
namespace {

TEST(KubectlPlugin, FrontendFromArgv0) {
  EXPECT_EQ(frontend_of("kubectl-vmgate"), Frontend::kubectl_plugin);
  EXPECT_EQ(frontend_of("/usr/local/bin/kubectl-vmgate"), Frontend::kubectl_plugin);  // as kubectl execs it
  EXPECT_EQ(frontend_of("./kubectl-vmgate"), Frontend::kubectl_plugin);
  EXPECT_EQ(frontend_of("vmgate"), Frontend::vmgate);
  EXPECT_EQ(frontend_of("/usr/local/bin/vmgate"), Frontend::vmgate);
  EXPECT_EQ(frontend_of("/opt/kubectl-vmgate/vmgate"), Frontend::vmgate);  // the directory does not count
  EXPECT_EQ(frontend_of("kubectl-vmgate-old"), Frontend::vmgate);
  EXPECT_EQ(frontend_of("kubectl-vmgate/"), Frontend::vmgate);
  EXPECT_EQ(frontend_of(""), Frontend::vmgate);
  EXPECT_EQ(command_name(Frontend::kubectl_plugin), "kubectl vmgate");
  EXPECT_EQ(command_name(Frontend::vmgate), "vmgate");
}

FileExists only(std::set<std::string> files) {
  return [files = std::move(files)](const std::string& path) { return files.count(path) > 0; };
}

TEST(KubectlPlugin, DefaultKubeconfigIsHomeKubeConfig) {
  Result<std::string> path = default_kubeconfig(nullptr, "/home/ada", only({"/home/ada/.kube/config"}));
  ASSERT_TRUE(path.ok()) << path.error().message;
  EXPECT_EQ(*path, "/home/ada/.kube/config");
  // An empty KUBECONFIG is unset for kubectl.
  EXPECT_EQ(default_kubeconfig("", "/home/ada/", only({"/home/ada/.kube/config"})).value(), "/home/ada/.kube/config");
}

TEST(KubectlPlugin, MissingHomeKubeConfigIsNamed) {
  Result<std::string> path = default_kubeconfig(nullptr, "/home/ada", only({}));
  ASSERT_FALSE(path.ok());
  EXPECT_NE(path.error().message.find("/home/ada/.kube/config"), std::string::npos) << path.error().message;
  EXPECT_NE(path.error().message.find("does not exist"), std::string::npos) << path.error().message;
  EXPECT_NE(path.error().message.find("KUBECONFIG"), std::string::npos) << path.error().message;

  Result<std::string> nothing = default_kubeconfig(nullptr, nullptr, only({"/.kube/config"}));
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.error().message.find("HOME"), std::string::npos) << nothing.error().message;
}

TEST(KubectlPlugin, KubeconfigListKeepsExistingFilesInOrder) {
  // kubectl skips the files of the list that do not exist and merges the others in order.
  Result<std::string> path = default_kubeconfig("/a:/missing::/b:", "/home/ada", only({"/a", "/b"}));
  ASSERT_TRUE(path.ok()) << path.error().message;
  EXPECT_EQ(*path, "/a:/b");
  // KUBECONFIG wins over HOME even when HOME's file exists.
  EXPECT_EQ(default_kubeconfig("/b", "/home/ada", only({"/b", "/home/ada/.kube/config"})).value(), "/b");
}

TEST(KubectlPlugin, KubeconfigNamingNoFileIsNamed) {
  Result<std::string> one = default_kubeconfig("/tmp/gone", "/home/ada", only({"/home/ada/.kube/config"}));
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.error().message.find("KUBECONFIG=/tmp/gone does not exist"), std::string::npos) << one.error().message;
  Result<std::string> list = default_kubeconfig("/x:/y", "/home/ada", only({}));
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("KUBECONFIG=/x:/y names no file that exists"), std::string::npos)
      << list.error().message;
}

Result<CheckOptions> parse(std::vector<std::string_view> args, Frontend frontend) {
  return parse_check_options(args, frontend);
}

TEST(KubectlPlugin, ContextWithoutKubeconfigOnlyAsPlugin) {
  Result<CheckOptions> plugin = parse({"-f", "vm.yaml", "--context", "kind-a"}, Frontend::kubectl_plugin);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  EXPECT_EQ(plugin->context, "kind-a");
  EXPECT_TRUE(plugin->kubeconfig.empty());  // the caller fills in kubectl's

  Result<CheckOptions> plain = parse({"-f", "vm.yaml", "--context", "kind-a"}, Frontend::vmgate);
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().message, "--context needs --kubeconfig");

  Result<CheckOptions> with_objects =
      parse({"-f", "vm.yaml", "--context", "kind-a", "--objects", "cluster/"}, Frontend::kubectl_plugin);
  ASSERT_FALSE(with_objects.ok());
  EXPECT_NE(with_objects.error().message.find("--objects"), std::string::npos);
}

TEST(KubectlPlugin, NamespaceFromContextUnlessGiven) {
  EXPECT_TRUE(parse({"-f", "vm.yaml"}, Frontend::kubectl_plugin)->namespace_from_context);
  EXPECT_TRUE(parse({"-f", "vm.yaml", "--kubeconfig", "k"}, Frontend::kubectl_plugin)->namespace_from_context);
  Result<CheckOptions> given = parse({"-f", "vm.yaml", "-n", "team-a"}, Frontend::kubectl_plugin);
  ASSERT_TRUE(given.ok());
  EXPECT_FALSE(given->namespace_from_context);
  EXPECT_EQ(given->namespace_name, "team-a");
  EXPECT_EQ(parse({"-f", "vm.yaml", "--namespace=team-b"}, Frontend::kubectl_plugin)->namespace_name, "team-b");
  EXPECT_FALSE(parse({"-f", "vm.yaml", "--objects", "c/"}, Frontend::kubectl_plugin)->namespace_from_context);
  // `vmgate check` keeps "default" whatever the kubeconfig says.
  EXPECT_FALSE(parse({"-f", "vm.yaml", "--kubeconfig", "k"}, Frontend::vmgate)->namespace_from_context);
}

}  // namespace
}  // namespace vmgate::cli
