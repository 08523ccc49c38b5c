#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/json_test_support.hpp"
#include "vmgate/server/check_command.hpp"

namespace vmgate::cli {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

CheckResult admitted_vm() {
  CheckResult r;
  r.source = "vm.yaml#0";
  r.resource = admission::Resource::virtual_machine;
  r.kind = "VirtualMachine";
  r.namespace_name = "default";
  r.name = "vm1";
  r.outcome.verdict.warnings = {"preference \"p\" not found"};
  r.outcome.patch = parse(R"([{"op":"add","path":"/spec/a","value":"true"},{"op":"add","path":"/spec/b","value":1}])");
  r.outcome.admitted = parse(R"({"kind":"VirtualMachine","z":1,"a":2})");
  r.outcome.expanded = parse(R"({"kind":"VirtualMachineInstance"})");
  return r;
}

CheckResult denied_vmi() {
  CheckResult r;
  r.source = "-#3";
  r.resource = admission::Resource::virtual_machine_instance;
  r.kind = "VirtualMachineInstance";
  r.namespace_name = "team-a";
  r.name = "x";
  r.outcome.verdict = admission::Verdict::invalid(
      {{admission::CauseType::field_value_invalid, "spec.domain.cpu.sockets", "must be positive"},
       {admission::CauseType::field_value_required, "", "no memory requested"}});
  r.outcome.patch = parse("[]");
  r.outcome.admitted.SetNull();
  r.outcome.expanded.SetNull();
  return r;
}

TEST(ReportDocument, MembersInContractOrder) {
  std::vector<CheckResult> results;
  results.push_back(admitted_vm());
  results.push_back(denied_vmi());
  const json::Document report = report_document(results);
  EXPECT_EQ(dump(report["results"][0]),
            R"({"source":"vm.yaml#0","kind":"VirtualMachine","namespace":"default","name":"vm1","allowed":true,)"
            R"("code":200,"reason":"","message":"","causes":[],"warnings":["preference \"p\" not found"],)"
            R"("patch":[{"op":"add","path":"/spec/a","value":"true"},{"op":"add","path":"/spec/b","value":1}],)"
            R"("admitted":{"kind":"VirtualMachine","z":1,"a":2},"expanded":{"kind":"VirtualMachineInstance"}})");
  const json::Value& denied = report["results"][1];
  EXPECT_FALSE(denied["allowed"].GetBool());
  EXPECT_EQ(denied["code"].GetInt(), 422);
  EXPECT_EQ(json::find_string(denied, "reason"), "Invalid");
  EXPECT_EQ(dump(denied["causes"]),
            R"([{"type":"FieldValueInvalid","field":"spec.domain.cpu.sockets","message":"must be positive"},)"
            R"({"type":"FieldValueRequired","field":"","message":"no memory requested"}])");
  EXPECT_TRUE(denied["admitted"].IsNull());
  EXPECT_TRUE(denied["expanded"].IsNull());
}

TEST(ReportDocument, EmptyResults) {
  EXPECT_EQ(dump(report_document({})), R"({"results":[]})");
}

TEST(RenderJson, PrettyTwoSpacesAndTrailingNewline) {
  const std::string text = render_json(parse(R"({"results":[{"a":[],"b":{"c":"d"}}]})"));
  EXPECT_EQ(
      text,
      "{\n  \"results\": [\n    {\n      \"a\": [],\n      \"b\": {\n        \"c\": \"d\"\n      }\n    }\n  ]\n}\n");
}

TEST(RenderYaml, QuotesAndOrder) {
  std::vector<CheckResult> results;
  results.push_back(admitted_vm());
  Result<std::string> yaml = render_yaml(report_document(results));
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(yaml->rfind("results:\n  - source: vm.yaml#0\n    kind: VirtualMachine\n", 0), 0U) << *yaml;
  EXPECT_NE(yaml->find("value: \"true\""), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("reason: \"\""), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("causes: []"), std::string::npos) << *yaml;
}

TEST(RenderText, OneLinePerObjectThenCausesAndWarnings) {
  std::vector<CheckResult> results;
  results.push_back(admitted_vm());
  results.push_back(denied_vmi());
  EXPECT_EQ(render_text(results, false),
            "virtualmachine.kubevirt.io/vm1 [default, vm.yaml#0] admitted (2 changes)\n"
            "  warning: preference \"p\" not found\n"
            "virtualmachineinstance.kubevirt.io/x [team-a, -#3] denied:\n"
            "  - spec.domain.cpu.sockets: must be positive\n"
            "  - no memory requested\n");
}

TEST(RenderText, Colour) {
  std::vector<CheckResult> results;
  results.push_back(admitted_vm());
  results.push_back(denied_vmi());
  const std::string text = render_text(results, true);
  EXPECT_NE(text.find("] \033[32madmitted\033[0m (2 changes)"), std::string::npos) << text;
  EXPECT_NE(text.find("  \033[33mwarning\033[0m: preference"), std::string::npos) << text;
  EXPECT_NE(text.find("] \033[31mdenied\033[0m:"), std::string::npos) << text;
}

TEST(RenderText, ChangeCountsAndBadRequests) {
  CheckResult none = admitted_vm();
  none.outcome.patch = parse("[]");
  none.outcome.verdict.warnings.clear();
  CheckResult one = admitted_vm();
  one.outcome.patch = parse(R"([{"op":"remove","path":"/a"}])");
  one.outcome.verdict.warnings.clear();
  CheckResult lookup = denied_vmi();
  lookup.outcome.verdict = admission::Verdict::bad_request("could not find instancetype u1.huge");
  EXPECT_EQ(render_text({}, false), "");
  std::vector<CheckResult> results;
  results.push_back(std::move(none));
  results.push_back(std::move(one));
  results.push_back(std::move(lookup));
  EXPECT_EQ(render_text(results, false),
            "virtualmachine.kubevirt.io/vm1 [default, vm.yaml#0] admitted (no changes)\n"
            "virtualmachine.kubevirt.io/vm1 [default, vm.yaml#0] admitted (1 change)\n"
            "virtualmachineinstance.kubevirt.io/x [team-a, -#3] denied: could not find instancetype u1.huge\n");
}

TEST(RenderText, MoreThanTenCauses) {
  admission::ErrorList causes;
  for (int i = 0; i < 12; ++i) {
    causes.push_back({admission::CauseType::field_value_invalid, "f" + std::to_string(i), "bad"});
  }
  CheckResult r = denied_vmi();
  r.outcome.verdict = admission::Verdict::invalid(causes);
  std::vector<CheckResult> results;
  results.push_back(std::move(r));
  const std::string text = render_text(results, false);
  EXPECT_NE(text.find("  - f9: bad\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  - f10: bad\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  - 2 more validation errors\n"), std::string::npos) << text;
}

TEST(ExitStatus, OneWhenAnyDenied) {
  std::vector<CheckResult> results;
  results.push_back(admitted_vm());
  EXPECT_EQ(exit_status(results), 0);
  results.push_back(denied_vmi());
  EXPECT_EQ(exit_status(results), 1);
}

}  // namespace
}  // namespace vmgate::cli
