// In-process tests of `vmgate` (vmgate::cli::run with injected streams).
#include "vmgate/cmd/cli.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/check_test_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/yaml_json.hpp"
#include "vmgate/server/certs_options.hpp"
#include "vmgate/server/check_options.hpp"
#include "vmgate/server/serve_options.hpp"

namespace vmgate::cli {
namespace {

const std::string fixtures = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/check/";

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

Ran vmgate(std::vector<std::string> args, const std::string& input = "", bool color = false,
           Frontend frontend = Frontend::vmgate) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  Ran ran;
  ran.status = run(views, Console{in, out, err, color}, frontend);
  ran.out = out.str();
  ran.err = err.str();
  return ran;
}

TEST(Cli, Version) {
  const Ran ran = vmgate({"version"});
  EXPECT_EQ(ran.status, 0);
  EXPECT_EQ(ran.out.rfind("vmgate ", 0), 0U) << ran.out;
  EXPECT_EQ(ran.out.find("unknown"), std::string::npos) << ran.out;  // the project's version is compiled in
  EXPECT_EQ(ran.out.back(), '\n');
  EXPECT_EQ(vmgate({"version", "extra"}).status, 2);
}

TEST(Cli, Help) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const Ran ran = vmgate({flag});
    EXPECT_EQ(ran.status, 0) << flag;
    EXPECT_EQ(ran.out, usage()) << flag;
    EXPECT_TRUE(ran.err.empty());
  }
  const Ran check_help = vmgate({"check", "--help"});
  EXPECT_EQ(check_help.status, 0);
  EXPECT_NE(check_help.out.find("Usage: vmgate check"), std::string::npos);
  EXPECT_NE(check_help.out.find("--objects"), std::string::npos);
}

TEST(Cli, NoArgumentsPrintsUsageToStderr) {
  const Ran ran = vmgate({});
  EXPECT_EQ(ran.status, 2);
  EXPECT_TRUE(ran.out.empty());
  EXPECT_EQ(ran.err, usage());
}

TEST(Cli, ServeRefusesBadArgumentsBeforeStarting) {
  const Ran ran = vmgate({"serve", "--listen", "localhost:8443"});
  EXPECT_EQ(ran.status, 2);
  EXPECT_TRUE(ran.out.empty());
  EXPECT_NE(ran.err.find("error: --listen: \"localhost:8443\": the address must be an IP address"), std::string::npos)
      << ran.err;
}

TEST(Cli, ServeHelp) {
  const Ran ran = vmgate({"help", "serve"});
  EXPECT_EQ(ran.status, 0);
  EXPECT_EQ(ran.out, vmgate::serve::serve_usage());
}

TEST(Cli, CertsHelpAndBadArguments) {
  const Ran help = vmgate({"help", "certs"});
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out, vmgate::certs::certs_usage());
  EXPECT_EQ(vmgate({"certs", "--help"}).out, vmgate::certs::certs_usage());
  const Ran bad = vmgate({"certs", "--namespace", "ns", "--service", "vmgate"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "error: --secret is required\nSee 'vmgate certs --help'.\n");
  // Without --kubeconfig outside a pod (the tests run with KUBERNETES_SERVICE_HOST empty).
  const Ran nowhere = vmgate({"certs", "--namespace", "ns", "--service", "vmgate", "--secret", "s", "--once"});
  EXPECT_EQ(nowhere.status, 2);
  EXPECT_NE(nowhere.err.find("no --kubeconfig, and not in a pod"), std::string::npos) << nowhere.err;
}

TEST(Cli, UnknownCommand) {
  const Ran ran = vmgate({"apply", "-f", "x"});
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.err, "error: unknown command \"apply\"\nSee 'vmgate --help'.\n");
}

struct ArgumentError {
  std::vector<std::string> args;
  std::string message;  // expected in stderr
};

void PrintTo(const ArgumentError& e, std::ostream* out) {
  for (const std::string& arg : e.args) {
    *out << arg << ' ';
  }
}

class CheckExitsTwo : public ::testing::TestWithParam<ArgumentError> {};

TEST_P(CheckExitsTwo, WithAMessageAndNothingOnStdout) {
  std::vector<std::string> args{"check"};
  for (const std::string& arg : GetParam().args) {
    args.push_back(arg.starts_with("@") ? fixtures + arg.substr(1) : arg);
  }
  const Ran ran = vmgate(args);
  EXPECT_EQ(ran.status, 2) << ran.err;
  EXPECT_TRUE(ran.out.empty()) << ran.out;
  EXPECT_NE(ran.err.find(GetParam().message), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("error: "), std::string::npos) << ran.err;
}

INSTANTIATE_TEST_SUITE_P(
    Check, CheckExitsTwo,
    ::testing::Values(
        ArgumentError{{}, "error: no input: give the objects to check with -f FILE|DIR|-\nSee 'vmgate check --help'."},
        ArgumentError{{"-f", "@vm.yaml", "--kubeconfig", "/nonexistent/kubeconfig"},
                      "error: kubeconfig /nonexistent/kubeconfig: cannot read: No such file or directory"},
        ArgumentError{{"-f", "@vm.yaml", "-o", "table"}, "-o must be text, json or yaml"},
        ArgumentError{{"-f", "@vm.yaml", "--operation", "UPDATE"}, "needs the object before the update: --old FILE"},
        ArgumentError{{"-f", "@vm.yaml", "--old", "@vm.yaml"}, "--old is only meaningful with --operation UPDATE"},
        ArgumentError{{"-f", "/nonexistent.yaml"}, "error: /nonexistent.yaml: no such file or directory"},
        ArgumentError{{"-f", "@broken.yaml"}, "broken.yaml:6:5: end of sequence flow not found"},
        ArgumentError{{"-f", "@duplicate-key.yaml"}, "duplicate-key.yaml:5:3: duplicate key \"name\""},
        ArgumentError{{"-f", "@only-configmap.yaml"}, "error: no VirtualMachine or VirtualMachineInstance found in "},
        ArgumentError{{"-f", "@vm.yaml", "--objects", "@objects-without-name.yaml"},
                      "objects-without-name.yaml#0: metadata.name is required"},
        ArgumentError{{"-f", "@vm.yaml", "--objects", "@broken.yaml"}, "broken.yaml:6:5:"},
        ArgumentError{{"-f", "@vm.yaml", "--operation", "UPDATE", "--old", "@vmi.yaml"},
                      "expected exactly one object, found 2"},
        ArgumentError{{"-f", "@vm.yaml", "--operation", "UPDATE", "--old", "@only-configmap.yaml"},
                      "is not a kubevirt.io VirtualMachine or VirtualMachineInstance"},
        ArgumentError{{"-f", "@vm.yaml", "--operation", "UPDATE", "--old", "@vm-conflict.yaml"},
                      "holds VirtualMachine team-a/vm-conflict; no old object for "},
        ArgumentError{{"-f", "@vm-updated.yaml", "-f", "@vmi.yaml", "--operation", "UPDATE", "--old", "@vm.yaml"},
                      "(VirtualMachineInstance default/vmi1)"}));

constexpr std::string_view vmi_body = R"(
kind: VirtualMachineInstance
metadata:
  name: vmi1
spec:
  domain:
    devices: {}
    resources:
      requests:
        memory: 512Mi
)";

// kube-apiserver serves KubeVirt's kinds at v1 and v1alpha3 only (register.go
// ApiSupportedVersions); kubectl refuses any other version before a webhook could judge it.
TEST(Cli, AnUnservedVersionIsNotJudged) {
  const testing::TempDir dir;
  const std::string file = dir.write("old.yaml", "apiVersion: kubevirt.io/v1alpha2" + std::string(vmi_body) +
                                                     "---\napiVersion: kubevirt.io/v1alpha3" + std::string(vmi_body) +
                                                     "---\napiVersion: kubevirt.io/v1" + std::string(vmi_body));
  const Ran ran = vmgate({"check", "-f", file, "-o", "json"});
  EXPECT_EQ(ran.status, 1) << ran.err;
  auto report = json::parse_json(ran.out);
  ASSERT_TRUE(report.ok()) << ran.out;
  const json::Value& results = (*report)["results"];
  ASSERT_EQ(results.Size(), 3U);
  const json::Value& unserved = results[0];
  EXPECT_EQ(json::find_string(unserved, "source"), file + "#0");
  EXPECT_FALSE(unserved["allowed"].GetBool());
  EXPECT_EQ(unserved["code"].GetInt(), 404);
  EXPECT_EQ(json::find_string(unserved, "reason"), "NotFound");
  EXPECT_EQ(json::find_string(unserved, "message"),
            R"(no matches for kind "VirtualMachineInstance" in version "kubevirt.io/v1alpha2")");
  EXPECT_EQ(unserved["causes"].Size(), 0U);
  EXPECT_TRUE(unserved["admitted"].IsNull());
  EXPECT_TRUE(results[1]["allowed"].GetBool()) << json::find_string(results[1], "message");  // v1alpha3
  EXPECT_TRUE(results[2]["allowed"].GetBool()) << json::find_string(results[2], "message");  // v1

  const Ran text = vmgate({"check", "-f", file});
  EXPECT_NE(
      text.out.find("virtualmachineinstance.kubevirt.io/vmi1 [default, " + file +
                    R"(#0] denied: no matches for kind "VirtualMachineInstance" in version "kubevirt.io/v1alpha2")"),
      std::string::npos)
      << text.out;

  const std::string current = dir.write("vmi.yaml", "apiVersion: kubevirt.io/v1" + std::string(vmi_body));
  const std::string old = dir.write("vmi-v1alpha1.yaml", "apiVersion: kubevirt.io/v1alpha1" + std::string(vmi_body));
  const Ran update = vmgate({"check", "-f", current, "--operation", "UPDATE", "--old", old});
  EXPECT_EQ(update.status, 2);
  EXPECT_TRUE(update.out.empty()) << update.out;
  EXPECT_NE(update.err.find(old + "#0: no matches for kind \"VirtualMachineInstance\" in version "
                                  "\"kubevirt.io/v1alpha1\""),
            std::string::npos)
      << update.err;
}

// kubectl apply -f DIR applies every file it can read and names the others; so does check,
// with exit status 2.
TEST(Cli, AnUnusableFileDoesNotStopTheOthers) {
  const testing::TempDir dir;
  dir.write("a.yaml", "apiVersion: kubevirt.io/v1" + std::string(vmi_body));
  const std::string bad = dir.write("b.yaml", "apiVersion: kubevirt.io/v1\nkind: [\n");
  dir.write("c.yaml", "apiVersion: kubevirt.io/v1" + std::string(vmi_body.substr(0, vmi_body.find("    resources"))));
  for (const std::string format : {"text", "json", "yaml"}) {
    const Ran ran = vmgate({"check", "-f", dir.path().string(), "-o", format});
    EXPECT_EQ(ran.status, 2) << format;
    EXPECT_EQ(ran.err.rfind("error: " + bad + ":", 0), 0U) << ran.err;
    EXPECT_EQ(ran.err.find('\n'), ran.err.size() - 1) << "one line: " << ran.err;
    if (format == "text") {
      EXPECT_NE(ran.out.find("a.yaml#0] admitted"), std::string::npos) << ran.out;
      EXPECT_NE(ran.out.find("c.yaml#0] denied"), std::string::npos) << ran.out;
      continue;
    }
    auto documents = kube::yaml_to_json(ran.out);  // JSON is YAML too
    ASSERT_TRUE(documents.ok()) << documents.error().message;
    ASSERT_EQ(documents->size(), 1U);
    const json::Value& results = (*(*documents)[0].document)["results"];
    ASSERT_EQ(results.Size(), 2U) << ran.out.substr(0, 300);
    EXPECT_EQ(json::find_string(results[0], "source"), (dir.path() / "a.yaml").string() + "#0");
    EXPECT_EQ(json::find_string(results[1], "source"), (dir.path() / "c.yaml").string() + "#0");
  }

  // Nothing usable left: the errors only, nothing on stdout.
  const testing::TempDir only_bad;
  const std::string first = only_bad.write("a.yaml", "kind: [\n");
  const std::string second = only_bad.write("b.json", "{");
  only_bad.write("c.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
  const Ran none = vmgate({"check", "-f", only_bad.path().string(), "-o", "json"});
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(none.out.empty()) << none.out;
  EXPECT_NE(none.err.find("error: " + first + ":"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("error: " + second + ":"), std::string::npos) << none.err;
  EXPECT_EQ(none.err.find("no VirtualMachine or VirtualMachineInstance found"), std::string::npos) << none.err;
}

TEST(Cli, NotesGoToStderr) {
  const Ran ran = vmgate({"check", "-f", fixtures + "vmi.yaml", "--objects", fixtures + "cluster"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.err.find("note: " + fixtures + "cluster/service.yaml#0: skipping kind Service\n"), std::string::npos)
      << ran.err;
  EXPECT_NE(ran.err.find("note: " + fixtures + "vmi.yaml#0: skipping kind ConfigMap\n"), std::string::npos) << ran.err;
  EXPECT_EQ(ran.out.find("note:"), std::string::npos);
}

TEST(Cli, ReadsStdin) {
  const std::string vmi = testing::read_file(fixtures + "vmi.yaml");
  const Ran ran = vmgate({"check", "-f", "-", "-o", "json"}, vmi);
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.out.find("\"source\": \"-#1\""), std::string::npos) << ran.out.substr(0, 300);
}

TEST(Cli, ObjectsFromStdin) {
  const std::string cluster = testing::read_file(fixtures + "cluster/instancetypes.yaml") + "\n---\n" +
                              testing::read_file(fixtures + "cluster/preferences.json");
  const Ran ran = vmgate({"check", "-f", fixtures + "vm.yaml", "--objects", "-"}, cluster);
  EXPECT_EQ(ran.status, 0) << ran.err;
}

TEST(Cli, TextOutputWithoutAndWithColour) {
  const std::vector<std::string> args{
      "check", "-f", fixtures + "vm.yaml", "-f", fixtures + "vm-conflict.yaml", "--objects", fixtures + "cluster"};
  const Ran plain = vmgate(args);
  EXPECT_EQ(plain.status, 1) << plain.err;
  EXPECT_EQ(plain.out.find('\033'), std::string::npos);
  EXPECT_EQ(plain.out.rfind("virtualmachine.kubevirt.io/vm1 [default, " + fixtures + "vm.yaml#0] admitted (", 0), 0U)
      << plain.out;
  EXPECT_NE(plain.out.find("virtualmachine.kubevirt.io/vm-conflict [team-a, " + fixtures +
                           "vm-conflict.yaml#0] denied:\n"
                           "  - spec.template.spec.domain.cpu.sockets: "),
            std::string::npos)
      << plain.out;
  const Ran coloured = vmgate(args, "", true);
  EXPECT_NE(coloured.out.find("\033[32madmitted\033[0m"), std::string::npos) << coloured.out;
  EXPECT_NE(coloured.out.find("\033[31mdenied\033[0m"), std::string::npos) << coloured.out;
}

TEST(Cli, YamlOutputIsTheJsonDocument) {
  // One clock for both runs: the VMI records its Pending transition time, and two runs may fall
  // on both sides of a second.
  ::setenv("SOURCE_DATE_EPOCH", "1767225600", 1);
  const std::vector<std::string> base{
      "check", "-f", fixtures + "vm.yaml", "-f", fixtures + "vmi-no-memory.json", "--objects", fixtures + "cluster"};
  std::vector<std::string> as_json = base;
  as_json.insert(as_json.end(), {"-o", "json"});
  std::vector<std::string> as_yaml = base;
  as_yaml.insert(as_yaml.end(), {"-o", "yaml"});
  const Ran json_run = vmgate(as_json);
  const Ran yaml_run = vmgate(as_yaml);
  EXPECT_EQ(json_run.status, 1);
  EXPECT_EQ(yaml_run.status, 1);
  auto from_json = json::parse_json(json_run.out);
  ASSERT_TRUE(from_json.ok()) << from_json.error().message;
  auto from_yaml = kube::yaml_to_json(yaml_run.out);
  ASSERT_TRUE(from_yaml.ok()) << from_yaml.error().message;
  ASSERT_EQ(from_yaml->size(), 1U);
  EXPECT_TRUE(json::equal(*from_json, *(*from_yaml)[0].document));
  ::unsetenv("SOURCE_DATE_EPOCH");
}

TEST(Cli, UpdateWithOldObject) {
  const Ran ran = vmgate({"check", "-f", fixtures + "vm-updated.yaml", "--objects", fixtures + "cluster", "--operation",
                          "UPDATE", "--old", fixtures + "vm.yaml", "-o", "json"});
  EXPECT_EQ(ran.status, 0) << ran.err;
  auto report = json::parse_json(ran.out);
  ASSERT_TRUE(report.ok());
  const json::Value& result = (*report)["results"][0];
  EXPECT_EQ(json::find_string(result, "name"), "vm1");
  EXPECT_TRUE(result["allowed"].GetBool());
}

TEST(Cli, NamespaceOption) {
  const Ran ran = vmgate({"check", "-f", fixtures + "vmi.yaml", "-f", fixtures + "vm-conflict.yaml", "--objects",
                          fixtures + "cluster", "-n", "team-b", "-o", "json"});
  auto report = json::parse_json(ran.out);
  ASSERT_TRUE(report.ok()) << ran.err;
  EXPECT_EQ(json::find_string((*report)["results"][0], "namespace"), "team-b");  // from --namespace
  EXPECT_EQ(json::find_string((*report)["results"][1], "namespace"), "team-a");  // from metadata
}

// Through the dispatcher as the kubectl plugin: usage, hints and kubectl's default kubeconfig.
Ran plugin(std::vector<std::string> args) {
  return vmgate(std::move(args), "", false, Frontend::kubectl_plugin);
}

TEST(KubectlPlugin, UsageSaysKubectlVmgate) {
  const Ran help = plugin({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("kubectl vmgate: ", 0), 0U) << help.out;
  EXPECT_EQ(help.out.find("  vmgate "), std::string::npos) << help.out;  // no usage line of plain vmgate

  const Ran check_help = plugin({"check", "--help"});
  EXPECT_EQ(check_help.status, 0);
  EXPECT_EQ(check_help.out.rfind("Usage: kubectl vmgate check ", 0), 0U) << check_help.out;
  EXPECT_NE(check_help.out.find("~/.kube/config"), std::string::npos);
  // The second usage line stays under the first option.
  EXPECT_NE(check_help.out.find("\n                            [--operation"), std::string::npos) << check_help.out;
  EXPECT_EQ(check_usage(Frontend::vmgate).find("kubectl vmgate"), std::string::npos);
  EXPECT_EQ(check_usage(Frontend::vmgate).find("~/.kube/config"), std::string::npos);

  const Ran bad = plugin({"check", "--bogus"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("See 'kubectl vmgate check --help'."), std::string::npos) << bad.err;
  const Ran unknown = plugin({"frobnicate"});
  EXPECT_NE(unknown.err.find("See 'kubectl vmgate --help'."), std::string::npos) << unknown.err;
  const Ran none = plugin({});
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err, usage(Frontend::kubectl_plugin));
}

// The environment is the process's: this test sets KUBECONFIG and puts it back.
class PluginEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv("KUBECONFIG")) {
      saved_ = value;
    }
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("KUBECONFIG", saved_->c_str(), 1);
    } else {
      ::unsetenv("KUBECONFIG");
    }
  }

 private:
  std::optional<std::string> saved_;
};

TEST_F(PluginEnvironment, CheckWithoutKubeconfigNamesTheFileLookedFor) {
  const std::string missing = ::testing::TempDir() + "vmgate-no-such-kubeconfig";
  ::setenv("KUBECONFIG", missing.c_str(), 1);
  const std::string vm = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/check/vm.yaml";
  const Ran ran = plugin({"check", "-f", vm});
  EXPECT_EQ(ran.status, 2);
  EXPECT_TRUE(ran.out.empty());
  EXPECT_NE(ran.err.find("KUBECONFIG=" + missing + " does not exist"), std::string::npos) << ran.err;

  // --objects needs no kubeconfig, as a plain `vmgate check`.
  const std::string cluster = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/check/cluster";
  const Ran offline = plugin({"check", "-f", vm, "--objects", cluster});
  EXPECT_NE(offline.status, 2) << offline.err;
  EXPECT_FALSE(offline.out.empty());
}

}  // namespace
}  // namespace vmgate::cli
