// Tests of the request time transports give the admission pipeline.
#include "vmgate/server/request_time.hpp"

#include <gtest/gtest.h>

namespace vmgate::webhook {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

TEST(RequestTime, Metav1TimeIsRfc3339UtcSeconds) {
  EXPECT_EQ(metav1_time(system_clock::time_point(seconds(0))), "1970-01-01T00:00:00Z");
  EXPECT_EQ(metav1_time(system_clock::time_point(seconds(1700000000)) + std::chrono::milliseconds(999)),
            "2023-11-14T22:13:20Z");
}

TEST(RequestTime, SourceDateEpochIsADecimalCountOfSeconds) {
  EXPECT_EQ(source_date_epoch("1700000000"), system_clock::time_point(seconds(1700000000)));
  EXPECT_EQ(source_date_epoch("0"), system_clock::time_point(seconds(0)));
  for (std::string_view bad : {"", "-1", "1.5", "17e8", " 1", "1 ", "yesterday", "99999999999999999999999"}) {
    EXPECT_FALSE(source_date_epoch(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace vmgate::webhook
