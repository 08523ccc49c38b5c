// Kubernetes timestamps to seconds and back (utc_time.hpp).
#include "vmgate/kube/utc_time.hpp"

#include <gtest/gtest.h>

namespace vmgate::kube {
namespace {

TEST(UtcTime, ParsesKubernetesTimestamps) {
  EXPECT_EQ(parse_utc_seconds("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_utc_seconds("2026-01-01T00:00:00Z"), 1767225600);
  EXPECT_EQ(parse_utc_seconds("2026-11-27T18:46:37Z"), 1795805197);
  // Leases and events carry microseconds; only the seconds count.
  EXPECT_EQ(parse_utc_seconds("2026-11-27T18:46:37.123456Z"), 1795805197);
  EXPECT_EQ(parse_utc_seconds("2026-11-27T18:46:37+00:00"), 1795805197);
  EXPECT_EQ(parse_utc_seconds("2024-02-29T12:00:00Z"), 1709208000);
}

TEST(UtcTime, RefusesAnythingElse) {
  for (const char* bad : {"", "2026-11-27", "2026-11-27T18:46:37", "2026-11-27T18:46:37+01:00", "2026-13-01T00:00:00Z",
                          "2026-02-30T00:00:00Z", "2026-11-27T24:00:00Z", "2026-11-27T18:46:37.Z",
                          "2026-1a-27T18:46:37Z", "2026-11-27 18:46:37Z", "2026-11-27T18:46:37Zjunk"}) {
    EXPECT_EQ(parse_utc_seconds(bad), std::nullopt) << bad;
  }
}

TEST(UtcTime, FormatsWhatItParses) {
  EXPECT_EQ(format_utc_seconds(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_utc_seconds(1795805197), "2026-11-27T18:46:37Z");
  EXPECT_EQ(format_utc_seconds(1709208000 + 43199), "2024-02-29T23:59:59Z");
  EXPECT_EQ(format_utc_seconds(-1), "1969-12-31T23:59:59Z");
  const std::string now = utc_now();
  ASSERT_TRUE(parse_utc_seconds(now).has_value()) << now;
  EXPECT_EQ(format_utc_seconds(*parse_utc_seconds(now)), now);
}

}  // namespace
}  // namespace vmgate::kube
