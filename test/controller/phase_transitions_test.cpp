// A VMI's phase transition list.
#include "vmgate/controller/phase_transitions.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"

namespace vmgate::controller {
namespace {

using testing::parse;

TEST(PhaseTransitions, AppendsToTheListAsRead) {
  const json::Document vmi = parse(
      R"({"status":{"phase":"Pending","phaseTransitionTimestamps":[{"phase":"Pending","phaseTransitionTimestamp":"A"}]}})");
  json::Document out(rapidjson::kObjectType);
  const json::Value list = phase_transitions_with(vmi, "Scheduling", "B", out.GetAllocator());
  EXPECT_EQ(
      json::to_string(list),
      R"([{"phase":"Pending","phaseTransitionTimestamp":"A"},{"phase":"Scheduling","phaseTransitionTimestamp":"B"}])");
  const json::Value fresh =
      phase_transitions_with(parse(R"({"status":{"phaseTransitionTimestamps":7}})"), "Failed", "C", out.GetAllocator());
  EXPECT_EQ(json::to_string(fresh), R"([{"phase":"Failed","phaseTransitionTimestamp":"C"}])");
}

TEST(PhaseTransitions, AStoredListDoesNotGrowWithoutBound) {
  std::string entries;
  for (int i = 0; i < 100; ++i) {
    entries += (i == 0 ? "" : ",") + std::string(R"({"phase":"P)") + std::to_string(i) + R"("})";
  }
  const json::Document vmi = parse(R"({"status":{"phaseTransitionTimestamps":[)" + entries + "]}}");
  json::Document out(rapidjson::kObjectType);
  const json::Value list = phase_transitions_with(vmi, "Running", "T", out.GetAllocator());
  ASSERT_EQ(list.Size(), 65U);
  EXPECT_EQ(json::find_string(list[0], "phase"), "P36");
  EXPECT_EQ(json::find_string(list[64], "phase"), "Running");
}

TEST(PhaseTransitions, MissingWhenThePhaseIsNotTheLastEntry) {
  EXPECT_FALSE(phase_transition_missing(parse(R"({})")));
  EXPECT_FALSE(phase_transition_missing(parse(R"({"status":{}})")));
  EXPECT_TRUE(phase_transition_missing(parse(R"({"status":{"phase":"Running"}})")));
  EXPECT_TRUE(phase_transition_missing(
      parse(R"({"status":{"phase":"Running","phaseTransitionTimestamps":[{"phase":"Scheduling"}]}})")));
  EXPECT_FALSE(phase_transition_missing(parse(
      R"({"status":{"phase":"Running","phaseTransitionTimestamps":[{"phase":"Scheduling"},{"phase":"Running"}]}})")));
}

}  // namespace
}  // namespace vmgate::controller
