#pragma once
// The AdmissionReview v1 codec of `vmgate serve`: request body in, HTTP answer out, with the
// admission pipeline in between. Pure and transport-free: no sockets, clocks, files or logging;
// the transport (server/) routes by path, enforces the body limit (8 MiB; docs/webhook.md,
// "Timeouts and size limits") and logs the ReviewSummary.
//
// Wire contract (docs/webhook.md, "The answer vmgate sends"; kubernetes/apiserver
// pkg/admission/plugin/webhook/request/admissionreview.go VerifyAdmissionResponse):
//   * a usable review is always answered HTTP 200 with an admission.k8s.io/v1 AdmissionReview
//     whose response.uid echoes request.uid; a denial is `allowed: false` plus a Status, so it
//     reaches the user whatever the webhook's failurePolicy;
//   * `patch` (base64 of an RFC 6902 patch) and `patchType: "JSONPatch"` appear together, only
//     from a mutating endpoint and only when the patch is not empty;
//   * a body that is not a usable AdmissionReview (no uid to echo) gets HTTP 400 with a
//     `Status` body; an exception out of the pipeline (a vmgate bug) gets HTTP 500, so the
//     webhook's failurePolicy decides (docs/webhook.md, "How the apiserver treats the answer").
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/admission/pipeline.hpp"

namespace vmgate::webhook {

/// The four admission endpoints (docs/webhook.md, "Endpoints").
enum class Endpoint { vm_mutate, vm_validate, vmi_mutate, vmi_validate };

/// The endpoint served at an HTTP request-target; the query string ("?timeout=10s") is ignored.
/// "/virtualmachines-mutate", "/virtualmachines-validate", "/virtualmachineinstances-mutate",
/// "/virtualmachineinstances-validate", and KubeVirt's own VMI validator paths
/// "/virtualmachineinstances-validate-create" and "-validate-update" (the stage dispatches on
/// the operation), so a KubeVirt webhook configuration can point at vmgate unchanged.
/// Anything else, including a different case or a trailing slash: nullopt.
std::optional<Endpoint> endpoint_for_path(std::string_view target);

/// The canonical path of an endpoint ("/virtualmachines-mutate"): routes, bounded metric labels.
std::string_view path_of(Endpoint endpoint);

/// What the transport sends back: status line code, Content-Type and body.
struct HttpAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

/// The usernames of KubeVirt's own service accounts in the namespace KubeVirt runs in
/// (KubeVirt pkg/virt-api/webhooks/utils.go IsKubeVirtServiceAccount):
/// system:serviceaccount:<ns>:kubevirt-{apiserver,controller,handler,synchronization-controller}.
std::vector<std::string> kubevirt_service_account_usernames(std::string_view kubevirt_namespace);

struct ReviewOptions {
  /// request.userInfo.username values that count as KubeVirt itself
  /// (admission::Request::from_kubevirt_service_account); compared exactly.
  std::vector<std::string> kubevirt_service_accounts = kubevirt_service_account_usernames("kubevirt");
  /// Nesting limit of the body; the object sits three levels below the top.
  json::DecodeLimits limits;
  /// The time of a request (admission::Request::now), asked only for a VMI CREATE mutation.
  /// Unset: no phase-transition time is recorded (golden fixtures stay reproducible).
  std::function<std::string()> now;
};

/// What the transport logs about one review: identifiers and the decision, never the object.
struct ReviewSummary {
  std::string uid;             // request.uid; empty when the body had none
  std::string operation;       // CREATE, UPDATE, DELETE, CONNECT; empty when unknown
  std::string kind;            // request.kind.kind ("VirtualMachine")
  std::string namespace_name;  // request.namespace
  std::string name;            // request.name, else the object's metadata.name (generateName)
  bool dry_run = false;        // request.dryRun
  bool allowed = false;
  /// 200 when allowed; the denial's status.code (400, 422); the HTTP status (400, 500) when the
  /// body was refused.
  int code = 0;
  /// Why the body was refused (HTTP 400/500), as in the answer's message; empty otherwise.
  std::string error;
};

struct ReviewResult {
  HttpAnswer answer;
  ReviewSummary summary;
};

/// Decodes `body` (json::parse_json: strict UTF-8, no duplicate keys, depth-limited, never
/// recursive), checks that it is an AdmissionReview, runs the endpoint's stage and encodes the
/// answer.
///
/// Refused with HTTP 400 and a body
///   {"kind":"Status","apiVersion":"v1","status":"Failure","message":"...","code":400}
/// whose message names the problem: "cannot decode the request body: <json_decode message,
/// with line and column>"; a top level that is not an object; apiVersion other than
/// "admission.k8s.io/v1" or kind other than "AdmissionReview"; request missing; request.uid
/// missing or empty; request.operation not CREATE, UPDATE, DELETE or CONNECT; for CREATE and
/// UPDATE request.object missing, null or not an object; for UPDATE an oldObject that is
/// neither null nor an object; any member read here of the wrong JSON type ("request.dryRun
/// must be a boolean, got a string"). Absent and null members read as Go's zero value.
///
/// Answered HTTP 200 with an AdmissionReview otherwise:
///   * request.resource not group kubevirt.io, version v1 or v1alpha3, resource
///     "virtualmachines" (VM endpoints) or "virtualmachineinstances" (VMI endpoints): denied
///     with code 400 "expect resource to be 'virtualmachines'", as KubeVirt
///     (pkg/util/webhooks/webhooks.go ValidateRequestResource);
///   * DELETE and CONNECT: allowed, no rule runs;
///   * CREATE and UPDATE: Pipeline::mutate or Pipeline::validate with the request's namespace,
///     oldObject (UPDATE) and whether userInfo.username is one of
///     options.kubevirt_service_accounts. The response carries `status` {code, reason (when not
///     empty), message, details.causes[{type, field (when not empty), message}] (when any
///     causes)} when denied, `patch` + `patchType` for a non-empty mutation, `warnings` when any.
///
/// dryRun changes nothing: admission has no side effects. An exception out of the pipeline is
/// answered HTTP 500 (same Status shape, "internal error: ..."); nothing escapes except
/// std::bad_alloc when even that answer cannot be built.
/// Thread-safe: `pipeline` and `cluster` are only read, and may be shared by any number of calls.
ReviewResult review(Endpoint endpoint, std::string_view body, const admission::Pipeline& pipeline,
                    const admission::ClusterView& cluster, const ReviewOptions& options = {});

/// Memory kept from one review to the next (vmgate serve lends one per review from its
/// ReviewScratchPool, the one used last first), so that a review of a usual size
/// allocates its documents from memory already in the cache, not from fresh heap chunks: the
/// body decoded in place, and the first arena chunk that every document of a review (the
/// request, the mutated copy, the patch) allocates from. What a review needs beyond that chunk
/// is allocated for that review and freed at its end.
class ReviewScratch {
 public:
  /// The body's copy, decoded in place (webhook::review replaces its contents).
  std::string& body() { return body_; }
  /// The arena's first chunk, allocated on first use: arena_bytes long, aligned for any value.
  void* arena_chunk();
  static constexpr std::size_t arena_bytes = std::size_t{64} * 1024;
  /// The name-based UUIDs of the connection's last few VM creates.
  admission::defaults::NameBasedUuids& uuids() { return uuids_; }

 private:
  std::string body_;
  std::unique_ptr<std::max_align_t[]> arena_;
  admission::defaults::NameBasedUuids uuids_;
};

/// The same, with memory kept in `scratch` (its contents are replaced).
ReviewResult review(Endpoint endpoint, std::string_view body, const admission::Pipeline& pipeline,
                    const admission::ClusterView& cluster, const ReviewOptions& options, ReviewScratch& scratch);

/// A metav1 Status answer in the shape review() refuses with, for the transport's own refusals
/// (404 unknown path, 405, 413 body too large, 415):
/// {"kind":"Status","apiVersion":"v1","status":"Failure","message":<message>,"code":<status>}.
HttpAnswer status_answer(int status, std::string_view message);

}  // namespace vmgate::webhook
