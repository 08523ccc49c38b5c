// Leader election decisions: who may write the Lease, and what it then says.
#include "vmgate/controller/controller_lease.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"

namespace vmgate::controller {
namespace {

using std::chrono::milliseconds;
using testing::parse;
using testing::text;

LeaseRecord held_by(std::string holder) {
  Result<LeaseRecord> record = read_lease(parse(R"({"metadata":{"name":"l","resourceVersion":"42"},
    "spec":{"holderIdentity":")" + holder + R"(","leaseDurationSeconds":15,"acquireTime":"2026-01-01T00:00:00.000000Z",
            "renewTime":"2026-01-01T00:00:10.000000Z","leaseTransitions":3}})"));
  EXPECT_TRUE(record.ok());
  return *record;
}

TEST(Lease, ReadsTheRecord) {
  const LeaseRecord record = held_by("a");
  EXPECT_TRUE(record.exists);
  EXPECT_EQ(record.holder, "a");
  EXPECT_EQ(record.duration_seconds, 15);
  EXPECT_EQ(record.transitions, 3);
  EXPECT_EQ(record.resource_version, "42");
  EXPECT_FALSE(read_lease(parse("{}")).ok());
}

TEST(Lease, Decisions) {
  EXPECT_EQ(decide(LeaseRecord{}, "a", milliseconds(0)), LeaseStep::create);
  EXPECT_EQ(decide(held_by("a"), "a", milliseconds(0)), LeaseStep::renew);
  EXPECT_EQ(decide(held_by(""), "a", milliseconds(0)), LeaseStep::take_over);
  EXPECT_EQ(decide(held_by("b"), "a", milliseconds(14999)), LeaseStep::wait);
  EXPECT_EQ(decide(held_by("b"), "a", milliseconds(15000)), LeaseStep::take_over);
}

TEST(Lease, BodiesCarryTheResourceVersionAndCountTransitions) {
  const json::Document renew = lease_body(held_by("a"), LeaseStep::renew, false, "ns", "l", "a", 15, "NOW");
  EXPECT_EQ(text(renew, "/metadata/resourceVersion"), "42");
  EXPECT_EQ(text(renew, "/spec/holderIdentity"), "a");
  EXPECT_EQ(text(renew, "/spec/acquireTime"), "2026-01-01T00:00:00.000000Z");
  EXPECT_EQ(text(renew, "/spec/renewTime"), "NOW");
  EXPECT_EQ(text(renew, "/spec/leaseTransitions"), "3");

  const json::Document take = lease_body(held_by("b"), LeaseStep::take_over, false, "ns", "l", "a", 15, "NOW");
  EXPECT_EQ(text(take, "/spec/holderIdentity"), "a");
  EXPECT_EQ(text(take, "/spec/acquireTime"), "NOW");
  EXPECT_EQ(text(take, "/spec/leaseTransitions"), "4");

  const json::Document created = lease_body(LeaseRecord{}, LeaseStep::create, false, "ns", "l", "a", 15, "NOW");
  EXPECT_EQ(text(created, "/metadata/resourceVersion"), "<absent>");
  EXPECT_EQ(text(created, "/metadata/namespace"), "ns");
  EXPECT_EQ(text(created, "/spec/leaseDurationSeconds"), "15");

  const json::Document released = lease_body(held_by("a"), LeaseStep::renew, true, "ns", "l", "a", 15, "NOW");
  EXPECT_EQ(text(released, "/spec/holderIdentity"), "");
  EXPECT_EQ(text(released, "/spec/leaseDurationSeconds"), "1");
  EXPECT_EQ(decide(*read_lease(released), "b", milliseconds(0)), LeaseStep::take_over);
}

}  // namespace
}  // namespace vmgate::controller
