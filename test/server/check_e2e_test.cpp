// End-to-end: runs the built `vmgate` binary (VMGATE_BINARY) on the fixtures in
// test/fixtures/check/, the way CI and the acceptance runner call it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "server/check_test_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/common/json_decode.hpp"

namespace vmgate::cli {
namespace {

using vmgate::testing::ProcessResult;
using vmgate::testing::run_process;
using vmgate::testing::TempDir;

const std::string binary = VMGATE_BINARY;
const std::string fixtures = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/check/";

ProcessResult vmgate(const std::vector<std::string>& args, const std::string& input = "") {
  return run_process(binary, args, input);
}

json::Document parse_report(const ProcessResult& run) {
  auto report = json::parse_json(run.out);
  if (!report) {
    ADD_FAILURE() << "stdout is not JSON: " << report.error().message << "\n" << run.out.substr(0, 500);
    json::Document empty;
    empty.SetObject();
    return empty;
  }
  return std::move(report.value());
}

TEST(CheckBinary, AdmittedVmJsonShape) {
  const ProcessResult run =
      vmgate({"check", "-f", fixtures + "vm.yaml", "--objects", fixtures + "cluster", "-o", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.back(), '\n');
  const json::Document report = parse_report(run);
  ASSERT_TRUE(report.IsObject());
  ASSERT_EQ(report.MemberCount(), 1U);
  const json::Value* results = json::find_array(report, "results");
  ASSERT_NE(results, nullptr);
  ASSERT_EQ(results->Size(), 1U);
  const json::Value& result = (*results)[0];
  std::vector<std::string> members;
  for (auto it = result.MemberBegin(); it != result.MemberEnd(); ++it) {
    members.emplace_back(json::as_view(it->name));
  }
  EXPECT_EQ(members, (std::vector<std::string>{"source", "kind", "namespace", "name", "allowed", "code", "reason",
                                               "message", "causes", "warnings", "patch", "admitted", "expanded"}));
  EXPECT_EQ(json::find_string(result, "source"), fixtures + "vm.yaml#0");
  EXPECT_EQ(json::find_string(result, "kind"), "VirtualMachine");
  EXPECT_EQ(json::find_string(result, "namespace"), "default");
  EXPECT_EQ(json::find_string(result, "name"), "vm1");
  EXPECT_TRUE(result["allowed"].GetBool());
  EXPECT_EQ(result["code"].GetInt(), 200);
  EXPECT_TRUE(result["causes"].IsArray());
  EXPECT_TRUE(result["warnings"].IsArray());
  ASSERT_TRUE(result["patch"].IsArray());
  EXPECT_GT(result["patch"].Size(), 0U);
  ASSERT_TRUE(result["admitted"].IsObject());
  EXPECT_EQ(json::find_string(result["admitted"], "kind"), "VirtualMachine");
  // The VMI that would be launched: instancetype u1.medium (4 vCPUs, 4Gi) and the preference's
  // virtio disk bus applied.
  const json::Value& expanded = result["expanded"];
  ASSERT_TRUE(expanded.IsObject());
  EXPECT_EQ(json::find_string(expanded, "kind"), "VirtualMachineInstance");
  const json::Value* bus = json::find_path(expanded, {"spec", "domain", "devices"});
  ASSERT_NE(bus, nullptr);
  EXPECT_EQ(json::find_string((*bus)["disks"][0]["disk"], "bus"), "virtio");
  const json::Value* memory = json::find_path(expanded, {"spec", "domain", "memory"});
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(json::find_string(*memory, "guest"), "4Gi");
}

TEST(CheckBinary, DeniedObjectsExitOne) {
  const ProcessResult run = vmgate({"check", "-f", fixtures + "vm-conflict.yaml", "-f", fixtures + "vmi.yaml", "-f",
                                    fixtures + "vmi-no-memory.json", "--objects", fixtures + "cluster", "-o", "json"});
  ASSERT_EQ(run.status, 1) << run.err;
  const json::Document report = parse_report(run);
  const json::Value& results = report["results"];
  ASSERT_EQ(results.Size(), 3U);
  const json::Value& conflict = results[0];
  EXPECT_FALSE(conflict["allowed"].GetBool());
  EXPECT_EQ(conflict["code"].GetInt(), 422);
  EXPECT_EQ(json::find_string(conflict, "reason"), "Invalid");
  EXPECT_EQ(json::find_string(conflict, "namespace"), "team-a");
  ASSERT_EQ(conflict["causes"].Size(), 2U);
  EXPECT_EQ(json::find_string(conflict["causes"][0], "type"), "FieldValueInvalid");
  EXPECT_EQ(json::find_string(conflict["causes"][0], "field"), "spec.template.spec.domain.cpu.sockets");
  EXPECT_TRUE(conflict["expanded"].IsNull());
  EXPECT_TRUE(results[1]["allowed"].GetBool());
  EXPECT_EQ(json::find_string(results[1], "source"), fixtures + "vmi.yaml#1");
  EXPECT_TRUE(results[1]["expanded"].IsNull());  // a VMI expands to nothing
  EXPECT_FALSE(results[2]["allowed"].GetBool());
  EXPECT_NE(json::find_string(results[2], "message").find("no memory requested"), std::string::npos);
  EXPECT_NE(run.err.find("skipping kind ConfigMap"), std::string::npos) << run.err;
}

TEST(CheckBinary, OutputIsByteIdenticalAcrossRuns) {
  // A VMI CREATE records the time of the request; SOURCE_DATE_EPOCH fixes it.
  const std::vector<std::string> fixed_time{"SOURCE_DATE_EPOCH=1700000000"};
  for (const char* format : {"json", "yaml", "text"}) {
    const std::vector<std::string> good{"check",
                                        "-f",
                                        fixtures + "vm.yaml",
                                        "-f",
                                        fixtures + "vmi.yaml",
                                        "-f",
                                        fixtures + "vm-conflict.yaml",
                                        "--objects",
                                        fixtures + "cluster",
                                        "-o",
                                        format};
    const ProcessResult first = run_process(binary, good, "", fixed_time);
    const ProcessResult second = run_process(binary, good, "", fixed_time);
    EXPECT_EQ(first.status, 1) << format << ": " << first.err;
    EXPECT_EQ(first.out, second.out) << format;
    EXPECT_EQ(first.err, second.err) << format;
    EXPECT_FALSE(first.out.empty()) << format;
  }
}

TEST(CheckBinary, VmiCreateRecordsThePendingTransitionTime) {
  const std::vector<std::string> args{"check", "-f", fixtures + "vmi.yaml", "-o", "json"};
  const ProcessResult fixed = run_process(binary, args, "", {"SOURCE_DATE_EPOCH=1700000000"});
  ASSERT_EQ(fixed.status, 0) << fixed.err;
  const json::Document report = parse_report(fixed);
  const json::Value* transitions =
      json::find_path(report["results"][0], {"admitted", "status", "phaseTransitionTimestamps"});
  ASSERT_NE(transitions, nullptr) << fixed.out;
  EXPECT_EQ(json::to_string(*transitions),
            R"([{"phase":"Pending","phaseTransitionTimestamp":"2023-11-14T22:13:20Z"}])");
  const ProcessResult clock = vmgate(args);
  ASSERT_EQ(clock.status, 0) << clock.err;
  const json::Document clocked = parse_report(clock);
  const json::Value* stamp =
      json::find_path(clocked["results"][0], {"admitted", "status", "phaseTransitionTimestamps"});
  ASSERT_TRUE(stamp != nullptr && stamp->IsArray() && stamp->Size() == 1) << clock.out;
  EXPECT_EQ(json::find_string((*stamp)[0], "phaseTransitionTimestamp").size(), 20U) << clock.out;
  const ProcessResult bad = run_process(binary, args, "", {"SOURCE_DATE_EPOCH=yesterday"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("SOURCE_DATE_EPOCH must be a count of seconds since 1970, not 'yesterday'"), std::string::npos)
      << bad.err;
}

// The KubeVirt CR among --objects names the release (and the warning says so); --kubevirt-version
// pins one. PanicDevices is a gate off by default at v1.8 and GA at main.
TEST(CheckBinary, TheKubeVirtCrOrTheFlagNamesTheRelease) {
  TempDir dir;
  const std::string objects = dir.write("cluster/kubevirt.yaml", R"(apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: kubevirt}
status: {observedKubeVirtVersion: v1.8.2}
)");
  const std::string vmi = dir.write("vmi.yaml", R"(apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: vmi, namespace: default}
spec:
  domain:
    devices: {panicDevices: [{model: isa}]}
    resources: {requests: {memory: 128Mi}}
)");
  const ProcessResult from_cr = vmgate({"check", "-f", vmi, "--objects", objects, "-o", "json"});
  ASSERT_EQ(from_cr.status, 1) << from_cr.err << from_cr.out;
  const json::Document denied = parse_report(from_cr);
  const json::Value* warnings = json::find(denied["results"][0], "warnings");
  ASSERT_TRUE(warnings != nullptr && warnings->IsArray() && warnings->Size() == 1) << from_cr.out;
  EXPECT_EQ(json::as_view((*warnings)[0]),
            "judged as KubeVirt v1.8, the release the KubeVirt CR reports (status.observedKubeVirtVersion v1.8.2); "
            "--kubevirt-version pins one");

  const ProcessResult pinned =
      vmgate({"check", "-f", vmi, "--objects", objects, "--kubevirt-version", "main", "-o", "json"});
  ASSERT_EQ(pinned.status, 0) << pinned.err << pinned.out;
  const json::Document admitted = parse_report(pinned);
  const json::Value* none = json::find(admitted["results"][0], "warnings");
  EXPECT_TRUE(none == nullptr || (none->IsArray() && none->Empty())) << pinned.out;

  const ProcessResult unsupported = vmgate({"check", "-f", vmi, "--kubevirt-version", "v1.6.0"});
  EXPECT_EQ(unsupported.status, 2);
  EXPECT_NE(unsupported.err.find("KubeVirt version \"v1.6.0\" is not supported (supported: v1.7, v1.8, main)"),
            std::string::npos)
      << unsupported.err;
}

TEST(CheckBinary, UnusableInputExitsTwoWithEmptyStdout) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"check", "-f", fixtures + "broken.yaml", "-o", "json"},
                                             {"check", "-f", fixtures + "only-configmap.yaml", "-o", "json"},
                                             {"check", "-f", fixtures + "vm.yaml", "--kubeconfig", "/dev/null"},
                                             {"check", "-f", fixtures + "vm.yaml", "--operation", "UPDATE"},
                                             {"serve", "--tls-cert", "/nonexistent.crt"},  // no --tls-key
                                             {}}) {
    const ProcessResult run = vmgate(args);
    EXPECT_EQ(run.status, 2) << (args.empty() ? "" : args.back()) << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_FALSE(run.err.empty());
  }
}

// As `kubectl apply -f DIR` applies every file it can read: the fixtures directory holds
// broken.yaml and duplicate-key.yaml beside usable manifests.
TEST(CheckBinary, AnUnusableFileInADirectoryDoesNotStopTheOthers) {
  const ProcessResult run = vmgate({"check", "-f", fixtures, "--objects", fixtures + "cluster", "-o", "json"});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_NE(run.err.find("error: " + fixtures + "broken.yaml:6:5: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("error: " + fixtures + "duplicate-key.yaml:5:3: duplicate key \"name\""), std::string::npos)
      << run.err;
  const json::Document report = parse_report(run);
  const json::Value* results = json::find_array(report, "results");
  ASSERT_NE(results, nullptr) << run.out.substr(0, 500);
  std::vector<std::string> sources;
  for (const json::Value& result : results->GetArray()) {
    sources.emplace_back(json::find_string(result, "source"));
  }
  for (const std::string wanted : {"vm.yaml#0", "vm-conflict.yaml#0", "vmi.yaml#1", "vmi-no-memory.json#0"}) {
    EXPECT_NE(std::find(sources.begin(), sources.end(), fixtures + wanted), sources.end()) << wanted;
  }

  const ProcessResult text = vmgate({"check", "-f", fixtures, "--objects", fixtures + "cluster"});
  EXPECT_EQ(text.status, 2) << text.err;
  EXPECT_NE(text.out.find("virtualmachineinstance.kubevirt.io/vmi1 [default, " + fixtures + "vmi.yaml#1] admitted"),
            std::string::npos)
      << text.out;
}

TEST(CheckBinary, SyntaxErrorNamesFileLineAndColumn) {
  const ProcessResult run = vmgate({"check", "-f", fixtures + "broken.yaml"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "error: " + fixtures + "broken.yaml:6:5: end of sequence flow not found\n");
}

TEST(CheckBinary, MalformedClusterObjectIsRefusedNamingFileAndField) {
  const ProcessResult run =
      vmgate({"check", "-f", fixtures + "vm.yaml", "--objects", fixtures + "bad-cluster", "-o", "json"});
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_EQ(run.err, "error: " + fixtures +
                         "bad-cluster/instancetype.yaml#0: invalid VirtualMachineClusterInstancetype: "
                         "spec.memory.guest '1.5.5Gi': quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n");
}

TEST(CheckBinary, StdinAndYamlOutput) {
  const ProcessResult run = vmgate({"check", "-f", "-", "-o", "yaml"}, testing::read_file(fixtures + "vmi.yaml"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind("results:\n  - source: -#1\n    kind: VirtualMachineInstance\n", 0), 0U) << run.out;
}

TEST(CheckBinary, TextIsUncolouredWhenNotATerminal) {
  const ProcessResult run = vmgate({"check", "-f", fixtures + "vmi.yaml"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.find('\033'), std::string::npos);
  EXPECT_EQ(
      run.out.rfind("virtualmachineinstance.kubevirt.io/vmi1 [default, " + fixtures + "vmi.yaml#1] admitted (", 0), 0U)
      << run.out;
}

TEST(CheckBinary, VersionAndHelp) {
  const ProcessResult version = vmgate({"version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.rfind("vmgate ", 0), 0U);
  const ProcessResult help = vmgate({"check", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("Usage: vmgate check"), std::string::npos);
}

// The acceptance runner's invocation (acceptance-sample/run.py): object.json, objects.json as a
// List, --namespace, --operation, -o json. Checks the verdict of every sample case.
TEST(CheckBinary, AcceptanceSampleCases) {
  const std::filesystem::path cases = std::filesystem::path(VMGATE_SHARED_DIR) / "acceptance-sample" / "cases";
  if (!std::filesystem::is_directory(cases)) {
    GTEST_SKIP() << "no " << cases;
  }
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cases)) {
    if (entry.path().extension() != ".json") {
      continue;
    }
    const json::Document test_case = testing::parse(testing::read_file(entry.path().string()));
    const json::Value& request = test_case["request"];
    TempDir dir;
    json::Document list;
    list.SetObject();
    list.AddMember("apiVersion", "v1", list.GetAllocator());
    list.AddMember("kind", "List", list.GetAllocator());
    list.AddMember("items", json::copy(test_case["objects"], list.GetAllocator()), list.GetAllocator());
    const std::string objects = dir.write("objects.json", json::to_string(list));
    const std::string object = dir.write("object.json", json::to_string(request["object"]));
    std::string ns(json::find_string(request, "namespace"));
    std::vector<std::string> args{"check",
                                  "-f",
                                  object,
                                  "--objects",
                                  objects,
                                  "--namespace",
                                  ns.empty() ? "default" : ns,
                                  "--operation",
                                  std::string(json::find_string(request, "operation")),
                                  "-o",
                                  "json"};
    if (const json::Value* old = json::find(request, "oldObject"); old != nullptr && old->IsObject()) {
      args.insert(args.end(), {"--old", dir.write("old.json", json::to_string(*old))});
    }
    const ProcessResult run = vmgate(args);
    const bool allowed = test_case["expect"]["allowed"].GetBool();
    EXPECT_EQ(run.status, allowed ? 0 : 1) << entry.path().filename() << ": " << run.err;
    if (run.status == 0 || run.status == 1) {
      const json::Document report = parse_report(run);
      EXPECT_EQ(report["results"][0]["allowed"].GetBool(), allowed) << entry.path().filename();
    }
    ++checked;
  }
  EXPECT_GT(checked, 0U);
}

}  // namespace
}  // namespace vmgate::cli
