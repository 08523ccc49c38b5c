#include "vmgate/kube/log_line.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace vmgate::kube {
namespace {

const std::chrono::system_clock::time_point at{std::chrono::microseconds{1'795'000'000'123'456}};

TEST(LogLine, EveryKindOfValue) {
  LogLine line(at, "info", "admission");
  line.text("uid", "u-\"1\"").flag("dry_run", false).integer("code", 200).number("latency_ms", 0.041);
  EXPECT_EQ(line.finish(),
            R"({"ts":1795000000.123456,"level":"info","msg":"admission","uid":"u-\"1\"","dry_run":false,"code":200,)"
            R"("latency_ms":0.041})"
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
