#pragma once
// The `subresources.kubevirt.io` API as KubeVirt's virt-api answers it (pkg/virt-api/rest,
// v1.8.2): which request a path names, the SubjectAccessReview that authorizes it, and the
// decisions of start, stop, restart, pause, unpause and console from the objects read. Pure;
// thread-safe. The server that does the reading and writing is subresources_server.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::subresources {

inline constexpr std::string_view api_group = "subresources.kubevirt.io";

/// A Kubernetes Status answer (k8s.io/apimachinery errors.StatusError).
struct ApiStatus {
  int code = 500;
  std::string reason;  // "Conflict", "NotFound", "BadRequest", "Forbidden", "InternalError"
  std::string message;
  std::string kind;   // details.kind: "virtualmachine", "virtualmachineinstance"
  std::string name;   // details.name
  std::string group;  // details.group: "kubevirt.io"
};

/// Kubernetes' constructors, with KubeVirt's resource names ("virtualmachine",
/// "virtualmachineinstance" in group kubevirt.io: `virtualmachine.kubevirt.io "vm"`).
ApiStatus conflict(std::string_view kind, std::string_view name, std::string_view why);
ApiStatus not_found(std::string_view kind, std::string_view name);
ApiStatus forbidden(std::string_view kind, std::string_view name, std::string_view why);
ApiStatus bad_request(std::string_view message);
ApiStatus internal_error(std::string_view message);
/// A message of the API server's own status (a 404, 409 or 422 of a patch) passed on with its code.
ApiStatus passed_on(int code, std::string_view reason, std::string_view message);

/// The Status object as JSON ({"kind":"Status","apiVersion":"v1",...}).
std::string status_json(const ApiStatus& status);

/// Answers that need no authorization (virt-api's noAuthEndpoints): discovery and health.
enum class Discovery { apis, group, group_version, healthz, version };

/// The KubeVirt release whose subresource API vmgate answers as: virtctl compares its own
/// major.minor with /apis/subresources.kubevirt.io/VERSION/version's gitVersion.
inline constexpr std::string_view api_release = "v1.8.2";

/// A request for a subresource of one object: PUT|GET /apis/subresources.kubevirt.io/VERSION/
/// namespaces/NS/RESOURCE/NAME/SUBRESOURCE.
struct ObjectRequest {
  std::string version;  // "v1" or "v1alpha3"
  std::string namespace_;
  std::string resource;  // "virtualmachines" or "virtualmachineinstances"
  std::string name;
  std::string subresource;  // "start", "console", "vnc/screenshot", ...
  std::string verb;         // the RBAC verb of the method: "update" for PUT, "get" for GET
};

struct Route {
  std::variant<Discovery, ObjectRequest> what;
  std::string version;  // of a discovery request; empty for /apis and the group
};

/// What `method` on `target` (path and query) asks for. Errors: a path outside the group, a
/// namespace or name that is not a DNS subdomain/label, an unknown resource (404), a method the
/// path does not take (405).
Result<Route, ApiStatus> route(std::string_view method, std::string_view target);

/// The subresources vmgate serves, by resource; any other known to KubeVirt answers 501 naming it.
enum class Action { start, stop, restart, pause, unpause, console, not_served };
Action action_of(const ObjectRequest& request);

/// The discovery documents: /apis (APIGroupList), /apis/subresources.kubevirt.io (APIGroup),
/// /apis/subresources.kubevirt.io/VERSION (APIResourceList, the subresources listed as virt-api does).
std::string discovery_json(Discovery discovery, std::string_view version);

/// The requesting user, from the aggregator's headers (X-Remote-User, X-Remote-Group,
/// X-Remote-Extra-<key> by default; the header names come from the API server's
/// extension-apiserver-authentication ConfigMap).
struct Identity {
  std::string user;
  std::vector<std::string> groups;
  std::vector<std::pair<std::string, std::vector<std::string>>> extra;  // key lower-cased and unescaped
};

struct HeaderNames {
  std::vector<std::string> user{"X-Remote-User"};
  std::vector<std::string> group{"X-Remote-Group"};
  std::vector<std::string> extra_prefix{"X-Remote-Extra-"};
};

/// One header field as received (name as sent, value).
using HeaderField = std::pair<std::string_view, std::string_view>;

/// The identity the headers carry. Errors (virt-api's words): "a valid user header is required
/// for authorization", "a valid group header is required for authorization".
Result<Identity> identity_from_headers(const std::vector<HeaderField>& headers, const HeaderNames& names);

/// The SubjectAccessReview (authorization.k8s.io/v1) asking whether `identity` may `request`.
std::string access_review_json(const Identity& identity, const ObjectRequest& request);

/// The request bodies (StartOptions, StopOptions, RestartOptions, PauseOptions, UnpauseOptions):
/// JSON or YAML; empty is no options. Errors: 400 "Can not unmarshal Request body to struct, error: ...".
struct RequestOptions {
  bool paused = false;                       // StartOptions.paused
  std::optional<std::int64_t> grace_period;  // StopOptions.gracePeriod, RestartOptions.gracePeriodSeconds
  std::vector<std::string> dry_run;          // dryRun
};
Result<RequestOptions, ApiStatus> parse_options(Action action, std::string_view body);

/// One write to the API, in order.
struct ApiWrite {
  enum class Target { vm, vm_status, vmi } target = Target::vm;
  std::string json_patch;
};

/// What a lifecycle request does: the writes, then either 202 Accepted or `error` (KubeVirt
/// answers some errors after a write, e.g. a Halted VM's stop after the grace period patch).
struct LifecyclePlan {
  std::vector<ApiWrite> writes;
  std::optional<ApiStatus> error;
  bool delete_launcher_pod = false;  // restart with gracePeriodSeconds 0
  bool dry_run = false;
};

/// start / stop / restart of `vm` (GET of the VM) with its VMI (nullptr: none), as
/// StartVMRequestHandler, StopVMRequestHandler and RestartVMRequestHandler decide.
LifecyclePlan plan_start(const json::Value& vm, const json::Value* vmi, const RequestOptions& options);
LifecyclePlan plan_stop(const json::Value& vm, const json::Value* vmi, const RequestOptions& options);
LifecyclePlan plan_restart(const json::Value& vm, const json::Value* vmi, const RequestOptions& options);

/// pause / unpause / console: nullopt when the VMI may be forwarded to its node agent.
std::optional<ApiStatus> check_pause(const json::Value& vmi);
std::optional<ApiStatus> check_unpause(const json::Value& vmi);
std::optional<ApiStatus> check_console(const json::Value& vmi);
/// unpause first looks at the VM of the same name (nullptr: none): a snapshot in progress refuses.
std::optional<ApiStatus> check_unpause_vm(const json::Value* vm, std::string_view name);

}  // namespace vmgate::subresources
