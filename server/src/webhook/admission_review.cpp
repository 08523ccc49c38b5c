// AdmissionReview v1 codec. Reads: apiVersion, kind, request.{uid, kind.kind, resource.{group,
// version, resource}, name, namespace, operation, userInfo.username, object, oldObject, dryRun}.
// Follows KubeVirt pkg/util/webhooks/webhooks.go (ValidateRequestResource, ToAdmissionResponse,
// ToAdmissionResponseError) and k8s.io/api/admission/v1 types.go for the response.
#include "vmgate/server/admission_review.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <span>
#include <utility>

#include "vmgate/common/base64.hpp"
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/json_field.hpp"
#include "vmgate/common/json_text.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::webhook {

namespace {

constexpr std::string_view kApiVersion = "admission.k8s.io/v1";
constexpr std::string_view kKind = "AdmissionReview";

// ---------------------------------------------------------------- writing

// A value from the request as a JSON string literal for a message: quotes and control
// characters escaped, at most 64 bytes (cut on a UTF-8 boundary) so that an error never echoes
// a large part of the body.
std::string quoted(std::string_view text) {
  constexpr std::size_t max_bytes = 64;
  bool cut = false;
  if (text.size() > max_bytes) {
    std::size_t end = max_bytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
      --end;  // text[end] continues a multi-byte sequence: cut before its lead byte
    }
    text = text.substr(0, end);
    cut = true;
  }
  std::string out;
  json::append_quoted(out, text);
  if (cut) {
    out.insert(out.size() - 1, "...");
  }
  return out;
}

std::string encode_status(int code, std::string_view message) {
  std::string out;
  out.reserve(96 + message.size());
  json::ObjectText status(out);
  status.text("kind", "Status");
  status.text("apiVersion", "v1");
  status.text("status", "Failure");
  status.text("message", message);
  status.integer("code", code);
  status.close();
  return out;
}

// k8s.io/api/admission/v1 AdmissionResponse, members in the Go struct's order; metav1.Status
// and StatusCause members that Go marks omitempty are left out when empty. `patch` (JSON text,
// nullptr when there is none) is written base64-encoded.
std::string encode_review(std::string_view uid, const admission::Verdict& verdict, const std::string* patch) {
  const std::size_t patch_size = patch != nullptr ? common::base64_encoded_size(patch->size()) : 0;
  std::string out;
  out.reserve(160 + uid.size() + patch_size + verdict.message.size());
  json::ObjectText review(out);
  review.text("apiVersion", kApiVersion);
  review.text("kind", kKind);
  json::ObjectText response(review.key("response"));
  response.text("uid", uid);
  response.boolean("allowed", verdict.allowed);
  if (!verdict.allowed) {
    json::ObjectText status(response.key("status"));
    status.integer("code", verdict.code);
    if (!verdict.reason.empty()) {
      status.text("reason", verdict.reason);
    }
    status.text("message", verdict.message);
    if (!verdict.causes.empty()) {
      json::ObjectText details(status.key("details"));
      std::string& causes = details.key("causes");
      causes += '[';
      for (const admission::FieldError& cause : verdict.causes) {
        if (&cause != &verdict.causes.front()) {
          causes += ',';
        }
        json::ObjectText item(causes);
        if (cause.type != admission::CauseType::none) {  // metav1.StatusCause: omitempty
          item.text("type", admission::to_string(cause.type));
        }
        if (!cause.field.empty()) {
          item.text("field", cause.field);
        }
        item.text("message", cause.message);
        item.close();
      }
      causes += ']';
      details.close();
    }
    status.close();
  }
  if (patch != nullptr) {
    // Base64 needs no escaping: encoded straight into the answer.
    std::string& text = response.key("patch");
    text += '"';
    const std::size_t at = text.size();
    text.resize(at + patch_size);
    common::base64_encode_into(*patch, std::span<char>(text.data() + at, patch_size));
    text += '"';
    response.text("patchType", "JSONPatch");
  }
  if (!verdict.warnings.empty()) {
    std::string& warnings = response.key("warnings");
    warnings += '[';
    for (const std::string& warning : verdict.warnings) {
      if (&warning != &verdict.warnings.front()) {
        warnings += ',';
      }
      json::append_quoted(warnings, warning);
    }
    warnings += ']';
  }
  response.close();
  review.close();
  return out;
}

// ---------------------------------------------------------------- reading

// The members of request that the codec uses; views into the parsed body.
struct ReviewRequest {
  std::string_view uid;
  std::string_view operation;
  std::string_view kind;
  std::string_view namespace_name;
  std::string_view name;
  std::string_view username;
  bool dry_run = false;
  std::string_view resource_group;
  std::string_view resource_version;
  std::string_view resource;
  const json::Value* object = nullptr;      // CREATE and UPDATE
  const json::Value* old_object = nullptr;  // UPDATE, when sent
};

// Go's encoding/json decodes an absent member and null alike to the zero value; any other type
// than the field's fails the whole decode, so it is an unusable review here too.
Error wrong_type(std::string_view path, const json::WrongType& wrong) {
  return Error{std::string(path) + " must be " + std::string(json::describe(wrong.expected)) + ", got " +
               std::string(wrong.found)};
}

Result<std::string_view> string_member(const json::Value& object, std::string_view key, std::string_view path) {
  json::Field<std::string_view> value = json::read_string(object, key);
  if (!value) {
    return wrong_type(path, value.error());
  }
  return value->value_or(std::string_view{});
}

// nullptr when absent or null.
Result<const json::Value*> object_member(const json::Value& object, std::string_view key, std::string_view path) {
  json::Field<const json::Value*> value = json::read_object(object, key);
  if (!value) {
    return wrong_type(path, value.error());
  }
  return value->value_or(nullptr);
}

Result<bool> bool_member(const json::Value& object, std::string_view key, std::string_view path) {
  json::Field<bool> value = json::read_bool(object, key);
  if (!value) {
    return wrong_type(path, value.error());
  }
  return value->value_or(false);
}

std::optional<Error> expect_constant(const json::Value& review, std::string_view key, std::string_view expected) {
  Result<std::string_view> value = string_member(review, key, key);
  if (!value) {
    return value.error();
  }
  if (value->empty()) {
    return Error{std::string(key) + " is missing, expected " + quoted(expected)};
  }
  if (*value != expected) {
    return Error{std::string(key) + " is " + quoted(*value) + ", expected " + quoted(expected)};
  }
  return std::nullopt;
}

// Reads the string members of `object` into `fields` (path prefix `base`); the first
// wrongly-typed one is the error.
struct StringField {
  std::string_view key;
  std::string_view* target;
};

std::optional<Error> read_strings(const json::Value& object, std::string_view base,
                                  std::initializer_list<StringField> fields) {
  for (const StringField& field : fields) {
    // The field's path is spelt out only for the error: most reviews have none.
    json::Field<std::string_view> value = json::read_string(object, field.key);
    if (!value) {
      return wrong_type(std::string(base) + "." + std::string(field.key), value.error());
    }
    *field.target = value->value_or(std::string_view{});
  }
  return std::nullopt;
}

bool known_operation(std::string_view operation) {
  return operation == "CREATE" || operation == "UPDATE" || operation == "DELETE" || operation == "CONNECT";
}

Result<ReviewRequest> read_request(const json::Value& review) {
  if (!review.IsObject()) {
    return Error{"the body is not an AdmissionReview: expected a JSON object, got " +
                 std::string(json::type_name(review))};
  }
  if (std::optional<Error> error = expect_constant(review, "apiVersion", kApiVersion)) {
    return *error;
  }
  if (std::optional<Error> error = expect_constant(review, "kind", kKind)) {
    return *error;
  }
  Result<const json::Value*> found = object_member(review, "request", "request");
  if (!found) {
    return found.error();
  }
  if (*found == nullptr) {
    return Error{"request is missing"};
  }
  const json::Value& request = **found;

  ReviewRequest out;
  if (std::optional<Error> error = read_strings(request, "request",
                                                {{"uid", &out.uid},
                                                 {"operation", &out.operation},
                                                 {"namespace", &out.namespace_name},
                                                 {"name", &out.name}})) {
    return *error;
  }
  if (out.uid.empty()) {
    return Error{"request.uid is missing"};
  }
  if (out.operation.empty()) {
    return Error{"request.operation is missing"};
  }
  if (!known_operation(out.operation)) {
    return Error{"request.operation is " + quoted(out.operation) + ", expected CREATE, UPDATE, DELETE or CONNECT"};
  }
  Result<bool> dry_run = bool_member(request, "dryRun", "request.dryRun");
  if (!dry_run) {
    return dry_run.error();
  }
  out.dry_run = *dry_run;

  Result<const json::Value*> kind = object_member(request, "kind", "request.kind");
  if (!kind) {
    return kind.error();
  }
  if (*kind != nullptr) {
    if (std::optional<Error> error = read_strings(**kind, "request.kind", {{"kind", &out.kind}})) {
      return *error;
    }
  }
  Result<const json::Value*> resource = object_member(request, "resource", "request.resource");
  if (!resource) {
    return resource.error();
  }
  if (*resource != nullptr) {
    if (std::optional<Error> error = read_strings(
            **resource, "request.resource",
            {{"group", &out.resource_group}, {"version", &out.resource_version}, {"resource", &out.resource}})) {
      return *error;
    }
  }
  Result<const json::Value*> user = object_member(request, "userInfo", "request.userInfo");
  if (!user) {
    return user.error();
  }
  if (*user != nullptr) {
    if (std::optional<Error> error = read_strings(**user, "request.userInfo", {{"username", &out.username}})) {
      return *error;
    }
  }

  // DELETE carries no object and CONNECT an options object: neither is read.
  if (out.operation == "CREATE" || out.operation == "UPDATE") {
    Result<const json::Value*> object = object_member(request, "object", "request.object");
    if (!object) {
      return object.error();
    }
    if (*object == nullptr) {
      return Error{"request.object is missing"};
    }
    out.object = *object;
  }
  if (out.operation == "UPDATE") {
    Result<const json::Value*> old_object = object_member(request, "oldObject", "request.oldObject");
    if (!old_object) {
      return old_object.error();
    }
    out.old_object = *old_object;
  }
  return out;
}

// ---------------------------------------------------------------- the stages

bool is_mutating(Endpoint endpoint) {
  return endpoint == Endpoint::vm_mutate || endpoint == Endpoint::vmi_mutate;
}

admission::Resource resource_of(Endpoint endpoint) {
  return endpoint == Endpoint::vm_mutate || endpoint == Endpoint::vm_validate
             ? admission::Resource::virtual_machine
             : admission::Resource::virtual_machine_instance;
}

// KubeVirt ValidateRequestResource: group kubevirt.io, resource of the endpoint, and one of
// ApiSupportedWebhookVersions.
bool resource_matches(const ReviewRequest& request, std::string_view resource) {
  return request.resource_group == "kubevirt.io" && request.resource == resource &&
         (request.resource_version == "v1" || request.resource_version == "v1alpha3");
}

ReviewResult refuse(int status, std::string message, ReviewSummary summary) {
  summary.allowed = false;
  summary.code = status;
  HttpAnswer answer{status, "application/json", encode_status(status, message)};
  summary.error = std::move(message);
  return ReviewResult{std::move(answer), std::move(summary)};
}

ReviewResult run(Endpoint endpoint, std::string_view body, const admission::Pipeline& pipeline,
                 const admission::ClusterView& cluster, const ReviewOptions& options, ReviewScratch& scratch,
                 ReviewSummary& summary) {
  // Every document of the review allocates from `arena`, declared first so that it outlives
  // them all. The review's strings stay in the scratch body (decoded in place, not copied
  // again); everything read from the review is used or copied before this function returns.
  json::Allocator arena(scratch.arena_chunk(), ReviewScratch::arena_bytes);
  Result<json::Document, json::DecodeError> parsed =
      json::parse_json_in_place(body, scratch.body(), options.limits, &arena);
  if (!parsed) {
    return refuse(400, "cannot decode the request body: " + parsed.error().message, std::move(summary));
  }
  Result<ReviewRequest> read = read_request(*parsed);
  if (!read) {
    return refuse(400, read.error().message, std::move(summary));
  }
  const ReviewRequest& request = *read;
  summary.uid = std::string(request.uid);
  summary.operation = std::string(request.operation);
  summary.kind = std::string(request.kind);
  summary.namespace_name = std::string(request.namespace_name);
  summary.name = std::string(request.name);
  if (summary.name.empty() && request.object != nullptr) {
    if (const json::Value* metadata = json::find_object(*request.object, "metadata")) {
      summary.name = std::string(json::find_string(*metadata, "name"));
    }
  }
  summary.dry_run = request.dry_run;

  const admission::Resource resource = resource_of(endpoint);
  const std::string_view resource_name =
      resource == admission::Resource::virtual_machine ? "virtualmachines" : "virtualmachineinstances";
  admission::Verdict verdict;
  std::optional<std::string> patch;  // JSON text
  if (!resource_matches(request, resource_name)) {
    verdict = admission::Verdict::bad_request("expect resource to be '" + std::string(resource_name) + "'");
  } else if (request.object != nullptr) {  // CREATE and UPDATE; DELETE and CONNECT are allowed as they are
    admission::Request stage;
    stage.resource = resource;
    stage.operation = request.operation == "UPDATE" ? admission::Operation::update : admission::Operation::create;
    if (!request.namespace_name.empty()) {
      stage.namespace_name = std::string(request.namespace_name);
    }
    stage.object = request.object;
    stage.old_object = request.old_object;
    stage.allocator = &arena;
    stage.uuids = &scratch.uuids();
    stage.patch_form = admission::PatchForm::text;
    const std::vector<std::string>& accounts = options.kubevirt_service_accounts;
    stage.from_kubevirt_service_account =
        !request.username.empty() && std::find(accounts.begin(), accounts.end(), request.username) != accounts.end();
    if (is_mutating(endpoint)) {
      if (resource == admission::Resource::virtual_machine_instance &&
          stage.operation == admission::Operation::create && options.now) {
        stage.now = options.now();
      }
      admission::MutationOutcome mutation = pipeline.mutate(stage, cluster);
      verdict = std::move(mutation.verdict);
      if (verdict.allowed && mutation.patch_text != "[]") {
        patch = std::move(mutation.patch_text);
      }
    } else {
      verdict = pipeline.validate(stage, cluster);
    }
  }
  summary.allowed = verdict.allowed;
  summary.code = verdict.allowed ? 200 : verdict.code;
  HttpAnswer answer{200, "application/json", encode_review(request.uid, verdict, patch ? &*patch : nullptr)};
  return ReviewResult{std::move(answer), std::move(summary)};
}

}  // namespace

std::optional<Endpoint> endpoint_for_path(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/virtualmachines-mutate") {
    return Endpoint::vm_mutate;
  }
  if (path == "/virtualmachines-validate") {
    return Endpoint::vm_validate;
  }
  if (path == "/virtualmachineinstances-mutate") {
    return Endpoint::vmi_mutate;
  }
  if (path == "/virtualmachineinstances-validate" || path == "/virtualmachineinstances-validate-create" ||
      path == "/virtualmachineinstances-validate-update") {
    return Endpoint::vmi_validate;
  }
  return std::nullopt;
}

std::string_view path_of(Endpoint endpoint) {
  switch (endpoint) {
    case Endpoint::vm_mutate:
      return "/virtualmachines-mutate";
    case Endpoint::vm_validate:
      return "/virtualmachines-validate";
    case Endpoint::vmi_mutate:
      return "/virtualmachineinstances-mutate";
    case Endpoint::vmi_validate:
      return "/virtualmachineinstances-validate";
  }
  return "/virtualmachines-mutate";
}

std::vector<std::string> kubevirt_service_account_usernames(std::string_view kubevirt_namespace) {
  const std::string prefix = "system:serviceaccount:" + std::string(kubevirt_namespace) + ":";
  return {prefix + "kubevirt-apiserver", prefix + "kubevirt-controller", prefix + "kubevirt-handler",
          prefix + "kubevirt-synchronization-controller"};
}

ReviewResult review(Endpoint endpoint, std::string_view body, const admission::Pipeline& pipeline,
                    const admission::ClusterView& cluster, const ReviewOptions& options) {
  ReviewScratch scratch;
  return review(endpoint, body, pipeline, cluster, options, scratch);
}

void* ReviewScratch::arena_chunk() {
  if (!arena_) {
    arena_ = std::make_unique_for_overwrite<std::max_align_t[]>(arena_bytes / sizeof(std::max_align_t));
  }
  return arena_.get();
}

ReviewResult review(Endpoint endpoint, std::string_view body, const admission::Pipeline& pipeline,
                    const admission::ClusterView& cluster, const ReviewOptions& options, ReviewScratch& scratch) {
  ReviewSummary summary;
  try {
    return run(endpoint, body, pipeline, cluster, options, scratch, summary);
  } catch (const std::exception& error) {
    // A rule bug (json::MisuseError) or memory exhaustion: not the apiserver's fault, so no
    // AdmissionReview; HTTP 500 lets the webhook's failurePolicy decide.
    return refuse(500, std::string("internal error: ") + error.what(), std::move(summary));
  }
}

HttpAnswer status_answer(int status, std::string_view message) {
  return HttpAnswer{status, "application/json", encode_status(status, message)};
}

}  // namespace vmgate::webhook
