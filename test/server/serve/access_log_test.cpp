#include "vmgate/server/access_log.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"

namespace vmgate::serve {
namespace {

const std::chrono::system_clock::time_point at{std::chrono::microseconds{1'795'000'000'123'456}};

TEST(AccessLog, OneAdmissionLine) {
  webhook::ReviewSummary summary;
  summary.uid = "u-1";
  summary.operation = "CREATE";
  summary.kind = "VirtualMachine";
  summary.namespace_name = "tenant-a";
  summary.name = "web \"01\"";
  summary.dry_run = true;
  summary.allowed = false;
  summary.code = 422;
  const std::string line = admission_line(at, webhook::Endpoint::vm_validate, summary, std::chrono::microseconds{41});
  EXPECT_EQ(
      line,
      R"({"ts":1795000000.123456,"level":"info","msg":"admission","uid":"u-1","webhook":"virtualmachines-validate",)"
      R"("operation":"CREATE","kind":"VirtualMachine","namespace":"tenant-a","name":"web \"01\"","dry_run":true,)"
      R"("decision":"denied","code":422,"latency_ms":0.041})"
      "\n");
}

TEST(AccessLog, RefusedBodyCarriesTheError) {
  webhook::ReviewSummary summary;
  summary.code = 400;
  summary.error = "cannot decode the request body: \x01";
  const std::string line = admission_line(at, webhook::Endpoint::vm_mutate, summary, std::chrono::microseconds{3});
  const json::Document parsed = testing::parse(line);
  EXPECT_EQ(testing::text(parsed, "/decision"), "error");
  EXPECT_EQ(testing::text(parsed, "/error"), "cannot decode the request body: \x01");
}

}  // namespace
}  // namespace vmgate::serve
