// The VM's start failure backoff (KubeVirt's vm.go figures).
#include "vmgate/controller/start_failure.hpp"

#include <gtest/gtest.h>

#include <set>

#include "support/json_test_support.hpp"
#include "vmgate/kube/utc_time.hpp"

namespace vmgate::controller {
namespace {

using testing::parse;
using testing::text;

constexpr std::int64_t now = 1767225600;  // 2026-01-01T00:00:00Z

TEST(StartBackoff, TenSecondsTimesFailuresSquaredPlusUpToHalfAtMostFiveMinutes) {
  const std::pair<std::int64_t, std::int64_t> expected[] = {{10, 15}, {40, 60}, {90, 135}, {160, 240}, {250, 300}};
  for (std::int64_t count = 1; count <= 5; ++count) {
    std::set<std::int64_t> seen;
    for (int i = 0; i < 200; ++i) {
      const std::int64_t delay = start_backoff_seconds(count, "uid-" + std::to_string(i));
      EXPECT_GE(delay, expected[count - 1].first) << count;
      EXPECT_LE(delay, expected[count - 1].second) << count;
      seen.insert(delay);
    }
    EXPECT_GT(seen.size(), 3U) << "the jitter spreads VMs, count " << count;
  }
  EXPECT_EQ(start_backoff_seconds(6, "x"), 300);
  EXPECT_EQ(start_backoff_seconds(1000000, "x"), 300);
  EXPECT_EQ(start_backoff_seconds(0, "x"), start_backoff_seconds(1, "x"));
  EXPECT_EQ(start_backoff_seconds(-5, "x"), start_backoff_seconds(1, "x"));
  EXPECT_EQ(start_backoff_seconds(3, "same"), start_backoff_seconds(3, "same"));
}

TEST(StartFailure, EverRanFromTheTransitionsOrThePhase) {
  EXPECT_FALSE(vmi_ever_ran(parse(R"({})")));
  EXPECT_FALSE(vmi_ever_ran(parse(
      R"({"status":{"phase":"Failed","phaseTransitionTimestamps":[{"phase":"Pending"},{"phase":"Scheduling"}]}})")));
  EXPECT_TRUE(vmi_ever_ran(
      parse(R"({"status":{"phase":"Failed","phaseTransitionTimestamps":[{"phase":"Pending"},{"phase":"Running"}]}})")));
  EXPECT_TRUE(vmi_ever_ran(parse(R"({"status":{"phase":"Running"}})")));
  EXPECT_FALSE(vmi_ever_ran(parse(R"({"status":{"phase":"Failed","phaseTransitionTimestamps":"Running"}})")));
}

json::Document vm(std::string_view strategy, std::string_view start_failure = "") {
  return parse(R"({"spec":{"runStrategy":")" + std::string(strategy) + R"("},"status":{)" +
               (start_failure.empty() ? std::string() : R"("startFailure":)" + std::string(start_failure)) + "}}");
}

json::Document vmi(std::string_view uid, std::string_view phase, bool ran = false) {
  return parse(R"({"metadata":{"uid":")" + std::string(uid) + R"("},"status":{"phase":")" + std::string(phase) +
               R"(","phaseTransitionTimestamps":[{"phase":"Pending"})" + (ran ? R"(,{"phase":"Running"})" : "") +
               "]}}");
}

TEST(StartFailure, AnEarlyEndIsCountedOnce) {
  const json::Document failed = vmi("u1", "Failed");
  const json::Document first = next_start_failure(vm("Always"), &failed, "Always", now);
  EXPECT_EQ(text(first, "/consecutiveFailCount"), "1");
  EXPECT_EQ(text(first, "/lastFailedVMIUID"), "u1");
  const std::int64_t delay = *kube::parse_utc_seconds(text(first, "/retryAfterTimestamp")) - now;
  EXPECT_EQ(delay, start_backoff_seconds(1, "u1"));
  // Seen again (the next plans): kept as it is, not counted twice.
  const json::Document again = next_start_failure(vm("Always", json::to_string(first)), &failed, "Always", now + 7);
  EXPECT_EQ(json::to_string(again), json::to_string(first));
  // No VMI (deleted, waiting): kept.
  EXPECT_EQ(json::to_string(next_start_failure(vm("Always", json::to_string(first)), nullptr, "Always", now)),
            json::to_string(first));
  // The next VMI fails too: counted, a longer wait.
  const json::Document succeeded = vmi("u2", "Succeeded");
  const json::Document second =
      next_start_failure(vm("Always", json::to_string(first)), &succeeded, "Always", now + 100);
  EXPECT_EQ(text(second, "/consecutiveFailCount"), "2");
  EXPECT_EQ(text(second, "/lastFailedVMIUID"), "u2");
}

TEST(StartFailure, ClearedByARunOrAStrategyThatDoesNotRestart) {
  const std::string recorded = R"({"lastFailedVMIUID":"u1","consecutiveFailCount":3,
                                   "retryAfterTimestamp":"2026-01-01T00:02:00Z"})";
  const json::Document ran = vmi("u2", "Failed", true);
  EXPECT_TRUE(next_start_failure(vm("Always", recorded), &ran, "Always", now).IsNull());
  const json::Document running = vmi("u2", "Running");
  EXPECT_TRUE(next_start_failure(vm("Always", recorded), &running, "Always", now).IsNull());
  const json::Document failed = vmi("u2", "Failed");
  for (const char* strategy : {"Halted", "Manual"}) {
    EXPECT_TRUE(next_start_failure(vm(strategy, recorded), &failed, strategy, now).IsNull()) << strategy;
  }
  // A VMI still starting changes nothing.
  const json::Document scheduling = vmi("u2", "Scheduling");
  EXPECT_EQ(text(next_start_failure(vm("Always", recorded), &scheduling, "Always", now), "/consecutiveFailCount"), "3");
  // An unreadable count starts again at 1 instead of trusting it.
  EXPECT_EQ(text(next_start_failure(vm("Always", R"({"consecutiveFailCount":"many"})"), &failed, "Always", now),
                 "/consecutiveFailCount"),
            "1");
}

TEST(StartFailure, TimeLeft) {
  EXPECT_EQ(start_backoff_left(parse(R"({"retryAfterTimestamp":"2026-01-01T00:00:42Z"})"), now), 42);
  EXPECT_EQ(start_backoff_left(parse(R"({"retryAfterTimestamp":"2025-12-31T23:59:00Z"})"), now), 0);
  EXPECT_EQ(start_backoff_left(parse(R"({"retryAfterTimestamp":"soon"})"), now), 0);
  EXPECT_EQ(start_backoff_left(parse(R"(null)"), now), 0);
  // A retry time years away waits no longer than the longest backoff.
  EXPECT_EQ(start_backoff_left(parse(R"({"retryAfterTimestamp":"2099-01-01T00:00:00Z"})"), now),
            max_start_backoff_seconds);
}

}  // namespace
}  // namespace vmgate::controller
