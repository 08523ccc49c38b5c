// vmgate serve against bad input and bad clients: every case gets its expected status and
// message (or a clean close), and the server keeps answering a well-behaved client throughout.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/serve/serve_test_support.hpp"
#include "support/json_test_support.hpp"

namespace vmgate::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

const std::string kFixtures = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/webhook/";

class ServeHostile : public ::testing::Test {
 protected:
  ServeHostile() : pki_(directory_.path()) {
    const auto [cert, key] = pki_.issue("serving");
    options_ = TestServer::test_options(cert, key);
    options_.objects = {kFixtures + "cluster.json"};
    options_.header_timeout = milliseconds{1000};
    options_.body_timeout = milliseconds{1000};
    options_.handshake_timeout = milliseconds{1000};
  }

  TestServer& server() {
    if (!server_) {
      server_ = std::make_unique<TestServer>(options_);
    }
    return *server_;
  }

  [[nodiscard]] ClientOptions apiserver() const {
    ClientOptions options;
    options.ca_file = pki_.ca_file();
    options.timeout = milliseconds{5000};
    return options;
  }

  HttpConnection connect() {
    Result<HttpConnection> connection = HttpConnection::tls(server().port(), apiserver());
    if (!connection) {
      throw std::runtime_error(connection.error().message);
    }
    return std::move(connection.value());
  }

  /// A well-behaved apiserver request on a new connection is answered correctly.
  void expect_served() {
    HttpConnection connection = connect();
    Result<HttpResponse> response = connection.post("/virtualmachines-validate?timeout=10s", valid_review_);
    ASSERT_TRUE(response.ok()) << response.error().message;
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(text(parse(response->body), "/response/allowed"), "false");  // the fixture is a conflict
  }

  /// One POST on a new connection: the answer's status and Status message.
  std::pair<int, std::string> post(std::string_view path, std::string_view body,
                                   std::string_view content_type = "application/json") {
    HttpConnection connection = connect();
    Result<HttpResponse> response = connection.post(path, body, content_type);
    if (!response) {
      return {0, response.error().message};
    }
    const json::Document answer = parse(response->body);
    std::string message = text(answer, "/message");
    if (message == "<absent>") {
      message = text(answer, "/response/status/message");
    }
    return {response->status, message};
  }

  TemporaryDirectory directory_;
  TestPki pki_;
  serve::ServeOptions options_;
  std::unique_ptr<TestServer> server_;
  const std::string valid_review_ = read_file(kFixtures + "vm-validate-conflict.request.json");
};

TEST_F(ServeHostile, NotJson) {
  const auto [status, message] = post("/virtualmachines-mutate", "this is not json");
  EXPECT_EQ(status, 400);
  EXPECT_NE(message.find("cannot decode the request body"), std::string::npos) << message;
  expect_served();
}

TEST_F(ServeHostile, JsonThatIsNotAnAdmissionReview) {
  const auto [status, message] = post("/virtualmachines-mutate", R"({"apiVersion":"v1","kind":"Pod"})");
  EXPECT_EQ(status, 400);
  EXPECT_NE(message.find("admission.k8s.io/v1"), std::string::npos) << message;
  const auto [array_status, array_message] = post("/virtualmachines-mutate", "[1,2,3]");
  EXPECT_EQ(array_status, 400);
  EXPECT_NE(array_message.find("object"), std::string::npos) << array_message;
  expect_served();
}

TEST_F(ServeHostile, WrongApiVersionOrKind) {
  const auto [status, message] =
      post("/virtualmachines-mutate", R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"})");
  EXPECT_EQ(status, 400);
  EXPECT_NE(message.find("admission.k8s.io/v1beta1"), std::string::npos) << message;
  const auto [kind_status, kind_message] =
      post("/virtualmachines-mutate", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionResponse"})");
  EXPECT_EQ(kind_status, 400);
  EXPECT_NE(kind_message.find("AdmissionReview"), std::string::npos) << kind_message;
}

TEST_F(ServeHostile, MissingUidRequestOrObject) {
  const auto [no_request, no_request_message] =
      post("/virtualmachines-mutate", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})");
  EXPECT_EQ(no_request, 400);
  EXPECT_NE(no_request_message.find("request"), std::string::npos) << no_request_message;
  const auto [no_uid, no_uid_message] = post(
      "/virtualmachines-mutate",
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE","object":{}}})");
  EXPECT_EQ(no_uid, 400);
  EXPECT_NE(no_uid_message.find("uid"), std::string::npos) << no_uid_message;
  const auto [no_object, no_object_message] =
      post("/virtualmachines-mutate",
           R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"CREATE",)"
           R"("resource":{"group":"kubevirt.io","version":"v1","resource":"virtualmachines"}}})");
  EXPECT_EQ(no_object, 400);
  EXPECT_NE(no_object_message.find("object"), std::string::npos) << no_object_message;
  expect_served();
}

TEST_F(ServeHostile, WrongResourceIsDeniedLikeKubeVirt) {
  json::Document review = parse(valid_review_);
  json::Value& resource = (*json::find(review, "request")).FindMember("resource")->value;
  resource.FindMember("resource")->value.SetString("pods");
  HttpConnection connection = connect();
  Result<HttpResponse> response = connection.post("/virtualmachines-validate", json::to_string(review));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 200);
  const json::Document answer = parse(response->body);
  EXPECT_EQ(text(answer, "/response/allowed"), "false");
  EXPECT_EQ(text(answer, "/response/status/code"), "400");
  EXPECT_EQ(text(answer, "/response/status/message"), "expect resource to be 'virtualmachines'");
}

TEST_F(ServeHostile, WrongContentTypeIs415) {
  const auto [status, message] = post("/virtualmachines-mutate", valid_review_, "application/yaml");
  EXPECT_EQ(status, 415);
  EXPECT_EQ(message, "unsupported Content-Type \"application/yaml\": expected application/json");
  const auto [none, none_message] = post("/virtualmachines-mutate", valid_review_, "");
  EXPECT_EQ(none, 415);
  EXPECT_EQ(none_message, "unsupported Content-Type none: expected application/json");
  const auto [charset, charset_message] =
      post("/virtualmachines-validate", valid_review_, "Application/JSON; charset=utf-8");
  EXPECT_EQ(charset, 200) << charset_message;
}

TEST_F(ServeHostile, UnknownPathAndWrongMethod) {
  const auto [status, message] = post("/mutate", valid_review_);
  EXPECT_EQ(status, 404);
  EXPECT_NE(message.find("no webhook at /mutate"), std::string::npos) << message;
  HttpConnection connection = connect();
  ASSERT_TRUE(connection.send("GET /virtualmachines-mutate HTTP/1.1\r\nHost: x\r\n\r\n").ok());
  Result<HttpResponse> response = connection.read_response();
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 405);
  EXPECT_EQ(response->header("allow"), "POST");
}

TEST_F(ServeHostile, InvalidTimeoutParameterIs400) {
  const auto [status, message] = post("/virtualmachines-mutate?timeout=soon", valid_review_);
  EXPECT_EQ(status, 400);
  EXPECT_NE(message.find("query parameter timeout: invalid duration \"soon\""), std::string::npos) << message;
}

TEST_F(ServeHostile, NineMebibyteBodyIs413) {
  const std::string body(std::size_t{9} << 20U, 'x');
  const auto [status, message] = post("/virtualmachines-mutate", body);
  EXPECT_EQ(status, 413);
  EXPECT_NE(message.find("request body too large: the limit is 8388608 bytes"), std::string::npos) << message;
  expect_served();
}

TEST_F(ServeHostile, NineMebibyteChunkedBodyIs413) {
  HttpConnection connection = connect();
  std::string request =
      "POST /virtualmachines-mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  const std::string chunk(std::size_t{1} << 20U, 'x');
  ASSERT_TRUE(connection.send(request).ok());
  for (int i = 0; i < 9; ++i) {
    if (!connection.send("100000\r\n" + chunk + "\r\n").ok()) {
      break;  // the server may close once it has answered
    }
  }
  Result<HttpResponse> response = connection.read_response();
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 413);
  expect_served();
}

TEST_F(ServeHostile, OneMegabyteHeaderIs431) {
  HttpConnection connection = connect();
  const std::string request =
      "POST /virtualmachines-mutate HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(std::size_t{1} << 20U, 'a') +
      "\r\n\r\n";
  (void)connection.send(request);  // the server answers and closes before reading it all
  Result<HttpResponse> response = connection.read_response();
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 431);
  EXPECT_NE(response->body.find("request header fields too large"), std::string::npos) << response->body;
  expect_served();
}

// A request whose header is about `header_bytes` long in fields of about 100 bytes, then the valid
// review as its body; returned as the pieces a client writes one by one (start line, each field,
// the end of the header with the body).
std::vector<std::string> many_small_fields(std::size_t header_bytes, const std::string& body) {
  std::vector<std::string> pieces{
      "POST /virtualmachines-validate HTTP/1.1\r\n",
      "Host: x\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n"};
  std::size_t size = pieces[0].size() + pieces[1].size() + 2;
  for (int i = 0; size < header_bytes; ++i) {  // overshoots by less than one field
    std::string field = "X-Field-" + std::to_string(i) + ": " + std::string(90, 'v') + "\r\n";
    size += field.size();
    pieces.push_back(std::move(field));
  }
  pieces.push_back("\r\n" + body);
  return pieces;
}

// The documented limit holds for the header as a whole, however its bytes arrive: in one write
// (two TLS records, so two reads for the server), in writes of 8 KiB, or in one write per field.
// Before, the first two got 200 for headers of 20 KiB.
TEST_F(ServeHostile, HeaderLimitHoldsForManySmallFieldsInOneOrManyWrites) {
  for (const std::size_t write_size : {std::size_t{0}, std::size_t{8192}, std::size_t{1}}) {
    for (const std::size_t header_bytes : {std::size_t{20} << 10U, std::size_t{32} << 10U, std::size_t{15} << 10U}) {
      SCOPED_TRACE((write_size == 0   ? std::string("one write, ")
                    : write_size == 1 ? std::string("a write per field, ")
                                      : "writes of " + std::to_string(write_size) + " bytes, ") +
                   std::to_string(header_bytes) + " header bytes");
      const std::vector<std::string> pieces = many_small_fields(header_bytes, valid_review_);
      std::vector<std::string> writes = pieces;
      if (write_size != 1) {
        std::string request;
        for (const std::string& piece : pieces) {
          request += piece;
        }
        writes.clear();
        for (std::size_t at = 0; at < request.size(); at += write_size == 0 ? request.size() : write_size) {
          writes.push_back(request.substr(at, write_size == 0 ? request.size() : write_size));
        }
      }
      HttpConnection connection = connect();
      for (const std::string& write : writes) {
        if (!connection.send(write).ok()) {
          break;  // the server may answer and stop reading first
        }
      }
      Result<HttpResponse> response = connection.read_response();
      ASSERT_TRUE(response.ok()) << response.error().message;
      if (header_bytes > options_.max_header_bytes) {
        EXPECT_EQ(response->status, 431);
        EXPECT_NE(response->body.find("request header fields too large: the limit is 16384 bytes"), std::string::npos)
            << response->body;
      } else {
        EXPECT_EQ(response->status, 200) << response->body;
      }
    }
  }
  expect_served();
}

// --max-body-memory is shared by all connections: a body that does not fit while another is
// being read gets 503 with Retry-After, and fits again once the other is released.
TEST_F(ServeHostile, BodiesBeyondTheSharedBudgetGet503WithRetryAfter) {
  options_.max_body_memory = std::size_t{1} << 20U;
  options_.body_timeout = milliseconds{5000};
  auto holding = std::make_unique<HttpConnection>(connect());
  ASSERT_TRUE(holding
                  ->send("POST /virtualmachines-validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Content-Length: 1048576\r\n\r\n{")
                  .ok());
  int status = 0;
  Result<HttpResponse> refused = Error{"not sent"};
  for (int attempt = 0; attempt < 50 && status != 503; ++attempt) {  // until the server has read that header
    HttpConnection second = connect();
    refused = second.post("/virtualmachines-validate", valid_review_);
    ASSERT_TRUE(refused.ok()) << refused.error().message;
    status = refused->status;
  }
  ASSERT_EQ(status, 503);
  EXPECT_EQ(refused->header("retry-after"), "1");
  EXPECT_EQ(refused->header("connection"), "close");
  EXPECT_NE(refused->body.find("--max-body-memory 1048576 bytes"), std::string::npos) << refused->body;
  EXPECT_NE(server().metrics().render(true).find(R"(vmgate_http_rejected_total{reason="body_memory"} )"),
            std::string::npos);

  holding.reset();  // its reservation is released with its connection
  for (int attempt = 0; attempt < 50 && status != 200; ++attempt) {
    std::this_thread::sleep_for(milliseconds{20});
    HttpConnection again = connect();
    Result<HttpResponse> response = again.post("/virtualmachines-validate", valid_review_);
    ASSERT_TRUE(response.ok()) << response.error().message;
    status = response->status;
  }
  EXPECT_EQ(status, 200);
  // Answered requests release theirs: many in a row on one connection all fit.
  HttpConnection connection = connect();
  for (int i = 0; i < 20; ++i) {
    Result<HttpResponse> response = connection.post("/virtualmachines-validate", valid_review_);
    ASSERT_TRUE(response.ok()) << response.error().message;
    ASSERT_EQ(response->status, 200);
  }
}

// An orderly close ends the TLS session with close_notify, so that the client can tell it from
// a cut connection: after an answer with Connection: close, and at the drain's last call.
TEST_F(ServeHostile, OrderlyClosesSendTlsCloseNotify) {
  HttpConnection connection = connect();
  std::string request = apiserver_request("/virtualmachines-validate", valid_review_);
  request.insert(request.find("\r\n") + 2, "Connection: close\r\n");
  ASSERT_TRUE(connection.send(request).ok());
  Result<HttpResponse> response = connection.read_response();
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_TRUE(connection.closed_by_peer());
  EXPECT_TRUE(connection.received_close_notify());

  HttpConnection idle = connect();
  Result<HttpResponse> served = idle.post("/virtualmachines-validate", valid_review_);
  ASSERT_TRUE(served.ok()) << served.error().message;
  std::thread stopping([this] { server().stop(); });
  EXPECT_TRUE(idle.closed_by_peer());
  EXPECT_TRUE(idle.received_close_notify());
  stopping.join();
}

TEST_F(ServeHostile, ChunkedBodyWithoutEndIsCutAtTheBodyTimeout) {
  HttpConnection connection = connect();
  ASSERT_TRUE(connection
                  .send("POST /virtualmachines-mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n")
                  .ok());
  const auto started = steady_clock::now();
  expect_served();  // others are answered while this one hangs
  EXPECT_TRUE(connection.closed_by_peer());
  const auto waited = steady_clock::now() - started;
  EXPECT_LT(waited, std::chrono::seconds{4});
  EXPECT_GE(waited, milliseconds{800});
}

TEST_F(ServeHostile, RequestTimeoutParameterBoundsTheBodyRead) {
  options_.body_timeout = milliseconds{30000};
  HttpConnection connection = connect();
  ASSERT_TRUE(connection
                  .send("POST /virtualmachines-mutate?timeout=1s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                        "application/json\r\nContent-Length: 100\r\n\r\n{")
                  .ok());
  const auto started = steady_clock::now();
  EXPECT_TRUE(connection.closed_by_peer());
  const auto waited = steady_clock::now() - started;
  EXPECT_LT(waited, std::chrono::seconds{3});
  EXPECT_GE(waited, milliseconds{800});
}

TEST_F(ServeHostile, SlowlorisIsCutAtTheHeaderTimeoutWhileOthersAreServed) {
  HttpConnection slow = connect();
  const std::string request = apiserver_request("/virtualmachines-validate", valid_review_);
  const auto started = steady_clock::now();
  bool cut = false;
  for (std::size_t i = 0; i < 30 && !cut; ++i) {
    cut = !slow.send(request.substr(i, 1)).ok();
    expect_served();
    std::this_thread::sleep_for(milliseconds{100});  // ten bytes a second against a 1 s header timeout
    if (steady_clock::now() - started > milliseconds{1500}) {
      break;
    }
  }
  EXPECT_TRUE(slow.closed_by_peer());
  EXPECT_LT(steady_clock::now() - started, std::chrono::seconds{4});
}

TEST_F(ServeHostile, PlainHttpToTheTlsPort) {
  Result<HttpConnection> connection = HttpConnection::plain(server().port());
  ASSERT_TRUE(connection.ok());
  ASSERT_TRUE(connection->send(apiserver_request("/virtualmachines-mutate", valid_review_)).ok());
  Result<HttpResponse> response = connection->read_response();
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(response->body, "Client sent an HTTP request to an HTTPS server.\n");
  expect_served();
}

TEST_F(ServeHostile, Tls10And11ClientsAreRefused) {
  for (const int version : {TLS1_VERSION, TLS1_1_VERSION}) {
    ClientOptions old = apiserver();
    old.min_version = version;
    old.max_version = version;
    Result<HttpConnection> connection = HttpConnection::tls(server().port(), old);
    EXPECT_FALSE(connection.ok()) << "TLS version " << version;
  }
  expect_served();
  const std::string metrics = server().metrics().render(true);
  EXPECT_NE(metrics.find("vmgate_tls_handshake_errors_total 2\n"), std::string::npos) << metrics;
}

TEST_F(ServeHostile, ModernProfileRefusesTls12) {
  options_.tls_profile = serve::TlsProfile::modern;
  ClientOptions tls12 = apiserver();
  tls12.max_version = TLS1_2_VERSION;
  EXPECT_FALSE(HttpConnection::tls(server().port(), tls12).ok());
  expect_served();
}

TEST_F(ServeHostile, GarbageHandshakeAndSilentConnectionsAreClosed) {
  Result<HttpConnection> garbage = HttpConnection::plain(server().port());
  ASSERT_TRUE(garbage.ok());
  ASSERT_TRUE(garbage->send(std::string("\x16\x03\x01\x00\x05hello", 10)).ok());
  Result<HttpConnection> silent = HttpConnection::plain(server().port());
  ASSERT_TRUE(silent.ok());
  expect_served();
  EXPECT_TRUE(garbage->closed_by_peer());
  EXPECT_TRUE(silent->closed_by_peer());  // the handshake timeout
}

TEST_F(ServeHostile, ThousandIdleConnectionsDoNotBlockOthers) {
  ASSERT_TRUE(raise_descriptor_limit(2500));
  options_.handshake_timeout = milliseconds{30000};
  options_.idle_timeout = milliseconds{30000};
  std::vector<HttpConnection> idle;
  idle.reserve(1000);
  for (int i = 0; i < 500; ++i) {  // half of them TCP only, never saying anything
    Result<HttpConnection> connection = HttpConnection::plain(server().port());
    ASSERT_TRUE(connection.ok()) << connection.error().message;
    idle.push_back(std::move(connection.value()));
  }
  for (int i = 0; i < 500; ++i) {  // half after a TLS handshake, between requests
    idle.push_back(connect());
  }
  const auto started = steady_clock::now();
  expect_served();
  EXPECT_LT(steady_clock::now() - started, std::chrono::seconds{2});
  // All of them are open on the server side (accepting runs behind the kernel's backlog: wait).
  long open = 0;
  for (int attempt = 0; attempt < 100 && open < 1000; ++attempt) {
    const std::string metrics = server().metrics().render(true);
    const std::size_t at = metrics.find("\nvmgate_connections_open ");
    open = at == std::string::npos ? 0 : std::stol(metrics.substr(at + 25));
    if (open < 1000) {
      std::this_thread::sleep_for(milliseconds{50});
    }
  }
  EXPECT_GE(open, 1000);
}

TEST_F(ServeHostile, ConnectionLimitClosesTheExtraConnections) {
  options_.max_connections = 3;
  std::vector<HttpConnection> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(connect());
  }
  Result<HttpConnection> extra = HttpConnection::tls(server().port(), apiserver());
  EXPECT_FALSE(extra.ok());
  open.clear();
  std::this_thread::sleep_for(milliseconds{200});
  expect_served();
}

TEST_F(ServeHostile, ClientDisconnectMidRequest) {
  for (int i = 0; i < 20; ++i) {
    HttpConnection connection = connect();
    const std::string request = apiserver_request("/virtualmachines-validate", valid_review_);
    ASSERT_TRUE(connection.send(request.substr(0, request.size() / 2)).ok());
  }  // closed here, mid-body
  for (int i = 0; i < 20; ++i) {
    Result<HttpConnection> connection = HttpConnection::plain(server().port());
    ASSERT_TRUE(connection.ok());
    ASSERT_TRUE(connection->send("\x16\x03\x01").ok());  // mid-handshake
  }
  expect_served();
}

TEST_F(ServeHostile, ClientCertificateRequiredWithClientCa) {
  const auto [client_cert, client_key] = pki_.issue("client", "kube-apiserver");
  options_.client_ca = pki_.ca_file();
  {
    // TLS 1.3: the client's handshake completes before the server checks its certificate; the
    // refusal (an alert) arrives at the first read.
    Result<HttpConnection> without = HttpConnection::tls(server().port(), apiserver());
    if (without.ok()) {
      EXPECT_FALSE(without->post("/virtualmachines-validate", valid_review_).ok()) << "no client certificate";
    }
  }
  ClientOptions with_certificate = apiserver();
  with_certificate.client_cert = client_cert;
  with_certificate.client_key = client_key;
  Result<HttpConnection> connection = HttpConnection::tls(server().port(), with_certificate);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  Result<HttpResponse> response = connection->post("/virtualmachines-validate", valid_review_);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 200);
}

}  // namespace
}  // namespace vmgate::testing
