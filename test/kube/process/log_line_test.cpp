#include "vmgate/kube/log_line.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace vmgate::kube {
namespace {

const std::chrono::system_clock::time_point at{std::chrono::microseconds{1'795'000'000'123'456}};

TEST(LogLine, EveryKindOfValue) {
  LogLine line(at, "info", "admission");
  line.text("uid", "u-\"1\"")
      .flag("dry_run", false)
      .integer("code", 200)
      .milliseconds("latency_ms", std::chrono::microseconds{41});
  EXPECT_EQ(line.finish(),
            R"({"ts":1795000000.123456,"level":"info","msg":"admission","uid":"u-\"1\"","dry_run":false,"code":200,)"
            R"("latency_ms":0.041})"
            "\n");
}

TEST(LogLine, TimesAreExactDecimalsWithTheirTrailingZerosDropped) {
  // As RapidJSON's Writer::Double wrote them (the shortest text of the double), but exact.
  const auto line_at = [](std::chrono::system_clock::time_point when, std::chrono::nanoseconds latency) {
    LogLine line(when, "info", "m");
    line.milliseconds("latency_ms", latency);
    return line.finish();
  };
  using std::chrono::microseconds;
  using std::chrono::nanoseconds;
  const std::chrono::system_clock::time_point whole_second{microseconds{1'795'000'000'000'000}};
  EXPECT_EQ(line_at(whole_second, nanoseconds{0}), R"({"ts":1795000000.0,"level":"info","msg":"m","latency_ms":0.0})"
                                                   "\n");
  EXPECT_EQ(line_at(whole_second + microseconds{100'000}, nanoseconds{1}),
            R"({"ts":1795000000.1,"level":"info","msg":"m","latency_ms":0.000001})"
            "\n");
  EXPECT_EQ(line_at(whole_second + microseconds{10}, std::chrono::seconds{12} + nanoseconds{345'678'900}),
            R"({"ts":1795000000.00001,"level":"info","msg":"m","latency_ms":12345.6789})"
            "\n");
  EXPECT_EQ(line_at(whole_second, nanoseconds{-1'500'000}),
            R"({"ts":1795000000.0,"level":"info","msg":"m","latency_ms":-1.5})"
            "\n");
}

TEST(LogLine, KeysAndValuesAreEscaped) {
  LogLine line(at, "info", "a\nb");
  line.text("k\"", "\x01\\");
  EXPECT_EQ(line.finish(), R"({"ts":1795000000.123456,"level":"info","msg":"a\nb","k\"":"\u0001\\"})"
                           "\n");
}

TEST(LogLine, EventLine) {
  EXPECT_EQ(event_line(at, "warning", "certificate reload", {{"result", "bad"}}),
            R"({"ts":1795000000.123456,"level":"warning","msg":"certificate reload","result":"bad"})"
            "\n");
}

TEST(LogLine, SinkWritesWholeLinesInOrder) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    LogSink sink(fds[1]);
    sink.write("one\n");
    sink.write("two\n");
    sink.write_now("three\n");
  }
  ::close(fds[1]);
  char buffer[64] = {};
  const ssize_t got = ::read(fds[0], buffer, sizeof(buffer));
  ::close(fds[0]);
  EXPECT_EQ(std::string(buffer, static_cast<std::size_t>(got)), "one\ntwo\nthree\n");
}

TEST(LogLine, ClosedDescriptorIsNotAnError) {
  LogSink sink(-1);
  sink.write_now("lost\n");  // must not throw or block
  SUCCEED();
}

}  // namespace
}  // namespace vmgate::kube
