#include "vmgate/server/routing.hpp"

#include <gtest/gtest.h>

namespace vmgate::serve {
namespace {

constexpr std::uint64_t limit = 8U << 20U;

RequestHead post(std::string_view target, std::optional<std::string_view> content_type = "application/json") {
  return RequestHead{"POST", target, content_type, std::uint64_t{100}};
}

Refusal refused(const std::variant<Admit, Refusal>& routed) {
  const Refusal* refusal = std::get_if<Refusal>(&routed);
  EXPECT_NE(refusal, nullptr);
  return refusal != nullptr ? *refusal : Refusal{};
}

TEST(Routing, AdmitsTheFourWebhooksWithTheirTimeout) {
  const auto routed = route_webhook(post("/virtualmachineinstances-validate?timeout=10s"), limit);
  ASSERT_TRUE(std::holds_alternative<Admit>(routed));
  EXPECT_EQ(std::get<Admit>(routed).endpoint, webhook::Endpoint::vmi_validate);
  EXPECT_EQ(std::get<Admit>(routed).timeout->count(), 10'000'000'000);
  EXPECT_FALSE(std::get<Admit>(route_webhook(post("/virtualmachines-mutate"), limit)).timeout.has_value());
}

TEST(Routing, RefusalsInOrder) {
  const Refusal unknown = refused(route_webhook(RequestHead{"GET", "/metrics", std::nullopt, std::nullopt}, limit));
  EXPECT_EQ(unknown.answer.status, 404);
  EXPECT_EQ(unknown.reason, Rejection::not_found);
  EXPECT_NE(unknown.answer.body.find("no webhook at /metrics"), std::string::npos);

  const Refusal method =
      refused(route_webhook(RequestHead{"PUT", "/virtualmachines-mutate", "application/json", 1}, limit));
  EXPECT_EQ(method.answer.status, 405);
  EXPECT_EQ(method.allow, "POST");

  const Refusal media = refused(route_webhook(post("/virtualmachines-mutate", "text/plain"), limit));
  EXPECT_EQ(media.answer.status, 415);
  EXPECT_EQ(media.reason, Rejection::content_type);
  EXPECT_EQ(refused(route_webhook(post("/virtualmachines-mutate", std::nullopt), limit)).answer.status, 415);
  EXPECT_TRUE(std::holds_alternative<Admit>(
      route_webhook(post("/virtualmachines-mutate", " Application/Json ; charset=UTF-8"), limit)));

  RequestHead big = post("/virtualmachines-mutate");
  big.content_length = limit + 1;
  const Refusal large = refused(route_webhook(big, limit));
  EXPECT_EQ(large.answer.status, 413);
  EXPECT_EQ(
      large.answer.body,
      R"json({"kind":"Status","apiVersion":"v1","status":"Failure","message":"request body too large: the limit is )json"
      R"json(8388608 bytes (an AdmissionReview holds at most two objects of 3 MiB)","code":413})json");
  big.content_length = limit;
  EXPECT_TRUE(std::holds_alternative<Admit>(route_webhook(big, limit)));

  const Refusal timeout = refused(route_webhook(post("/virtualmachines-mutate?timeout=x"), limit));
  EXPECT_EQ(timeout.answer.status, 400);
  EXPECT_EQ(timeout.reason, Rejection::bad_request);
}

TEST(Routing, HealthPort) {
  Metrics metrics;
  const Readiness ready{true, true, false, {}};
  EXPECT_EQ(answer_health("GET", "/livez", ready, metrics).body, "ok\n");
  EXPECT_EQ(answer_health("GET", "/healthz?verbose", ready, metrics).status, 200);
  EXPECT_EQ(answer_health("GET", "/readyz", ready, metrics).status, 200);
  EXPECT_EQ(answer_health("POST", "/readyz", ready, metrics).status, 405);
  EXPECT_EQ(answer_health("GET", "/", ready, metrics).status, 404);
  const webhook::HttpAnswer scraped = answer_health("GET", "/metrics", ready, metrics);
  EXPECT_EQ(scraped.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(scraped.body.find("vmgate_ready 1\n"), std::string::npos);

  const webhook::HttpAnswer draining = answer_health("GET", "/readyz", Readiness{true, true, true, {}}, metrics);
  EXPECT_EQ(draining.status, 503);
  EXPECT_EQ(
      draining.body,
      "[+]tls-certificate ok\n[+]cluster-objects ok\n[-]not-draining failed: shutting down\nreadyz check failed\n");
  EXPECT_EQ(answer_health("GET", "/readyz", Readiness{false, true, false, {}}, metrics).body.substr(0, 39),
            "[-]tls-certificate failed: not loaded\n[");
  EXPECT_EQ(answer_health("GET", "/livez", Readiness{false, false, true, {}}, metrics).status, 200);
  // The cluster source says why it is not ready; its metrics follow the server's.
  const webhook::HttpAnswer not_synced = answer_health(
      "GET", "/readyz", Readiness{true, false, false, "persistentvolumeclaims: list: 403 Forbidden: no"}, metrics);
  EXPECT_NE(not_synced.body.find("[-]cluster-objects failed: persistentvolumeclaims: list: 403 Forbidden: no\n"),
            std::string::npos);
  EXPECT_TRUE(answer_health("GET", "/metrics", ready, metrics, "extra_family 1\n").body.ends_with("extra_family 1\n"));
}

TEST(Routing, TimeoutParameterOfARequestTarget) {
  EXPECT_FALSE(timeout_parameter("/virtualmachines-mutate")->has_value());
  EXPECT_FALSE(timeout_parameter("/virtualmachines-mutate?dryRun=All")->has_value());
  EXPECT_EQ(timeout_parameter("/virtualmachines-mutate?timeout=10s")->value().count(), 10'000'000'000);
  EXPECT_EQ(timeout_parameter("/x?a=b&timeout=500ms&c")->value().count(), 500'000'000);
  const auto bad = timeout_parameter("/x?timeout=10");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "query parameter timeout: missing or unknown unit in duration \"10\" (valid units: ns, us, ms, s, m, h)");
}

}  // namespace
}  // namespace vmgate::serve
