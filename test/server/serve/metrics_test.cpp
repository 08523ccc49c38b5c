#include "vmgate/server/metrics.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace vmgate::serve {
namespace {

using std::chrono::microseconds;

webhook::ReviewSummary summary(std::string operation, bool allowed, int code, bool dry_run = false,
                               std::string error = {}) {
  webhook::ReviewSummary result;
  result.operation = std::move(operation);
  result.allowed = allowed;
  result.code = code;
  result.dry_run = dry_run;
  result.error = std::move(error);
  return result;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(Metrics, RequestsByWebhookOperationDecisionCodeAndDryRun) {
  Metrics metrics;
  metrics.record_review(webhook::Endpoint::vm_mutate, summary("CREATE", true, 200), microseconds{50});
  metrics.record_review(webhook::Endpoint::vm_mutate, summary("CREATE", true, 200, true), microseconds{50});
  metrics.record_review(webhook::Endpoint::vmi_validate, summary("UPDATE", false, 422), microseconds{300});
  metrics.record_review(webhook::Endpoint::vm_validate, summary("<script>", false, 400, false, "bad"), microseconds{5});
  const std::string text = metrics.render(true);
  EXPECT_TRUE(has_line(
      text,
      R"(vmgate_webhook_requests_total{webhook="virtualmachines-mutate",operation="CREATE",decision="allowed",code="200",dry_run="false"} 1)"))
      << text;
  EXPECT_TRUE(has_line(
      text,
      R"(vmgate_webhook_requests_total{webhook="virtualmachines-mutate",operation="CREATE",decision="allowed",code="200",dry_run="true"} 1)"));
  EXPECT_TRUE(has_line(
      text,
      R"(vmgate_webhook_requests_total{webhook="virtualmachineinstances-validate",operation="UPDATE",decision="denied",code="422",dry_run="false"} 1)"));
  // An operation a refused body made up never becomes a label value.
  EXPECT_TRUE(has_line(
      text,
      R"(vmgate_webhook_requests_total{webhook="virtualmachines-validate",operation="unknown",decision="error",code="400",dry_run="false"} 1)"));
  EXPECT_EQ(text.find("<script>"), std::string::npos);
}

TEST(Metrics, LatencyHistogramIsCumulative) {
  Metrics metrics;
  metrics.record_review(webhook::Endpoint::vm_mutate, summary("CREATE", true, 200), microseconds{50});
  metrics.record_review(webhook::Endpoint::vm_mutate, summary("CREATE", true, 200), microseconds{700});
  metrics.record_review(webhook::Endpoint::vm_mutate, summary("CREATE", true, 200), std::chrono::seconds{5});
  const std::string text = metrics.render(true);
  const std::string prefix = R"(vmgate_webhook_request_duration_seconds_bucket{webhook="virtualmachines-mutate",le=)";
  EXPECT_TRUE(has_line(text, prefix + R"("0.0001"} 1)")) << text;
  EXPECT_TRUE(has_line(text, prefix + R"("0.0005"} 1)"));
  EXPECT_TRUE(has_line(text, prefix + R"("0.001"} 2)"));
  EXPECT_TRUE(has_line(text, prefix + R"("2.5"} 2)"));
  EXPECT_TRUE(has_line(text, prefix + R"("+Inf"} 3)"));
  EXPECT_TRUE(has_line(text, R"(vmgate_webhook_request_duration_seconds_count{webhook="virtualmachines-mutate"} 3)"));
  EXPECT_TRUE(
      has_line(text, R"(vmgate_webhook_request_duration_seconds_sum{webhook="virtualmachines-mutate"} 5.00075)"));
}

TEST(Metrics, GaugesAndCounters) {
  Metrics metrics;
  metrics.request_started(webhook::Endpoint::vmi_mutate);
  metrics.connection_opened();
  metrics.connection_opened();
  metrics.connection_closed();
  metrics.record_rejection(Rejection::body_too_large);
  metrics.record_tls_handshake_error();
  metrics.set_certificate_expiry(1'900'000'000);
  metrics.record_certificate_reload(false);
  metrics.set_objects(122, 1'800'000'000);
  metrics.record_objects_reload(true);
  const std::string text = metrics.render(false);
  EXPECT_TRUE(has_line(text, R"(vmgate_webhook_requests_in_flight{webhook="virtualmachineinstances-mutate"} 1)"));
  EXPECT_TRUE(has_line(text, "vmgate_connections_open 1"));
  EXPECT_TRUE(has_line(text, "vmgate_connections_total 2"));
  EXPECT_TRUE(has_line(text, R"(vmgate_http_rejected_total{reason="body_too_large"} 1)"));
  EXPECT_TRUE(has_line(text, R"(vmgate_http_rejected_total{reason="plain_http"} 0)"));
  EXPECT_TRUE(has_line(text, "vmgate_tls_handshake_errors_total 1"));
  EXPECT_TRUE(has_line(text, R"(vmgate_tls_certificate_expiry_timestamp_seconds{cert="serving"} 1900000000)"));
  EXPECT_TRUE(has_line(text, R"(vmgate_tls_certificate_reloads_total{result="failure"} 1)"));
  EXPECT_TRUE(has_line(text, "vmgate_object_store_objects 122"));
  EXPECT_TRUE(has_line(text, "vmgate_object_store_last_reload_timestamp_seconds 1800000000"));
  EXPECT_TRUE(has_line(text, R"(vmgate_object_store_reloads_total{result="success"} 1)"));
  EXPECT_TRUE(has_line(text, "vmgate_ready 0"));
  EXPECT_NE(text.find("# TYPE vmgate_webhook_request_duration_seconds histogram\n"), std::string::npos);
}

TEST(Metrics, ConcurrentRecordingLosesNothing) {
  Metrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&metrics] {
      for (int i = 0; i < 10000; ++i) {
        metrics.record_review(webhook::Endpoint::vm_validate, summary("CREATE", true, 200), microseconds{1});
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_TRUE(has_line(metrics.render(true),
                       R"(vmgate_webhook_request_duration_seconds_count{webhook="virtualmachines-validate"} 40000)"));
}

}  // namespace
}  // namespace vmgate::serve
