#include "vmgate/kube/go_duration.hpp"

#include <gtest/gtest.h>

namespace vmgate::kube {
namespace {

using std::chrono::nanoseconds;

std::int64_t ns(std::string_view text) {
  Result<nanoseconds> parsed = parse_go_duration(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? parsed->count() : -1;
}

TEST(GoDuration, GoTestVectors) {
  // From Go's time/time_test.go parseDurationTests.
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("5s"), 5'000'000'000);
  EXPECT_EQ(ns("30s"), 30'000'000'000);
  EXPECT_EQ(ns("1478s"), 1'478'000'000'000);
  EXPECT_EQ(ns("5.0s"), 5'000'000'000);
  EXPECT_EQ(ns("5.6s"), 5'600'000'000);
  EXPECT_EQ(ns("5.s"), 5'000'000'000);
  EXPECT_EQ(ns(".5s"), 500'000'000);
  EXPECT_EQ(ns("1.004s"), 1'004'000'000);
  EXPECT_EQ(ns("100.00100s"), 100'001'000'000);
  EXPECT_EQ(ns("10ns"), 10);
  EXPECT_EQ(ns("11us"), 11'000);
  EXPECT_EQ(ns("12\xC2\xB5s"), 12'000);
  EXPECT_EQ(ns("12\xCE\xBCs"), 12'000);
  EXPECT_EQ(ns("13ms"), 13'000'000);
  EXPECT_EQ(ns("14s"), 14'000'000'000);
  EXPECT_EQ(ns("15m"), 900'000'000'000);
  EXPECT_EQ(ns("16h"), 57'600'000'000'000);
  EXPECT_EQ(ns("3h30m"), 12'600'000'000'000);
  EXPECT_EQ(ns("10.5s4m"), 250'500'000'000);
  EXPECT_EQ(ns("1h2m3s4ms5us6ns"), 3'723'004'005'006);
  EXPECT_EQ(ns("52763797000ns"), 52'763'797'000);
  EXPECT_EQ(ns("0.3333333333333333333h"), 1'200'000'000'000);
  EXPECT_EQ(ns("9223372036854775807ns"), 9'223'372'036'854'775'807);
}

TEST(GoDuration, RefusedLikeGo) {
  for (std::string_view bad : {"", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85", "-5s", "+5s",
                               "9223372036854775808ns", "9223372036854775.808us", "3000000h"}) {
    EXPECT_FALSE(parse_go_duration(bad).ok()) << bad;
  }
  EXPECT_EQ(parse_go_duration("10").error().message,
            "missing or unknown unit in duration \"10\" (valid units: ns, us, ms, s, m, h)");
}

}  // namespace
}  // namespace vmgate::kube
