// Launcher pods, their status files and the VMI status patch (launcher_status.hpp).
#include "vmgate/node/launcher_status.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"
#include "vmgate/common/json_decode.hpp"

namespace vmgate::node {
namespace {

using testing::text;

constexpr std::string_view pod_uid = "0b5e1c9e-3f5a-4d1e-9a51-3c1c2f0d9a10";
constexpr std::string_view vmi_uid = "6d3f0a2b-8c4e-4b7a-9f1d-2e5c7a9b0c11";

json::Document parse(std::string_view text_json) {
  Result<json::Document, json::DecodeError> parsed = json::parse_json(text_json);
  EXPECT_TRUE(parsed.ok());
  return parsed ? std::move(*parsed) : json::Document();
}

std::string pod_json(std::string_view owners, std::string_view node = "node0",
                     std::string_view label = "virt-launcher") {
  return R"({"metadata":{"name":"virt-launcher-guest-abcde","namespace":"team-a","uid":")" + std::string(pod_uid) +
         R"(","labels":{"kubevirt.io":")" + std::string(label) + R"("},"ownerReferences":)" + std::string(owners) +
         R"(},"spec":{"nodeName":")" + std::string(node) + R"("}})";
}

std::string owner(std::string_view name, std::string_view uid, bool controller = true,
                  std::string_view kind = "VirtualMachineInstance", std::string_view api = "kubevirt.io/v1") {
  return R"({"apiVersion":")" + std::string(api) + R"(","kind":")" + std::string(kind) + R"(","name":")" +
         std::string(name) + R"(","uid":")" + std::string(uid) + R"(","controller":)" +
         (controller ? "true" : "false") + "}";
}

TEST(LauncherStatus, TheSupervisorsFile) {
  Result<LauncherStatus> status = parse_launcher_status(
      R"({"phase":"Running","reason":"domain running","timestamps":{"started":"2026-01-01T00:00:00Z","running":"x","updated":"y"}})"
      "\n");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(status->phase, "Running");
  EXPECT_EQ(status->reason, "domain running");
  EXPECT_FALSE(status->paused);
  // Members the format does not have are ignored (a newer launcher may add some).
  EXPECT_TRUE(parse_launcher_status(R"({"phase":"Failed","reason":"","extra":[1,2]})").ok());
}

// virtctl pause: the launcher writes "paused"; a launcher without the field says "started paused".
TEST(LauncherStatus, PausedFromTheFileOrTheStartStrategyReason) {
  EXPECT_TRUE(parse_launcher_status(R"({"phase":"Running","reason":"domain paused by user","paused":true})")->paused);
  EXPECT_FALSE(parse_launcher_status(R"({"phase":"Running","reason":"domain running","paused":false})")->paused);
  EXPECT_TRUE(parse_launcher_status(R"j({"phase":"Running","reason":"domain started paused (startStrategy Paused)"})j")
                  ->paused);
  EXPECT_FALSE(parse_launcher_status(
                   R"j({"phase":"Running","reason":"domain started paused (startStrategy Paused)","paused":false})j")
                   ->paused);
}

TEST(LauncherStatus, HostileInputsAreRefused) {
  struct Case {
    std::string text;
    std::string_view error;
  };
  const std::string huge = R"({"phase":"Running","reason":")" + std::string(70000, 'a') + R"("})";
  const std::string long_reason = R"({"phase":"Running","reason":")" + std::string(5000, 'a') + R"("})";
  for (const Case& c : {
           Case{"", "not JSON"},
           Case{"not json", "not JSON"},
           Case{"[]", "not a JSON object"},
           Case{"\"Running\"", "not a JSON object"},
           Case{R"({"reason":"x"})", "phase: not a string"},
           Case{R"({"phase":1,"reason":"x"})", "phase: not a string"},
           Case{R"({"phase":"Hacked","reason":"x"})", "phase: not one of"},
           Case{R"({"phase":"running","reason":"x"})", "phase: not one of"},
           Case{R"({"phase":"Running"})", "reason: not a string"},
           Case{R"({"phase":"Running","reason":{"a":1}})", "reason: not a string"},
           Case{R"({"phase":"Running","reason":"a\nb"})", "control characters"},
           Case{R"({"phase":"Running","reason":"x","timestamps":"now"})", "timestamps: not an object"},
           Case{R"({"phase":"Running","reason":"x","paused":"yes"})", "paused: not a boolean"},
           Case{R"({"phase":"Running","reason":"x","timestamps":{"a":1}})", "timestamps: a value is not a string"},
           Case{R"({"phase":"Running","reason":"x","timestamps":{"a":{"b":{}}}})", "not JSON"},  // depth
           Case{R"({"phase":"Failed","reason":"x","phase":"Running"})", "duplicate key"},
           Case{"{\"phase\":\"Running\",\"reason\":\"\xff\"}", "not JSON"},
           Case{huge, "larger than 65536 bytes"},
           Case{long_reason, "reason: longer than 4096 bytes"},
       }) {
    Result<LauncherStatus> status = parse_launcher_status(c.text);
    ASSERT_FALSE(status.ok()) << c.text.substr(0, 80);
    EXPECT_NE(status.error().message.find(c.error), std::string::npos)
        << c.text.substr(0, 80) << ": " << status.error().message;
    // The tenant's text is never echoed back into the log.
    EXPECT_EQ(status.error().message.find("Hacked"), std::string::npos);
  }
}

TEST(LauncherPodTest, TheControllerOwnerIsTheVmi) {
  const json::Document pod = parse(pod_json("[" + owner("guest", vmi_uid) + "]"));
  Result<LauncherPod> found = launcher_pod(pod, "node0");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->namespace_name, "team-a");
  EXPECT_EQ(found->uid, pod_uid);
  EXPECT_EQ(found->vmi_name, "guest");
  EXPECT_EQ(found->vmi_uid, vmi_uid);
  EXPECT_FALSE(found->host_network);
  // Another, non-controller reference before it does not matter.
  const json::Document two =
      parse(pod_json("[" + owner("decoy", vmi_uid, false) + "," + owner("guest", vmi_uid) + "]"));
  ASSERT_TRUE(launcher_pod(two, "node0").ok());
  EXPECT_EQ(launcher_pod(two, "node0")->vmi_name, "guest");
}

TEST(LauncherPodTest, WhatIsNotALauncherPodOfThisNode) {
  struct Case {
    std::string pod;
    std::string_view error;
  };
  const std::string good = owner("guest", vmi_uid);
  for (const Case& c : {
           Case{pod_json("[" + good + "]", "node1"), "not on this node"},
           Case{pod_json("[" + good + "]", "node0", "virt-handler"), "not labelled"},
           Case{pod_json("[]"), "no controller owner reference"},
           Case{pod_json("[" + owner("guest", vmi_uid, false) + "]"), "no controller owner reference"},
           Case{pod_json("[" + good + "," + owner("other", vmi_uid) + "]"), "more than one controller"},
           Case{pod_json("[" + owner("guest", vmi_uid, true, "VirtualMachine") + "]"), "not a kubevirt.io"},
           Case{pod_json("[" + owner("guest", vmi_uid, true, "VirtualMachineInstance", "evil.io/v1") + "]"),
                "not a kubevirt.io"},
           Case{pod_json("[" + owner("../../other", vmi_uid) + "]"), "not an object name"},
           Case{pod_json("[" + owner("guest", "not-a-uid") + "]"), "uid is not a UUID"},
       }) {
    const json::Document pod = parse(c.pod);
    Result<LauncherPod> found = launcher_pod(pod, "node0");
    ASSERT_FALSE(found.ok()) << c.pod;
    EXPECT_NE(found.error().message.find(c.error), std::string::npos) << found.error().message;
  }
  // A pod uid that is not a UUID never becomes a path.
  std::string bad_uid = pod_json("[" + good + "]");
  bad_uid.replace(bad_uid.find(pod_uid), pod_uid.size(), "../../../../etc");
  EXPECT_FALSE(launcher_pod(parse(bad_uid), "node0").ok());
}

TEST(LauncherPodTest, HostNetworkIsSeen) {
  std::string text_json = pod_json("[" + owner("guest", vmi_uid) + "]");
  text_json.replace(text_json.find(R"("nodeName")"), 0, R"("hostNetwork":true,)");
  Result<LauncherPod> found = launcher_pod(parse(text_json), "node0");
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->host_network);
}

TEST(LauncherStatusPatch, StatusNodeNameAndTheOwnersUid) {
  const json::Document patch =
      launcher_status_patch(vmi_uid, {"Running", "domain running"}, "node0", "2026-01-01T00:00:00Z");
  EXPECT_TRUE(testing::json_equals(patch, R"({
    "metadata":{"uid":"6d3f0a2b-8c4e-4b7a-9f1d-2e5c7a9b0c11","annotations":{"vmgate.kubevirt.io/domain-state":"running"}},
    "status":{"phase":"Running","nodeName":"node0","conditions":[{"type":"Ready","status":"True",
      "message":"domain running","lastTransitionTime":"2026-01-01T00:00:00Z","lastProbeTime":null}]}})"))
      << json::to_string(patch);
  // Only metadata.uid, the annotation and status: never spec, labels or anything else.
  EXPECT_EQ(patch.MemberCount(), 2U);
  EXPECT_EQ(text(patch, "/metadata/labels"), "<absent>");
  const json::Document stopping =
      launcher_status_patch(vmi_uid, {"Running", "stop requested: ACPI shutdown"}, "node0", "T");
  EXPECT_EQ(text(stopping, "/metadata/annotations/vmgate.kubevirt.io~1domain-state"), "shutting-down");
  EXPECT_EQ(text(stopping, "/status/conditions/0/status"), "False");
}

// KubeVirt's virt-handler: Paused {PausedByUser, "VMI was paused by user"} while paused, and
// gone once unpaused (the conditions array is replaced as a whole by the merge patch).
TEST(LauncherStatusPatch, PausedByUserWhilePaused) {
  const json::Document paused =
      launcher_status_patch(vmi_uid, {"Running", "domain paused by user", true}, "node0", "T");
  EXPECT_EQ(text(paused, "/status/conditions/1/type"), "Paused");
  EXPECT_EQ(text(paused, "/status/conditions/1/status"), "True");
  EXPECT_EQ(text(paused, "/status/conditions/1/reason"), "PausedByUser");
  EXPECT_EQ(text(paused, "/status/conditions/1/message"), "VMI was paused by user");
  EXPECT_EQ(text(paused, "/status/conditions/1/lastTransitionTime"), "T");
  EXPECT_EQ(text(paused, "/status/conditions/0/reason"), "DomainPaused");
  const json::Document unpaused = launcher_status_patch(vmi_uid, {"Running", "domain running", false}, "node0", "T");
  EXPECT_EQ(text(unpaused, "/status/conditions/1"), "<absent>");
  EXPECT_EQ(text(unpaused, "/status/conditions/0/status"), "True");
}

TEST(NeedsReport, OnePatchPerChangeNothingAfterFinal) {
  ReportState state;
  EXPECT_TRUE(needs_report(state, {"Scheduled", "starting"}));
  state.written = LauncherStatus{"Scheduled", "starting"};
  EXPECT_FALSE(needs_report(state, {"Scheduled", "starting"}));
  EXPECT_TRUE(needs_report(state, {"Running", "domain running"}));
  state.written = LauncherStatus{"Running", "x", false};
  EXPECT_TRUE(needs_report(state, {"Running", "x", true}));  // paused alone is a change
  state.written = LauncherStatus{"Failed", "guest crashed"};
  EXPECT_FALSE(needs_report(state, {"Running", "domain running"}));
  EXPECT_FALSE(needs_report(state, {"Succeeded", "x"}));
}

TEST(PrivateDir, UnderTheKubeletsPods) {
  EXPECT_EQ(private_dir("/var/lib/kubelet/", pod_uid),
            "/var/lib/kubelet/pods/" + std::string(pod_uid) + "/volumes/kubernetes.io~empty-dir/private");
}

}  // namespace
}  // namespace vmgate::node
