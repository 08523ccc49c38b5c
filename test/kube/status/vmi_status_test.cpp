// The VMI status patch for each supervisor phase, shared by the launcher's api link and
// vmgate-node (the API side runs in test/e2e/controller_test.sh and test/e2e/node_status_test.sh).
#include "vmgate/kube/vmi_status.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"

namespace vmgate::kube {
namespace {

using testing::text;

TEST(VmiStatusPatch, RunningIsReady) {
  const json::Document patch = vmi_status_patch("u-1", "Running", "domain running", false, false, "T");
  EXPECT_TRUE(testing::json_equals(patch, R"({
    "metadata":{"uid":"u-1","annotations":{"vmgate.kubevirt.io/domain-state":"running"}},
    "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","message":"domain running",
                                                "lastTransitionTime":"T","lastProbeTime":null}]}})"));
}

TEST(VmiStatusPatch, EachPhaseAndState) {
  struct Case {
    const char* phase;
    bool stopping;
    const char* state;
    const char* ready;
    const char* reason;
  };
  for (const Case& c : {Case{"Scheduled", false, "starting", "False", "DomainStarting"},
                        Case{"Running", true, "shutting-down", "False", "DomainStopping"},
                        Case{"Succeeded", true, "shutoff", "False", "DomainStopped"},
                        Case{"Failed", false, "failed", "False", "DomainStopped"}}) {
    const json::Document patch = vmi_status_patch("u", c.phase, "why", c.stopping, false, "T");
    EXPECT_EQ(text(patch, "/status/phase"), c.phase);
    EXPECT_EQ(text(patch, "/metadata/annotations/vmgate.kubevirt.io~1domain-state"), c.state) << c.phase;
    EXPECT_EQ(text(patch, "/status/conditions/0/status"), c.ready) << c.phase;
    EXPECT_EQ(text(patch, "/status/conditions/0/reason"), c.reason) << c.phase;
  }
  EXPECT_EQ(text(vmi_status_patch("u", "Failed", "guest crashed", false, false, "T"), "/status/reason"),
            "guest crashed");
  EXPECT_EQ(text(vmi_status_patch("u", "Succeeded", "guest powered off", false, false, "T"), "/status/reason"),
            "<absent>");
}

TEST(VmiStatusPatch, AStartPausedDomainIsPausedAndNotReady) {
  const json::Document patch =
      vmi_status_patch("u", "Running", "domain started paused (startStrategy Paused)", false, true, "T");
  EXPECT_EQ(text(patch, "/metadata/annotations/vmgate.kubevirt.io~1domain-state"), "paused");
  EXPECT_EQ(text(patch, "/status/conditions/0/status"), "False");
  EXPECT_EQ(text(patch, "/status/conditions/0/reason"), "DomainPaused");
  EXPECT_EQ(text(patch, "/status/conditions/1/type"), "Paused");
  EXPECT_EQ(text(patch, "/status/conditions/1/status"), "True");
  EXPECT_EQ(text(patch, "/status/conditions/1/reason"), "PausedByUser");
  EXPECT_EQ(text(patch, "/status/conditions/1/message"), "VMI was paused by user");
  // Stopping a paused domain: no longer reported as paused.
  EXPECT_EQ(
      text(vmi_status_patch("u", "Running", "stop requested: ACPI shutdown", true, true, "T"), "/status/conditions/1"),
      "<absent>");
}

// virtctl pause, then unpause: Paused while paused, gone from the (replaced) conditions after.
TEST(VmiStatusPatch, PausedByUserThenUnpaused) {
  const json::Document paused = vmi_status_patch("u", "Running", "domain paused by user", false, true, "T");
  EXPECT_TRUE(testing::json_equals(paused, R"({
    "metadata":{"uid":"u","annotations":{"vmgate.kubevirt.io/domain-state":"paused"}},
    "status":{"phase":"Running","conditions":[
      {"type":"Ready","status":"False","reason":"DomainPaused","message":"domain paused by user",
       "lastTransitionTime":"T","lastProbeTime":null},
      {"type":"Paused","status":"True","reason":"PausedByUser","message":"VMI was paused by user",
       "lastTransitionTime":"T","lastProbeTime":null}]}})"));
  const json::Document unpaused = vmi_status_patch("u", "Running", "domain running", false, false, "T");
  EXPECT_EQ(text(unpaused, "/status/conditions/0/status"), "True");
  EXPECT_EQ(text(unpaused, "/status/conditions/1"), "<absent>");
}

}  // namespace
}  // namespace vmgate::kube
