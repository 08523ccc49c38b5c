// The AdmissionReview v1 codec (server/include/vmgate/server/admission_review.hpp).
//
// Golden fixtures in test/fixtures/webhook: <case>.request.json is the exact body kube-apiserver
// would POST, <case>.response.json the expected AdmissionReview (compared structurally), and for
// a mutation with a patch <case>.admitted.json the object after the patch. Cluster objects come
// from cluster.json. After a deliberate change of the output, regenerate the responses with
//   VMGATE_UPDATE_GOLDEN=1 build/test/check_tests --gtest_filter='AdmissionReview/*'
// and review the diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "support/apply_patch.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/server/admission_review.hpp"

#include <rapidjson/prettywriter.h>

namespace vmgate::webhook {
namespace {

using testing::base64_decode;
using testing::dump;
using testing::json_equals;
using testing::parse;
using testing::text;

const std::string kFixtures = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/webhook/";

// ---------------------------------------------------------------- helpers

std::string pretty(const json::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) {
    throw std::runtime_error("cannot write " + path);
  }
}

bool updating_goldens() {
  const char* flag = std::getenv("VMGATE_UPDATE_GOLDEN");
  return flag != nullptr && std::string_view(flag) == "1";
}

admission::ObjectStore load_cluster() {
  admission::ObjectStore store;
  const json::Document objects = parse(testing::read_file(kFixtures + "cluster.json"));
  for (const json::Value& object : objects.GetArray()) {
    Result<admission::ObjectKind> added = store.add(object);
    if (!added) {
      throw std::runtime_error("cluster.json: " + added.error().message);
    }
  }
  return store;
}

/// One pipeline and cluster for the whole file: both are immutable and shared, as in `serve`.
struct Shared {
  admission::Pipeline pipeline;
  admission::ObjectStore cluster = load_cluster();
};

const Shared& shared() {
  static const Shared instance;
  return instance;
}

HttpAnswer call(Endpoint endpoint, std::string_view body, const ReviewOptions& options = {}) {
  return review(endpoint, body, shared().pipeline, shared().cluster, options).answer;
}

/// The `response` stanza of a 200 answer (fails the test otherwise).
json::Document response_of(const HttpAnswer& answer) {
  EXPECT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.content_type, "application/json");
  json::Document document = parse(answer.body);
  EXPECT_EQ(text(document, "/apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(text(document, "/kind"), "AdmissionReview");
  return document;
}

/// The message of a refused body after checking the whole Status shape and the HTTP status.
std::string refusal(const HttpAnswer& answer, int status = 400) {
  EXPECT_EQ(answer.status, status) << answer.body;
  EXPECT_EQ(answer.content_type, "application/json");
  const json::Document document = parse(answer.body);
  const json::Value* message = json::find(document, "message");
  if (message == nullptr || !message->IsString()) {
    ADD_FAILURE() << "no message in " << answer.body;
    return {};
  }
  const std::string expected_body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":)" +
                                    dump(*message) + R"(,"code":)" + std::to_string(status) + "}";
  EXPECT_EQ(answer.body, expected_body);
  return std::string(json::as_view(*message));
}

/// A minimal valid review around `object` (raw JSON text) for the bad-input tests.
std::string review_body(std::string_view object, std::string_view operation = "CREATE",
                        std::string_view resource = "virtualmachines") {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",)"
         R"("resource":{"group":"kubevirt.io","version":"v1","resource":")" +
         std::string(resource) + R"("},"namespace":"default","operation":")" + std::string(operation) +
         R"(","object":)" + std::string(object) + "}}";
}

constexpr std::string_view kVm =
    R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm-a","namespace":"default"},)"
    R"("spec":{"runStrategy":"Halted","template":{"spec":{"domain":{"devices":{},)"
    R"("resources":{"requests":{"memory":"64Mi"}}}}}}})";

// ---------------------------------------------------------------- endpoints

TEST(WebhookEndpoint, PathsOfTheFourStages) {
  EXPECT_EQ(endpoint_for_path("/virtualmachines-mutate"), Endpoint::vm_mutate);
  EXPECT_EQ(endpoint_for_path("/virtualmachines-validate"), Endpoint::vm_validate);
  EXPECT_EQ(endpoint_for_path("/virtualmachineinstances-mutate"), Endpoint::vmi_mutate);
  EXPECT_EQ(endpoint_for_path("/virtualmachineinstances-validate"), Endpoint::vmi_validate);
  for (Endpoint endpoint : {Endpoint::vm_mutate, Endpoint::vm_validate, Endpoint::vmi_mutate, Endpoint::vmi_validate}) {
    EXPECT_EQ(endpoint_for_path(path_of(endpoint)), endpoint) << path_of(endpoint);
  }
}

TEST(WebhookEndpoint, QueryStringIsIgnored) {
  EXPECT_EQ(endpoint_for_path("/virtualmachines-mutate?timeout=10s"), Endpoint::vm_mutate);
  EXPECT_EQ(endpoint_for_path("/virtualmachineinstances-validate?"), Endpoint::vmi_validate);
}

TEST(WebhookEndpoint, KubeVirtsOwnVmiValidatorPaths) {
  EXPECT_EQ(endpoint_for_path("/virtualmachineinstances-validate-create"), Endpoint::vmi_validate);
  EXPECT_EQ(endpoint_for_path("/virtualmachineinstances-validate-update?timeout=10s"), Endpoint::vmi_validate);
}

TEST(WebhookEndpoint, UnknownPaths) {
  for (std::string_view path : {"", "/", "/healthz", "/metrics", "virtualmachines-mutate", "/virtualmachines-mutate/",
                                "/VirtualMachines-mutate", "/virtualmachines", "/virtualmachines-mutate-create",
                                "/virtualmachines-validate-create", "//virtualmachines-mutate", "/status-validate",
                                "?/virtualmachines-mutate"}) {
    EXPECT_EQ(endpoint_for_path(path), std::nullopt) << path;
  }
}

// ---------------------------------------------------------------- golden fixtures

struct Golden {
  std::string name;  // fixture file stem
  Endpoint endpoint;
};

std::ostream& operator<<(std::ostream& out, const Golden& golden) {
  return out << golden.name;
}

class AdmissionReviewGolden : public ::testing::TestWithParam<Golden> {};

TEST_P(AdmissionReviewGolden, AnswersAsTheFixtureSays) {
  const Golden& golden = GetParam();
  const std::string body = testing::read_file(kFixtures + golden.name + ".request.json");
  const HttpAnswer answer = call(golden.endpoint, body);
  const json::Document actual = response_of(answer);
  const json::Document request = parse(body);
  const json::Value& sent = *json::find_path(request, {"request", "object"});
  const json::Value* patch = json::find_path(actual, {"response", "patch"});

  if (updating_goldens()) {
    write_file(kFixtures + golden.name + ".response.json", pretty(actual));
    if (patch != nullptr) {
      const json::Document operations = parse(base64_decode(json::as_view(*patch)));
      Result<json::Document> admitted = testing::apply_patch(sent, operations);
      ASSERT_TRUE(admitted.ok()) << admitted.error().message;
      write_file(kFixtures + golden.name + ".admitted.json", pretty(*admitted));
    }
    GTEST_SKIP() << "golden files rewritten";
  }

  EXPECT_TRUE(json_equals(actual, testing::read_file(kFixtures + golden.name + ".response.json")));
  EXPECT_EQ(text(actual, "/response/uid"), text(request, "/request/uid"));
  // patch and patchType travel together, and only from a mutating endpoint.
  const json::Value* patch_type = json::find_path(actual, {"response", "patchType"});
  EXPECT_EQ(patch != nullptr, patch_type != nullptr);
  if (golden.endpoint == Endpoint::vm_validate || golden.endpoint == Endpoint::vmi_validate) {
    EXPECT_EQ(patch, nullptr);
  }
  if (patch == nullptr) {
    return;
  }
  EXPECT_EQ(text(actual, "/response/patchType"), "JSONPatch");
  const json::Document operations = parse(base64_decode(json::as_view(*patch)));
  ASSERT_TRUE(operations.IsArray());
  ASSERT_FALSE(operations.Empty());
  Result<json::Document> admitted = testing::apply_patch(sent, operations);
  ASSERT_TRUE(admitted.ok()) << admitted.error().message;
  EXPECT_TRUE(json_equals(*admitted, testing::read_file(kFixtures + golden.name + ".admitted.json")));

  // Idempotent: the admitted object sent again needs no patch.
  json::Document again;
  again.CopyFrom(request, again.GetAllocator());
  json::set(*json::find(again, "request"), "object", json::copy(*admitted, again.GetAllocator()), again.GetAllocator());
  const json::Document second = response_of(call(golden.endpoint, dump(again)));
  EXPECT_EQ(text(second, "/response/allowed"), "true");
  EXPECT_EQ(json::find_path(second, {"response", "patch"}), nullptr) << dump(second);
  EXPECT_EQ(json::find_path(second, {"response", "patchType"}), nullptr);
}

INSTANTIATE_TEST_SUITE_P(AdmissionReview, AdmissionReviewGolden,
                         ::testing::Values(Golden{"vm-mutate-create", Endpoint::vm_mutate},
                                           Golden{"vm-validate-conflict", Endpoint::vm_validate},
                                           Golden{"vm-validate-missing-instancetype", Endpoint::vm_validate},
                                           Golden{"vm-validate-delete", Endpoint::vm_validate},
                                           Golden{"vmi-mutate-create", Endpoint::vmi_mutate},
                                           Golden{"vmi-mutate-update-status", Endpoint::vmi_mutate},
                                           Golden{"vmi-mutate-update-by-kubevirt", Endpoint::vmi_mutate},
                                           Golden{"vmi-validate-hugepages", Endpoint::vmi_validate},
                                           Golden{"vmi-validate-update-spec", Endpoint::vmi_validate}),
                         [](const ::testing::TestParamInfo<Golden>& param_info) {
                           std::string name = param_info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---------------------------------------------------------------- response shape

TEST(AdmissionReviewResponse, AllowedMutationWithoutChangesCarriesNoPatchNorStatus) {
  // The VMI mutator changes nothing on an UPDATE that leaves status alone.
  const std::string vmi = R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"v"},)"
                          R"("spec":{"domain":{"devices":{}}},"status":{"phase":"Running"}})";
  std::string body = review_body(vmi, "UPDATE", "virtualmachineinstances");
  body.insert(body.size() - 2, R"(,"oldObject":)" + vmi);
  const json::Document document = response_of(call(Endpoint::vmi_mutate, body));
  EXPECT_TRUE(json_equals(document, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                                        "response":{"uid":"u-1","allowed":true}})"));
}

TEST(AdmissionReviewResponse, UidIsEchoedByteForByte) {
  const std::string body = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)"
                           R"("uid":"a\"b\\c\u0000d\u00e9","operation":"DELETE",)"
                           R"("resource":{"group":"kubevirt.io","version":"v1","resource":"virtualmachines"}}})";
  const json::Document document = response_of(call(Endpoint::vm_validate, body));
  const json::Value* uid = json::find_path(document, {"response", "uid"});
  ASSERT_NE(uid, nullptr);
  EXPECT_EQ(json::as_view(*uid), std::string_view("a\"b\\c\0d\xc3\xa9", 9));
}

// The answer's string writer copies runs of plain characters 16 bytes at a time: every character
// that needs an escape is escaped wherever it sits in the run, the rest is copied unchanged.
TEST(AdmissionReviewResponse, UidWithEachSpecialCharacterAtEachOffsetIsEchoedAsValidJson) {
  std::vector<std::string> specials;
  for (int c = 0x01; c < 0x20; ++c) {
    specials.emplace_back(1, static_cast<char>(c));
  }
  specials.emplace_back("\"");
  specials.emplace_back("\\");
  specials.emplace_back("\x7f");
  specials.emplace_back("\xc3\xa9");  // é
  for (const std::string& special : specials) {
    for (std::size_t offset = 0; offset < 40; ++offset) {
      const std::string uid = std::string(offset, 'x') + special + std::string(offset % 19, 'y');
      // parse(): a length-bounded read (RapidJSON's SIMD scan of a NUL-terminated literal reads
      // past its end).
      json::Document request = parse(
          R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)"
          R"("operation":"DELETE","resource":{"group":"kubevirt.io","version":"v1","resource":"virtualmachines"}}})");
      json::set(*json::find(request, "request"), "uid", json::make_string(uid, request.GetAllocator()),
                request.GetAllocator());
      const HttpAnswer answer = call(Endpoint::vm_validate, dump(request));
      // The strict decoder refuses a raw control character in a string: the escapes are all there.
      ASSERT_TRUE(json::parse_json(answer.body).ok()) << answer.body;
      const json::Document document = response_of(answer);
      const json::Value* echoed = json::find_path(document, {"response", "uid"});
      ASSERT_NE(echoed, nullptr) << answer.body;
      EXPECT_EQ(json::as_view(*echoed), uid) << "special " << static_cast<int>(special[0]) << " at " << offset;
    }
  }
}

TEST(AdmissionReviewResponse, DeleteAndConnectAreAllowedWithoutRunningRules) {
  // The object would be denied by the rules (not even a VM); DELETE and CONNECT never read it.
  for (std::string_view operation : {"DELETE", "CONNECT"}) {
    const std::string body = review_body(R"({"spec":{"template":42}})", operation);
    for (Endpoint endpoint : {Endpoint::vm_mutate, Endpoint::vm_validate}) {
      const json::Document document = response_of(call(endpoint, body));
      EXPECT_TRUE(json_equals(document, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                                            "response":{"uid":"u-1","allowed":true}})"))
          << operation;
    }
  }
}

TEST(AdmissionReviewResponse, WrongResourceIsADecided400Denial) {
  const std::string expected_vm = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{
      "uid":"u-1","allowed":false,"status":{"code":400,"message":"expect resource to be 'virtualmachines'"}}})";
  EXPECT_TRUE(json_equals(response_of(call(Endpoint::vm_mutate, review_body(kVm, "CREATE", "pods"))), expected_vm));
  EXPECT_TRUE(json_equals(
      response_of(call(Endpoint::vm_validate, review_body(kVm, "CREATE", "virtualmachineinstances"))), expected_vm));
  // Also DELETE: KubeVirt checks the resource first.
  EXPECT_TRUE(
      json_equals(response_of(call(Endpoint::vm_validate, review_body("null", "DELETE", "pods"))), expected_vm));

  const std::string expected_vmi = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{
      "uid":"u-1","allowed":false,"status":{"code":400,"message":"expect resource to be 'virtualmachineinstances'"}}})";
  EXPECT_TRUE(json_equals(response_of(call(Endpoint::vmi_mutate, review_body(kVm))), expected_vmi));
  EXPECT_TRUE(json_equals(response_of(call(Endpoint::vmi_validate, review_body(kVm))), expected_vmi));

  // Group, version and a missing resource.
  std::string body = review_body(kVm);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {R"("group":"kubevirt.io")", R"("group":"pool.kubevirt.io")"},
           {R"("version":"v1")", R"("version":"v1beta1")"},
           {R"("resource":{"group":"kubevirt.io","version":"v1","resource":"virtualmachines"},)", ""}}) {
    std::string changed = body;
    changed.replace(changed.find(from), from.size(), to);
    EXPECT_TRUE(json_equals(response_of(call(Endpoint::vm_validate, changed)), expected_vm)) << changed;
  }
}

TEST(AdmissionReviewResponse, V1alpha3IsAccepted) {
  std::string body = review_body(kVm);
  body.replace(body.find(R"("version":"v1")"), 14, R"("version":"v1alpha3")");
  const json::Document document = response_of(call(Endpoint::vm_validate, body));
  EXPECT_EQ(text(document, "/response/allowed"), "true") << dump(document);
}

TEST(AdmissionReviewResponse, CauseWithoutFieldOmitsIt) {
  // vmi-update-admitter.go's cause has no field (Go's omitempty drops it).
  const json::Document document = response_of(
      call(Endpoint::vmi_validate, testing::read_file(kFixtures + "vmi-validate-update-spec.request.json")));
  EXPECT_TRUE(json_equals(json::find_path(document, {"response", "status", "details", "causes"}),
                          R"([{"type":"FieldValueNotSupported","message":"update of VMI object is restricted"}])"));
}

// ---------------------------------------------------------------- service accounts

TEST(AdmissionReviewUserInfo, KubeVirtServiceAccountsAreConfigurable) {
  EXPECT_EQ(kubevirt_service_account_usernames("openshift-cnv"),
            (std::vector<std::string>{"system:serviceaccount:openshift-cnv:kubevirt-apiserver",
                                      "system:serviceaccount:openshift-cnv:kubevirt-controller",
                                      "system:serviceaccount:openshift-cnv:kubevirt-handler",
                                      "system:serviceaccount:openshift-cnv:kubevirt-synchronization-controller"}));
  // The fixture's handler runs in namespace kubevirt: a status change by it stands by default,
  // but not when KubeVirt is configured to run elsewhere.
  const std::string body = testing::read_file(kFixtures + "vmi-mutate-update-by-kubevirt.request.json");
  EXPECT_EQ(json::find_path(response_of(call(Endpoint::vmi_mutate, body)), {"response", "patch"}), nullptr);
  ReviewOptions elsewhere;
  elsewhere.kubevirt_service_accounts = kubevirt_service_account_usernames("openshift-cnv");
  EXPECT_NE(json::find_path(response_of(call(Endpoint::vmi_mutate, body, elsewhere)), {"response", "patch"}), nullptr);
  // Nobody is KubeVirt with an empty set.
  EXPECT_NE(
      json::find_path(response_of(call(Endpoint::vmi_mutate, body, ReviewOptions{{}, {}, {}})), {"response", "patch"}),
      nullptr);
}

// No launcher identity is trusted: the status change of any account but KubeVirt's is reverted,
// whatever its name or namespace (the account the launcher pods once ran as included).
TEST(AdmissionReviewUserInfo, OnlyKubeVirtsAccountsKeepAStatusChange) {
  // The fixture is a status change of a VMI in namespace team-a, by kubevirt-handler.
  const std::string by_handler = testing::read_file(kFixtures + "vmi-mutate-update-by-kubevirt.request.json");
  const auto as_user = [&by_handler](const std::string& username) {
    std::string body = by_handler;
    const std::string handler = "system:serviceaccount:kubevirt:kubevirt-handler";
    body.replace(body.find(handler), handler.size(), username);
    return body;
  };
  const auto reverted = [](const std::string& body) {
    return json::find_path(response_of(call(Endpoint::vmi_mutate, body, ReviewOptions{})), {"response", "patch"}) !=
           nullptr;
  };
  EXPECT_FALSE(reverted(by_handler));
  for (const char* user : {"system:serviceaccount:team-a:vmgate-launcher", "system:serviceaccount:team-a:default",
                           "system:serviceaccount:team-b:kubevirt-handler", "kubevirt-handler", "team-a:vm-launcher"}) {
    EXPECT_TRUE(reverted(as_user(user))) << user;
  }
}

TEST(AdmissionReviewResponse, VmiCreateAsksTheClockOnly) {
  int asked = 0;
  ReviewOptions options;
  options.now = [&asked] {
    ++asked;
    return std::string("2026-11-22T23:10:51Z");
  };
  const std::string vmi = testing::read_file(kFixtures + "vmi-mutate-create.request.json");
  const json::Document response = response_of(call(Endpoint::vmi_mutate, vmi, options));
  const json::Value* patch = json::find_path(response, {"response", "patch"});
  ASSERT_NE(patch, nullptr);
  EXPECT_NE(base64_decode(json::as_view(*patch)).find(R"("phaseTransitionTimestamp":"2026-11-22T23:10:51Z")"),
            std::string::npos);
  EXPECT_EQ(asked, 1);
  (void)call(Endpoint::vm_mutate, testing::read_file(kFixtures + "vm-mutate-create.request.json"), options);
  EXPECT_EQ(asked, 1);
}

// ---------------------------------------------------------------- summary

TEST(AdmissionReviewSummary, DecidedReview) {
  const std::string body = testing::read_file(kFixtures + "vm-mutate-create.request.json");
  const ReviewResult result = review(Endpoint::vm_mutate, body, shared().pipeline, shared().cluster);
  EXPECT_EQ(result.answer.status, 200);
  const ReviewSummary& summary = result.summary;
  EXPECT_EQ(summary.uid, "0b6e3c1d-2f4a-4b8e-9c7d-1a2b3c4d5e6f");
  EXPECT_EQ(summary.operation, "CREATE");
  EXPECT_EQ(summary.kind, "VirtualMachine");
  EXPECT_EQ(summary.namespace_name, "team-a");
  EXPECT_EQ(summary.name, "vm1");
  EXPECT_TRUE(summary.dry_run);
  EXPECT_TRUE(summary.allowed);
  EXPECT_EQ(summary.code, 200);
  EXPECT_EQ(summary.error, "");
}

TEST(AdmissionReviewSummary, DenialAndGeneratedName) {
  // No request.name (generateName): the summary falls back to the object's metadata.name.
  const ReviewResult denied =
      review(Endpoint::vm_validate, testing::read_file(kFixtures + "vm-validate-conflict.request.json"),
             shared().pipeline, shared().cluster);
  EXPECT_FALSE(denied.summary.allowed);
  EXPECT_EQ(denied.summary.code, 422);
  EXPECT_FALSE(denied.summary.dry_run);

  const ReviewResult unnamed = review(Endpoint::vm_validate, review_body(kVm), shared().pipeline, shared().cluster);
  EXPECT_EQ(unnamed.summary.name, "vm-a");
  EXPECT_EQ(unnamed.summary.kind, "");
  EXPECT_TRUE(unnamed.summary.allowed);

  const ReviewResult wrong =
      review(Endpoint::vm_validate, review_body(kVm, "CREATE", "pods"), shared().pipeline, shared().cluster);
  EXPECT_FALSE(wrong.summary.allowed);
  EXPECT_EQ(wrong.summary.code, 400);
  EXPECT_EQ(wrong.summary.error, "");
}

TEST(AdmissionReviewSummary, RefusedBody) {
  const ReviewResult result =
      review(Endpoint::vm_validate, R"({"apiVersion":"admission.k8s.io/v1"})", shared().pipeline, shared().cluster);
  EXPECT_EQ(result.answer.status, 400);
  EXPECT_EQ(result.summary.uid, "");
  EXPECT_FALSE(result.summary.allowed);
  EXPECT_EQ(result.summary.code, 400);
  EXPECT_EQ(result.summary.error, R"(kind is missing, expected "AdmissionReview")");
}

// ---------------------------------------------------------------- unusable bodies

TEST(AdmissionReviewRefused, NotJson) {
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, "hello")),
            "cannot decode the request body: Invalid value (line 1, column 1)");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, "")), "cannot decode the request body: empty input");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, "{\"apiVersion\":\n  \"admission.k8s.io/v1\",}")),
            "cannot decode the request body: Missing a name for object member (line 2, column 25)");
  EXPECT_EQ(
      refusal(call(Endpoint::vm_mutate, R"({"apiVersion":"admission.k8s.io/v1"} {})")),
      "cannot decode the request body: The document root must not be followed by other values (line 1, column 38)");
}

TEST(AdmissionReviewRefused, NotAnAdmissionReview) {
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, "[]")),
            "the body is not an AdmissionReview: expected a JSON object, got an array");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, R"("AdmissionReview")")),
            "the body is not an AdmissionReview: expected a JSON object, got a string");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, kVm)),
            R"(apiVersion is "kubevirt.io/v1", expected "admission.k8s.io/v1")");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, "{}")), R"(apiVersion is missing, expected "admission.k8s.io/v1")");
}

TEST(AdmissionReviewRefused, WrongApiVersionOrKind) {
  std::string body = review_body(kVm);
  const auto replaced = [&body](std::string_view from, std::string_view to) {
    std::string changed = body;
    changed.replace(changed.find(from), from.size(), to);
    return changed;
  };
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, replaced("admission.k8s.io/v1", "admission.k8s.io/v1beta1"))),
            R"(apiVersion is "admission.k8s.io/v1beta1", expected "admission.k8s.io/v1")");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, replaced(R"("admission.k8s.io/v1")", "1"))),
            "apiVersion must be a string, got a number");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, replaced(R"("kind":"AdmissionReview")", R"("kind":"Status")"))),
            R"(kind is "Status", expected "AdmissionReview")");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, replaced(R"("kind":"AdmissionReview",)", ""))),
            R"(kind is missing, expected "AdmissionReview")");
  // A hostile value is quoted, escaped and cut.
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, replaced("AdmissionReview", "\\n" + std::string(100, 'x')))),
            "kind is \"\\n" + std::string(63, 'x') + "...\", expected \"AdmissionReview\"");
}

TEST(AdmissionReviewRefused, MissingOrMistypedRequestMembers) {
  constexpr std::string_view head = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview")";
  const auto with_request = [&](std::string_view request) {
    return std::string(head) + R"(,"request":)" + std::string(request) + "}";
  };
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, std::string(head) + "}")), "request is missing");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, with_request("null"))), "request is missing");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, with_request("[]"))), "request must be an object, got an array");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, with_request(R"({"operation":"CREATE","object":{}})"))),
            "request.uid is missing");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, with_request(R"({"uid":"","operation":"CREATE","object":{}})"))),
            "request.uid is missing");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, with_request(R"({"uid":7,"operation":"CREATE","object":{}})"))),
            "request.uid must be a string, got a number");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, with_request(R"({"uid":"u","object":{}})"))),
            "request.operation is missing");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, with_request(R"({"uid":"u","operation":"PATCH","object":{}})"))),
            R"(request.operation is "PATCH", expected CREATE, UPDATE, DELETE or CONNECT)");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate,
                         with_request(R"({"uid":"u","operation":"CREATE","namespace":{},"object":{}})"))),
            "request.namespace must be a string, got an object");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate,
                         with_request(R"({"uid":"u","operation":"CREATE","dryRun":"true","object":{}})"))),
            "request.dryRun must be a boolean, got a string");
  EXPECT_EQ(
      refusal(call(Endpoint::vm_mutate,
                   with_request(R"({"uid":"u","operation":"CREATE","userInfo":{"username":["x"]},"object":{}})"))),
      "request.userInfo.username must be a string, got an array");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate,
                         with_request(R"({"uid":"u","operation":"CREATE","resource":"virtualmachines","object":{}})"))),
            "request.resource must be an object, got a string");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate,
                         with_request(R"({"uid":"u","operation":"CREATE","resource":{"version":1},"object":{}})"))),
            "request.resource.version must be a string, got a number");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate,
                         with_request(R"({"uid":"u","operation":"CREATE","kind":{"kind":true},"object":{}})"))),
            "request.kind.kind must be a string, got a boolean");
}

TEST(AdmissionReviewRefused, MissingOrNonObjectObject) {
  for (Endpoint endpoint : {Endpoint::vm_mutate, Endpoint::vm_validate, Endpoint::vmi_mutate, Endpoint::vmi_validate}) {
    for (std::string_view operation : {"CREATE", "UPDATE"}) {
      SCOPED_TRACE(std::string(path_of(endpoint)) + " " + std::string(operation));
      std::string absent = review_body("null", operation);
      EXPECT_EQ(refusal(call(endpoint, absent)), "request.object is missing");
      absent.erase(absent.find(R"(,"object":null)"), 14);
      EXPECT_EQ(refusal(call(endpoint, absent)), "request.object is missing");
      EXPECT_EQ(refusal(call(endpoint, review_body("[]", operation))),
                "request.object must be an object, got an array");
      EXPECT_EQ(refusal(call(endpoint, review_body(R"("vm")", operation))),
                "request.object must be an object, got a string");
      EXPECT_EQ(refusal(call(endpoint, review_body("3", operation))), "request.object must be an object, got a number");
    }
  }
  // oldObject: only UPDATE reads it; null or absent is fine there.
  std::string update = review_body(kVm, "UPDATE");
  update.insert(update.size() - 2, R"(,"oldObject":"before")");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, update)), "request.oldObject must be an object, got a string");
  std::string create = review_body(kVm, "CREATE");
  create.insert(create.size() - 2, R"(,"oldObject":"before")");
  EXPECT_EQ(response_of(call(Endpoint::vm_validate, create)).HasMember("response"), true);
}

TEST(AdmissionReviewRefused, HundredThousandDeepNesting) {
  const std::string prefix =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":)";
  const std::string body = prefix + std::string(100000, '[') + std::string(100000, ']') + "}}";
  // The top-level object and request are two levels, so the 999th '[' is one too many.
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, body)),
            "cannot decode the request body: nesting deeper than 1000 levels (line 1, column " +
                std::to_string(prefix.size() + 999) + ")");
}

TEST(AdmissionReviewRefused, DuplicateKeys) {
  // The column is where the repeated key starts.
  const std::string twice =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","uid":"b"}})";
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, twice)),
            R"(cannot decode the request body: duplicate key "uid" in object at request (line 1, column )" +
                std::to_string(twice.find(R"("uid":"b")") + 1) + ")");
  // Inside the object too: the apiserver (last wins) and a rule (first wins) would judge different objects.
  const std::string nested = review_body(R"({"spec":{"running":true,"running":false}})");
  EXPECT_EQ(
      refusal(call(Endpoint::vm_mutate, nested)),
      R"(cannot decode the request body: duplicate key "running" in object at request.object.spec (line 1, column )" +
          std::to_string(nested.find(R"("running":false)") + 1) + ")");
}

TEST(AdmissionReviewRefused, InvalidUtf8) {
  const std::string body = review_body("{\"metadata\":{\"name\":\"vm-\xff\"}}");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, body)),
            "cannot decode the request body: Invalid encoding in string (line 1, column " +
                std::to_string(body.find('\xff') + 1) + ")");
  // A lone surrogate escape decodes to no Unicode scalar value either.
  const std::string surrogate = review_body(R"({"metadata":{"name":"\udc00"}})");
  EXPECT_EQ(refusal(call(Endpoint::vm_mutate, surrogate)),
            "cannot decode the request body: The surrogate pair in string is invalid (line 1, column " +
                std::to_string(surrogate.find(R"("\udc00")") + 1) + ")");
}

TEST(AdmissionReviewRefused, NineMebibyteBodyIsDecided) {
  // The transport refuses bodies over 8 MiB with 413 before the codec sees them; the codec
  // itself copes with one: a 9 MiB annotation is admitted like any other.
  std::string object(kVm);
  const std::string annotation = R"("annotations":{"big":")" + std::string(9U << 20U, 'a') + R"("},)";
  object.insert(object.find(R"("name":"vm-a")"), annotation);
  const std::string body = review_body(object);
  ASSERT_GT(body.size(), 9U << 20U);
  const ReviewResult result = review(Endpoint::vm_validate, body, shared().pipeline, shared().cluster);
  EXPECT_EQ(result.answer.status, 200);
  EXPECT_TRUE(result.summary.allowed);
  EXPECT_LT(result.answer.body.size(), 1024U);  // the answer never echoes the object
}

// ---------------------------------------------------------------- robustness

class ThrowingCluster final : public admission::ClusterView {
 public:
  [[nodiscard]] const json::Value* find(admission::ObjectKind, std::string_view, std::string_view) const override {
    throw std::runtime_error("cluster cache exploded");
  }
  [[nodiscard]] const admission::ClusterConfig& config() const override { return config_; }

 private:
  admission::ClusterConfig config_;
};

TEST(AdmissionReviewRobustness, ExceptionFromThePipelineIsAnHttp500) {
  const ThrowingCluster cluster;
  const ReviewResult result =
      review(Endpoint::vm_validate, testing::read_file(kFixtures + "vm-validate-conflict.request.json"),
             shared().pipeline, cluster);
  EXPECT_EQ(refusal(result.answer, 500), "internal error: cluster cache exploded");
  EXPECT_EQ(result.summary.uid, "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d");
  EXPECT_EQ(result.summary.code, 500);
  EXPECT_FALSE(result.summary.allowed);
}

TEST(AdmissionReviewRobustness, ConcurrentReviewsShareOnePipelineAndCluster) {
  const std::string body = testing::read_file(kFixtures + "vm-mutate-create.request.json");
  const std::string expected = call(Endpoint::vm_mutate, body).body;
  std::vector<std::string> answers(4);
  std::vector<std::thread> threads;
  threads.reserve(answers.size());
  for (std::string& answer : answers) {
    threads.emplace_back([&answer, &body] {
      for (int i = 0; i < 20; ++i) {
        answer = call(Endpoint::vm_mutate, body).body;
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  for (const std::string& answer : answers) {
    EXPECT_EQ(answer, expected);
  }
}

TEST(AdmissionReviewRobustness, OneScratchAcrossReviewsAnswersAsAFreshReview) {
  // One ReviewScratch serves review after review: whatever came before (a larger
  // body, documents that outgrew the arena's first chunk, a refusal), each answer is the one a
  // review with nothing kept gives.
  std::string labels;
  for (int i = 0; i < 4000; ++i) {  // the request, its copy and the patch: far beyond one chunk
    labels += (i == 0 ? "" : ",") + std::string(R"("label-)") + std::to_string(i) + R"(":"value")";
  }
  std::string labelled(kVm);
  labelled.insert(labelled.find(R"("name":"vm-a")"), R"("labels":{)" + labels + "},");
  const std::vector<std::pair<Endpoint, std::string>> requests = {
      {Endpoint::vm_mutate, testing::read_file(kFixtures + "vm-mutate-create.request.json")},
      {Endpoint::vm_mutate, review_body(labelled)},
      {Endpoint::vm_validate, testing::read_file(kFixtures + "vm-validate-conflict.request.json")},
      {Endpoint::vm_mutate, "{\"not json"},
      {Endpoint::vmi_mutate, testing::read_file(kFixtures + "vmi-mutate-create.request.json")},
      {Endpoint::vm_mutate, review_body(kVm)},
  };
  ASSERT_GT(requests[1].second.size(), ReviewScratch::arena_bytes);
  ReviewScratch scratch;
  const ReviewOptions options;
  for (int round = 0; round < 2; ++round) {
    for (const auto& [endpoint, body] : requests) {
      const HttpAnswer fresh = call(endpoint, body);
      const HttpAnswer kept = review(endpoint, body, shared().pipeline, shared().cluster, options, scratch).answer;
      EXPECT_EQ(kept.status, fresh.status);
      EXPECT_EQ(kept.body, fresh.body);
    }
  }
  const HttpAnswer labelled_answer = call(Endpoint::vm_mutate, review_body(labelled));
  EXPECT_NE(json::find_path(response_of(labelled_answer), {"response", "patch"}), nullptr);  // a copy was diffed
}

TEST(AdmissionReviewRobustness, StatusAnswerForTheTransport) {
  const HttpAnswer answer = status_answer(413, "request body larger than 8388608 bytes");
  EXPECT_EQ(answer.status, 413);
  EXPECT_EQ(answer.content_type, "application/json");
  EXPECT_EQ(answer.body, R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                         R"("message":"request body larger than 8388608 bytes","code":413})");
}

}  // namespace
}  // namespace vmgate::webhook
