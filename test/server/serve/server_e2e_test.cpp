// vmgate serve end to end: real TLS on loopback, a client that behaves like kube-apiserver
// (verifies the certificate against the CA for vmgate.vmgate-system.svc, ALPN http/1.1,
// keep-alive reuse, ?timeout=), the golden AdmissionReview fixtures through every endpoint,
// and the acceptance sample replayed through the server with the verdicts of `vmgate check`.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "server/serve/serve_test_support.hpp"
#include "support/apply_patch.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/cluster_loader.hpp"

namespace vmgate::testing {
namespace {

const std::string kFixtures = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/webhook/";

class ServeEndToEnd : public ::testing::Test {
 protected:
  ServeEndToEnd() : pki_(directory_.path()) {
    const auto [cert, key] = pki_.issue("serving");
    serve::ServeOptions options = TestServer::test_options(cert, key);
    options.objects = {kFixtures + "cluster.json"};
    server_ = std::make_unique<TestServer>(options);
  }

  [[nodiscard]] ClientOptions apiserver() const {
    ClientOptions options;
    options.ca_file = pki_.ca_file();
    return options;
  }

  HttpConnection connect() {
    Result<HttpConnection> connection = HttpConnection::tls(server_->port(), apiserver());
    if (!connection) {
      throw std::runtime_error(connection.error().message);
    }
    return std::move(connection.value());
  }

  TemporaryDirectory directory_;
  TestPki pki_;
  std::unique_ptr<TestServer> server_;
};

std::string path_for_fixture(const std::string& name) {
  if (name.starts_with("vm-mutate")) {
    return "/virtualmachines-mutate";
  }
  if (name.starts_with("vm-validate")) {
    return "/virtualmachines-validate";
  }
  if (name.starts_with("vmi-mutate")) {
    return "/virtualmachineinstances-mutate";
  }
  return "/virtualmachineinstances-validate";
}

TEST_F(ServeEndToEnd, HandshakeAsTheApiserverDoes) {
  HttpConnection connection = connect();
  EXPECT_EQ(connection.negotiated_alpn(), "http/1.1");
}

TEST_F(ServeEndToEnd, WrongServerNameIsRefusedByTheClient) {
  ClientOptions options = apiserver();
  options.server_name = "other.vmgate-system.svc";
  Result<HttpConnection> connection = HttpConnection::tls(server_->port(), options);
  ASSERT_FALSE(connection.ok());
  EXPECT_NE(connection.error().message.find("verify"), std::string::npos) << connection.error().message;
}

TEST_F(ServeEndToEnd, OnlyHttp2OfferedIsRefused) {
  ClientOptions options = apiserver();
  options.alpn = {"h2"};
  Result<HttpConnection> connection = HttpConnection::tls(server_->port(), options);
  ASSERT_FALSE(connection.ok());
  EXPECT_NE(connection.error().message.find("no application protocol"), std::string::npos)
      << connection.error().message;
}

TEST_F(ServeEndToEnd, GoldenFixturesThroughEveryEndpointOnOneKeptAliveConnection) {
  HttpConnection connection = connect();
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtures)) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".request.json")) {
      continue;
    }
    const std::string name = file.substr(0, file.size() - std::string(".request.json").size());
    SCOPED_TRACE(name);
    Result<HttpResponse> response =
        connection.post(path_for_fixture(name) + "?timeout=10s", read_file(kFixtures + file));
    ASSERT_TRUE(response.ok()) << response.error().message;
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->header("content-type"), "application/json");
    EXPECT_NE(response->header("connection"), "close");
    const json::Document actual = parse(response->body);
    EXPECT_TRUE(json_equals(actual, read_file(kFixtures + name + ".response.json")));
    ++seen;
  }
  EXPECT_EQ(seen, 9);
}

TEST_F(ServeEndToEnd, UidEchoAndPatchPairing) {
  HttpConnection connection = connect();
  const std::string body = read_file(kFixtures + "vm-mutate-create.request.json");
  Result<HttpResponse> mutated = connection.post("/virtualmachines-mutate?timeout=10s", body);
  ASSERT_TRUE(mutated.ok()) << mutated.error().message;
  const json::Document request = parse(body);
  const json::Document answer = parse(mutated->body);
  EXPECT_EQ(text(answer, "/response/uid"), text(request, "/request/uid"));
  EXPECT_EQ(text(answer, "/response/patchType"), "JSONPatch");
  // The patch applies to the submitted object and gives the admitted golden object.
  const json::Document patch = parse(base64_decode(text(answer, "/response/patch")));
  Result<json::Document> admitted = apply_patch(*json::find_path(request, {"request", "object"}), patch);
  ASSERT_TRUE(admitted.ok()) << admitted.error().message;
  EXPECT_TRUE(json_equals(*admitted, read_file(kFixtures + "vm-mutate-create.admitted.json")));

  // Re-admitting the admitted object changes nothing: neither patch nor patchType.
  json::Document again = parse(body);
  json::Value copy(*admitted, again.GetAllocator());
  (*json::find(again, "request")).FindMember("object")->value = copy;
  Result<HttpResponse> idempotent = connection.post("/virtualmachines-mutate", json::to_string(again));
  ASSERT_TRUE(idempotent.ok()) << idempotent.error().message;
  const json::Document second = parse(idempotent->body);
  EXPECT_EQ(text(second, "/response/allowed"), "true");
  EXPECT_EQ(text(second, "/response/patch"), "<absent>");
  EXPECT_EQ(text(second, "/response/patchType"), "<absent>");

  // A validating endpoint never answers with a patch.
  Result<HttpResponse> validated = connection.post("/virtualmachines-validate", body);
  ASSERT_TRUE(validated.ok()) << validated.error().message;
  EXPECT_EQ(text(parse(validated->body), "/response/patch"), "<absent>");
}

TEST_F(ServeEndToEnd, KeepAliveServesManyRequestsOnOneConnection) {
  HttpConnection connection = connect();
  const std::string body = read_file(kFixtures + "vmi-mutate-create.request.json");
  for (int i = 0; i < 200; ++i) {
    Result<HttpResponse> response = connection.post("/virtualmachineinstances-mutate?timeout=10s", body);
    ASSERT_TRUE(response.ok()) << "request " << i << ": " << response.error().message;
    ASSERT_EQ(response->status, 200);
  }
  std::string metrics;
  {
    Result<HttpResponse> scraped = http_get(server_->metrics_port(), "/metrics");
    ASSERT_TRUE(scraped.ok()) << scraped.error().message;
    metrics = scraped->body;
  }
  EXPECT_NE(metrics.find("vmgate_connections_total 1\n"), std::string::npos) << metrics;
  EXPECT_NE(
      metrics.find("vmgate_webhook_requests_total{webhook=\"virtualmachineinstances-mutate\",operation=\"CREATE\","
                   "decision=\"allowed\",code=\"200\",dry_run=\"false\"} 200\n"),
      std::string::npos)
      << metrics;
}

// However a request's bytes arrive — several requests in one write, a body in pieces over
// several TLS records and reads, a chunked body — each is answered once, as when sent alone.
TEST_F(ServeEndToEnd, PipelinedPiecewiseAndChunkedRequestsGetTheAnswerOfOneSentAlone) {
  const std::string body = read_file(kFixtures + "vm-mutate-create.request.json");
  const std::string target = "/virtualmachines-mutate";
  HttpConnection connection = connect();
  Result<HttpResponse> alone = connection.post(target, body);
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  ASSERT_EQ(alone->status, 200);

  const std::string request = apiserver_request(target, body);
  ASSERT_TRUE(connection.send(request + request + request).ok());
  for (int i = 0; i < 3; ++i) {
    Result<HttpResponse> answer = connection.read_response();
    ASSERT_TRUE(answer.ok()) << "pipelined request " << i << ": " << answer.error().message;
    EXPECT_EQ(answer->body, alone->body) << "pipelined request " << i;
  }

  const std::size_t header_end = request.find("\r\n\r\n") + 4;
  ASSERT_TRUE(connection.send(request.substr(0, header_end + 7)).ok());
  for (std::size_t at = header_end + 7; at < request.size(); at += 500) {
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
    ASSERT_TRUE(connection.send(request.substr(at, 500)).ok());
  }
  Result<HttpResponse> piecewise = connection.read_response();
  ASSERT_TRUE(piecewise.ok()) << piecewise.error().message;
  EXPECT_EQ(piecewise->body, alone->body);

  std::string chunked =
      "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::size_t at = 0; at < body.size(); at += 1000) {
    const std::string piece = body.substr(at, 1000);
    std::ostringstream size;
    size << std::hex << piece.size();
    chunked += size.str() + "\r\n" + piece + "\r\n";
  }
  chunked += "0\r\n\r\n";
  ASSERT_TRUE(connection.send(chunked + request).ok());
  for (const char* which : {"chunked", "after the chunked one"}) {
    Result<HttpResponse> answer = connection.read_response();
    ASSERT_TRUE(answer.ok()) << which << ": " << answer.error().message;
    EXPECT_EQ(answer->body, alone->body) << which;
  }
}

TEST_F(ServeEndToEnd, OneJsonLogLinePerAdmissionWithoutTheObject) {
  HttpConnection connection = connect();
  const std::string body = read_file(kFixtures + "vm-validate-conflict.request.json");
  ASSERT_TRUE(connection.post("/virtualmachines-validate", body).ok());
  const std::string log = server_->log_text();
  std::istringstream lines(log);
  std::string line;
  int admissions = 0;
  while (std::getline(lines, line)) {
    auto entry = json::parse_json(line);
    ASSERT_TRUE(entry.ok()) << line;
    if (text(*entry, "/msg") != "admission") {
      continue;
    }
    ++admissions;
    const json::Document request = parse(body);
    EXPECT_EQ(text(*entry, "/uid"), text(request, "/request/uid"));
    EXPECT_EQ(text(*entry, "/webhook"), "virtualmachines-validate");
    EXPECT_EQ(text(*entry, "/operation"), "CREATE");
    EXPECT_EQ(text(*entry, "/kind"), "VirtualMachine");
    EXPECT_EQ(text(*entry, "/decision"), "denied");
    EXPECT_EQ(text(*entry, "/dry_run"), "false");
    EXPECT_NE(text(*entry, "/latency_ms"), "<absent>");
    EXPECT_EQ(text(*entry, "/object"), "<absent>");
    EXPECT_EQ(line.find("\"spec\""), std::string::npos) << "the object must never be logged: " << line;
  }
  EXPECT_EQ(admissions, 1) << log;
}

TEST_F(ServeEndToEnd, HealthEndpoints) {
  for (const auto& [path, status, body] : {std::tuple{"/livez", 200, "ok\n"}, std::tuple{"/healthz", 200, "ok\n"},
                                           std::tuple{"/readyz", 200, "ok\n"}, std::tuple{"/nope", 404, ""}}) {
    Result<HttpResponse> response = http_get(server_->metrics_port(), path);
    ASSERT_TRUE(response.ok()) << response.error().message;
    EXPECT_EQ(response->status, status) << path;
    if (status == 200) {
      EXPECT_EQ(response->body, body) << path;
    }
  }
}

// ---------------------------------------------------------------- acceptance sample replay

struct Verdict {
  bool allowed = false;
  int code = 0;
  std::string message;
  json::Document admitted;
};

std::string review_of(const json::Value& case_request, const json::Value& object, const char* resource,
                      const char* kind) {
  json::Document review(rapidjson::kObjectType);
  auto& a = review.GetAllocator();
  review.AddMember("apiVersion", "admission.k8s.io/v1", a);
  review.AddMember("kind", "AdmissionReview", a);
  json::Value request(rapidjson::kObjectType);
  request.AddMember("uid", "11111111-2222-3333-4444-555555555555", a);
  json::Value resource_value(rapidjson::kObjectType);
  resource_value.AddMember("group", "kubevirt.io", a);
  resource_value.AddMember("version", "v1", a);
  resource_value.AddMember("resource", json::Value(resource, a), a);
  request.AddMember("resource", resource_value, a);
  json::Value kind_value(rapidjson::kObjectType);
  kind_value.AddMember("group", "kubevirt.io", a);
  kind_value.AddMember("version", "v1", a);
  kind_value.AddMember("kind", json::Value(kind, a), a);
  request.AddMember("kind", kind_value, a);
  request.AddMember("operation", json::make_string(json::find_string(case_request, "operation"), a), a);
  request.AddMember("namespace", json::make_string(json::find_string(case_request, "namespace"), a), a);
  request.AddMember("object", json::Value(object, a), a);
  if (const json::Value* old = json::find(case_request, "oldObject"); old != nullptr && old->IsObject()) {
    request.AddMember("oldObject", json::Value(*old, a), a);
  }
  request.AddMember("userInfo", json::Value(rapidjson::kObjectType).AddMember("username", "ci-user", a), a);
  review.AddMember("request", request, a);
  return json::to_string(review);
}

Verdict verdict_of(const json::Value& response) {
  Verdict verdict;
  verdict.allowed = text(response, "/response/allowed") == "true";
  verdict.code = verdict.allowed ? 200 : std::stoi(text(response, "/response/status/code"));
  verdict.message = verdict.allowed ? "" : text(response, "/response/status/message");
  return verdict;
}

TEST(ServeAcceptanceReplay, SameVerdictsAsVmgateCheck) {
  const std::filesystem::path cases = std::filesystem::path(VMGATE_SHARED_DIR) / "acceptance-sample" / "cases";
  ASSERT_TRUE(std::filesystem::is_directory(cases)) << cases;
  TemporaryDirectory directory;
  TestPki pki(directory.path());
  const auto [cert, key] = pki.issue("serving");
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cases)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const json::Document acceptance = parse(read_file(entry.path().string()));
    const std::filesystem::path objects = directory.path() / "objects.json";
    write_text(objects, json::to_string(*json::find(acceptance, "objects")));

    // What `vmgate check` decides: the full chain in process, on the same objects.
    const admission::Pipeline pipeline;
    std::istringstream no_stdin;
    Result<kube::LoadedCluster> cluster = kube::load_cluster({objects.string()}, "default", pipeline, no_stdin);
    ASSERT_TRUE(cluster.ok()) << cluster.error().message;
    const json::Value& case_request = *json::find(acceptance, "request");
    const json::Value& object = *json::find(case_request, "object");
    const bool is_vm = json::find_string(object, "kind") == "VirtualMachine";
    admission::Request request;
    request.resource = is_vm ? admission::Resource::virtual_machine : admission::Resource::virtual_machine_instance;
    request.operation = json::find_string(case_request, "operation") == "UPDATE" ? admission::Operation::update
                                                                                 : admission::Operation::create;
    request.namespace_name = std::string(json::find_string(case_request, "namespace"));
    request.object = &object;
    const json::Value* old = json::find(case_request, "oldObject");
    request.old_object = old != nullptr && old->IsObject() ? old : nullptr;
    const admission::Outcome expected = pipeline.admit(request, cluster->store);

    // What kube-apiserver gets from vmgate serve: mutate, apply the patch, validate.
    serve::ServeOptions options = TestServer::test_options(cert, key);
    options.objects = {objects.string()};
    TestServer server(options);
    ClientOptions client;
    client.ca_file = pki.ca_file();
    Result<HttpConnection> connection = HttpConnection::tls(server.port(), client);
    ASSERT_TRUE(connection.ok()) << connection.error().message;
    const char* resource = is_vm ? "virtualmachines" : "virtualmachineinstances";
    const char* kind = is_vm ? "VirtualMachine" : "VirtualMachineInstance";
    const std::string prefix = is_vm ? "/virtualmachines" : "/virtualmachineinstances";
    Result<HttpResponse> mutated =
        connection->post(prefix + "-mutate?timeout=10s", review_of(case_request, object, resource, kind));
    ASSERT_TRUE(mutated.ok()) << mutated.error().message;
    const json::Document mutation = parse(mutated->body);
    Verdict actual = verdict_of(mutation);
    json::Document admitted;
    admitted.CopyFrom(object, admitted.GetAllocator());
    if (actual.allowed && text(mutation, "/response/patch") != "<absent>") {
      Result<json::Document> patched = apply_patch(object, parse(base64_decode(text(mutation, "/response/patch"))));
      ASSERT_TRUE(patched.ok()) << patched.error().message;
      admitted = std::move(patched.value());
    }
    if (actual.allowed) {
      EXPECT_TRUE(json_equals(admitted, json::to_string(expected.admitted)));
      Result<HttpResponse> validated =
          connection->post(prefix + "-validate?timeout=10s", review_of(case_request, admitted, resource, kind));
      ASSERT_TRUE(validated.ok()) << validated.error().message;
      actual = verdict_of(parse(validated->body));
    }
    EXPECT_EQ(actual.allowed, expected.verdict.allowed);
    if (!expected.verdict.allowed) {
      EXPECT_EQ(actual.code, expected.verdict.code);
      EXPECT_EQ(actual.message, expected.verdict.message);
    }
    EXPECT_EQ(actual.allowed, text(*json::find(acceptance, "expect"), "/allowed") == "true");
    ++replayed;
  }
  EXPECT_GE(replayed, 31);
}

}  // namespace
}  // namespace vmgate::testing
