// The controller's reconcile decisions: run strategies (vm.go syncRunStrategy), the VMI's phase
// from its pod (watch/vmi), the VM's printableStatus (vm.go setPrintableStatus), and the deletes
// that leave no pod or VMI without its owner.
#include "vmgate/controller/controller_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <map>

#include "vmgate/controller/phase_transitions.hpp"
#include "vmgate/controller/start_failure.hpp"
#include "vmgate/kube/utc_time.hpp"

namespace vmgate::controller {
namespace {

std::string_view meta_string(const json::Value& object, std::string_view key) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata == nullptr ? std::string_view() : json::find_string(*metadata, key);
}

std::string key_of(const json::Value& object) {
  return std::string(meta_string(object, "namespace")) + "/" + std::string(meta_string(object, "name"));
}

bool deleting(const json::Value& object) {
  return !meta_string(object, "deletionTimestamp").empty();
}

std::string_view phase_of(const json::Value& object) {
  const json::Value* status = json::find_object(object, "status");
  return status == nullptr ? std::string_view() : json::find_string(*status, "phase");
}

bool is_final(const json::Value& vmi) {
  const std::string_view phase = phase_of(vmi);
  return phase == "Succeeded" || phase == "Failed";
}

// The uid of the controller owner of `kind`, or "".
std::string_view controller_owner(const json::Value& object, std::string_view kind) {
  const json::Value* owners = json::find_path(object, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->IsArray()) {
    return {};
  }
  for (const auto& owner : owners->GetArray()) {
    const json::Value* controller = json::find(owner, "controller");
    if (json::find_string(owner, "kind") == kind && controller != nullptr && controller->IsBool() &&
        controller->GetBool()) {
      return json::find_string(owner, "uid");
    }
  }
  return {};
}

bool has_finalizer(const json::Value& object, std::initializer_list<std::string_view> wanted) {
  const json::Value* finalizers = json::find_path(object, {"metadata", "finalizers"});
  if (finalizers == nullptr || !finalizers->IsArray()) {
    return false;
  }
  for (const auto& item : finalizers->GetArray()) {
    if (item.IsString() && std::find(wanted.begin(), wanted.end(), json::as_view(item)) != wanted.end()) {
      return true;
    }
  }
  return false;
}

const json::Value* condition(const json::Value& object, std::string_view type) {
  const json::Value* conditions = json::find_path(object, {"status", "conditions"});
  if (conditions == nullptr || !conditions->IsArray()) {
    return nullptr;
  }
  for (const auto& item : conditions->GetArray()) {
    if (json::find_string(item, "type") == type) {
      return &item;
    }
  }
  return nullptr;
}

bool condition_true(const json::Value* object, std::string_view type) {
  const json::Value* found = object == nullptr ? nullptr : condition(*object, type);
  return found != nullptr && json::find_string(*found, "status") == "True";
}

Action action(ActionKind kind, std::string kind_name, const json::Value& object, std::string reason) {
  Action out;
  out.kind = kind;
  out.kind_name = std::move(kind_name);
  out.namespace_name = meta_string(object, "namespace");
  out.name = meta_string(object, "name");
  out.uid = meta_string(object, "uid");
  out.body.SetObject();
  out.reason = std::move(reason);
  return out;
}

// A JSON patch that removes `finalizer`, tested against the list as read (a concurrent change
// makes the patch fail instead of dropping another controller's finalizer).
Action remove_finalizer(const json::Value& object, std::string kind_name,
                        std::initializer_list<std::string_view> finalizers, std::string reason) {
  Action out = action(ActionKind::remove_finalizer, std::move(kind_name), object, std::move(reason));
  auto& a = out.body.GetAllocator();
  out.body.SetArray();
  const json::Value* current = json::find_path(object, {"metadata", "finalizers"});
  json::Value remaining(rapidjson::kArrayType);
  for (const auto& item : current->GetArray()) {
    if (!(item.IsString() &&
          std::find(finalizers.begin(), finalizers.end(), json::as_view(item)) != finalizers.end())) {
      remaining.PushBack(json::copy(item, a), a);
    }
  }
  json::Value test(rapidjson::kObjectType);
  json::set_string(test, "op", "test", a);
  json::set_string(test, "path", "/metadata/finalizers", a);
  json::set(test, "value", json::copy(*current, a), a);
  json::Value replace(rapidjson::kObjectType);
  json::set_string(replace, "op", "replace", a);
  json::set_string(replace, "path", "/metadata/finalizers", a);
  json::set(replace, "value", std::move(remaining), a);
  out.body.PushBack(test, a);
  out.body.PushBack(replace, a);
  return out;
}

// The VMI's phase is written by two parties: the controller (from the pod) and the node agent
// (from the launcher). A phase the controller derived from a VMI it saw is only right for that
// VMI: the resourceVersion it saw makes the merge patch a precondition (409 when the node agent
// wrote Running meanwhile, and the next plan sees that), so "forward only" holds on the server,
// not just in the controller's cache.
void seen_version(json::Document& patch, const json::Value& vmi) {
  const json::Value* metadata = json::find_object(vmi, "metadata");
  const std::string_view version =
      metadata == nullptr ? std::string_view() : json::find_string(*metadata, "resourceVersion");
  if (!version.empty()) {
    auto& a = patch.GetAllocator();
    json::set_string(json::ensure_object(patch, "metadata", a), "resourceVersion", version, a);
  }
}

// The VMI phase its pod implies, moving forward only: the launcher writes Running, Succeeded and
// Failed itself; the controller writes Scheduling (a pod exists), Scheduled (the pod runs) and
// Failed (the pod ended, or vanished, before the VMI reached a final phase).
std::string_view next_phase(const json::Value& vmi, const json::Value* pod, bool pod_expected) {
  const std::string_view phase = phase_of(vmi);
  if (is_final(vmi) || deleting(vmi)) {
    return {};
  }
  const bool started = phase == "Scheduling" || phase == "Scheduled" || phase == "Running";
  if (pod == nullptr) {
    return started && !pod_expected ? "Failed" : std::string_view();
  }
  const std::string_view pod_phase = phase_of(*pod);
  if (pod_phase == "Failed" || pod_phase == "Succeeded" || deleting(*pod)) {
    return "Failed";
  }
  if (pod_phase == "Running" && (phase.empty() || phase == "Pending" || phase == "Scheduling")) {
    return "Scheduled";
  }
  if (phase.empty() || phase == "Pending") {
    return "Scheduling";
  }
  return {};
}

// The one write for a VMI that admission denies at pod creation: phase Failed and a Synchronized
// condition False saying why (lifecycle.go's syncErr, in updateStatus's shape), the conditions it
// had otherwise kept, conditional on the version seen. Final: no pod and no other write follow.
Action failed_validation_patch(const json::Value& vmi, const admission::Verdict& verdict, std::string_view now) {
  Action patch = action(ActionKind::patch_vmi, "VirtualMachineInstance", vmi, "denied by admission: Failed");
  auto& a = patch.body.GetAllocator();
  seen_version(patch.body, vmi);
  json::Value& status = json::ensure_object(patch.body, "status", a);
  json::set_string(status, "phase", "Failed", a);
  json::set(status, "phaseTransitionTimestamps", phase_transitions_with(vmi, "Failed", now, a), a);
  json::Value conditions(rapidjson::kArrayType);
  if (const json::Value* current = json::find_path(vmi, {"status", "conditions"});
      current != nullptr && current->IsArray()) {
    for (const json::Value& item : current->GetArray()) {
      if (json::find_string(item, "type") != "Synchronized") {
        conditions.PushBack(json::copy(item, a), a);
      }
    }
  }
  json::Value synchronized(rapidjson::kObjectType);
  json::set_string(synchronized, "type", "Synchronized", a);
  json::set_string(synchronized, "status", "False", a);
  json::set_string(synchronized, "reason", failed_create_validation_reason, a);
  json::set_string(synchronized, "message", denial_message(verdict), a);
  json::set_string(synchronized, "lastTransitionTime", now, a);
  json::set(synchronized, "lastProbeTime", json::Value(), a);
  conditions.PushBack(synchronized, a);
  json::set(status, "conditions", std::move(conditions), a);
  return patch;
}

bool restarting_strategy(std::string_view strategy) {
  return strategy == "Always" || strategy == "RerunOnFailure" || strategy == "Once";
}

// status.stateChangeRequests, virt-api's subresources' way of asking (virtctl start, stop,
// restart): KubeVirt's VirtualMachineStateChangeRequest {action, data, uid}. Only the first
// counts (hasStartRequest, hasStopRequestForVMI); the others wait their turn.
const json::Value* first_request(const json::Value& vm) {
  const json::Value* requests = json::find_path(vm, {"status", "stateChangeRequests"});
  if (requests == nullptr || !requests->IsArray() || requests->Empty() || !(*requests)[0].IsObject()) {
    return nullptr;
  }
  return &(*requests)[0];
}

// hasStartRequest.
bool has_start_request(const json::Value& vm) {
  const json::Value* first = first_request(vm);
  return first != nullptr && json::find_string(*first, "action") == "Start";
}

// hasStartPausedRequest: a Start with data {"paused": "true"} (StartRequestDataPausedKey and
// StartRequestDataPausedTrue; virtctl start --paused).
bool has_start_paused_request(const json::Value& vm) {
  const json::Value* first = first_request(vm);
  if (first == nullptr || json::find_string(*first, "action") != "Start") {
    return false;
  }
  const json::Value* data = json::find_object(*first, "data");
  return data != nullptr && json::find_string(*data, "paused") == "true";
}

// Whether any request of the list has this action.
bool has_request(const json::Value& vm, std::string_view kind) {
  const json::Value* requests = json::find_path(vm, {"status", "stateChangeRequests"});
  if (requests == nullptr || !requests->IsArray()) {
    return false;
  }
  return std::any_of(requests->Begin(), requests->End(), [kind](const json::Value& request) {
    return request.IsObject() && json::find_string(request, "action") == kind;
  });
}

// hasStopRequestForVMI: a Stop naming this VMI's uid.
bool has_stop_request_for(const json::Value& vm, const json::Value& vmi) {
  const json::Value* first = first_request(vm);
  if (first == nullptr || json::find_string(*first, "action") != "Stop") {
    return false;
  }
  const std::string_view uid = json::find_string(*first, "uid");
  return !uid.empty() && uid == meta_string(vmi, "uid");
}

// isTrimFirstChangeRequestNeeded: the first request is done or moot. A Stop once there is no VMI,
// or one whose uid is not the VMI's (a VMI stopped before; a Stop without uid can never be acted
// on); a Start once a VMI exists that is neither being deleted nor final.
bool trim_first_request(const json::Value& requests, const json::Value* vmi) {
  if (requests.Empty()) {
    return false;
  }
  const json::Value& first = requests[0];
  const std::string_view kind = first.IsObject() ? json::find_string(first, "action") : std::string_view();
  if (kind == "Stop") {
    const std::string_view uid = json::find_string(first, "uid");
    return vmi == nullptr || uid.empty() || uid != meta_string(*vmi, "uid");
  }
  if (kind == "Start") {
    return vmi != nullptr && !deleting(*vmi) && !is_final(*vmi);
  }
  return false;
}

// isVMIStopExpected: the run strategy deletes this VMI now (syncRunStrategy's stopVMI; KubeVirt
// knows it from its deletion expectations, the planner from the same decision): Halted, or a
// Stop request for it under Always, RerunOnFailure or Manual.
bool stop_expected(const json::Value& vm, const json::Value& vmi, std::string_view strategy) {
  return strategy == "Halted" || ((strategy == "Always" || strategy == "RerunOnFailure" || strategy == "Manual") &&
                                  has_stop_request_for(vm, vmi));
}

// setPrintableStatus: first match of Terminating, Stopping, (Migrating,) Paused, Running, (the
// storage and image-pull ones,) Starting, CrashLoopBackOff, Stopped, else Unknown.
std::string printable_status(const json::Value& vm, const json::Value* vmi, bool start_expected,
                             const json::Value* start_failure) {
  const std::string strategy = run_strategy(vm);
  if (deleting(vm)) {
    return "Terminating";
  }
  // isVirtualMachineStatusStopping.
  if (vmi != nullptr && !is_final(*vmi) && (deleting(*vmi) || stop_expected(vm, *vmi, strategy))) {
    return "Stopping";
  }
  if (vmi != nullptr && phase_of(*vmi) == "Running") {
    return condition_true(vmi, "Paused") ? "Paused" : "Running";
  }
  if (vmi == nullptr && start_expected) {
    return "Starting";
  }
  if (vmi != nullptr) {
    const std::string_view phase = phase_of(*vmi);
    if (phase.empty() || phase == "Pending" || phase == "Scheduling" || phase == "Scheduled") {
      return "Starting";
    }
  }
  // isVirtualMachineStatusCrashLoopBackOff: no VMI (or a finished one), none being started, and
  // start failures counted under a strategy that restarts.
  if ((vmi == nullptr || is_final(*vmi)) && !start_expected && start_failure != nullptr &&
      restarting_strategy(strategy)) {
    const json::Value* count = json::find(*start_failure, "consecutiveFailCount");
    if (count != nullptr && count->IsInt64() && count->GetInt64() > 0) {
      return "CrashLoopBackOff";
    }
  }
  if (vmi != nullptr) {
    if (is_final(*vmi)) {
      return "Stopped";
    }
    return "Unknown";
  }
  return "Stopped";
}

// syncRunStrategy, Halted, no VMI and a Start request (virt-api leaves `virtctl start --paused`
// of a stopped VM to the controller): the VM is set to run, runStrategy Always, or running true
// on a VM that uses spec.running. KubeVirt updates the VM it read (refused when it changed since);
// here a JSON patch tests the uid and the value it replaces, so that a concurrent edit makes it
// fail (422) instead of being overwritten. The next plan starts the VMI.
Action start_halted(const json::Value& vm) {
  const json::Value* spec = json::find_object(vm, "spec");
  const json::Value* strategy = spec == nullptr ? nullptr : json::find(*spec, "runStrategy");
  const json::Value* running = spec == nullptr ? nullptr : json::find(*spec, "running");
  const bool use_strategy = strategy != nullptr && !strategy->IsNull();
  Action out = action(ActionKind::patch_vm_spec, "VirtualMachine", vm,
                      use_strategy ? "a Start request: runStrategy Always" : "a Start request: running true");
  auto& a = out.body.GetAllocator();
  out.body.SetArray();
  const auto op = [&out, &a](std::string_view name, std::string_view path, json::Value value) {
    json::Value item(rapidjson::kObjectType);
    json::set_string(item, "op", name, a);
    json::set_string(item, "path", path, a);
    json::set(item, "value", std::move(value), a);
    out.body.PushBack(item, a);
  };
  if (const std::string_view uid = meta_string(vm, "uid"); !uid.empty()) {
    op("test", "/metadata/uid", json::Value(uid.data(), static_cast<rapidjson::SizeType>(uid.size()), a));
  }
  if (use_strategy) {
    op("test", "/spec/runStrategy", json::copy(*strategy, a));
    op("replace", "/spec/runStrategy", json::Value("Always", a));
  } else if (running != nullptr && !running->IsNull()) {
    op("test", "/spec/running", json::copy(*running, a));
    op("replace", "/spec/running", json::Value(true));
  } else {
    // Neither field: nothing to test but the object's version.
    if (const std::string_view version = meta_string(vm, "resourceVersion"); !version.empty()) {
      op("test", "/metadata/resourceVersion",
         json::Value(version.data(), static_cast<rapidjson::SizeType>(version.size()), a));
    }
    op("add", "/spec/running", json::Value(true));
  }
  return out;
}

// Whether the status fields the controller owns differ (conditions compared without times).
bool status_differs(const json::Value& vm, const json::Value& wanted) {
  const json::Value* current = json::find_object(vm, "status");
  if (current == nullptr) {
    return true;
  }
  if (json::find(wanted, "stateChangeRequests") != nullptr) {
    return true;  // only there (a list, or null) when they change
  }
  for (const char* field : {"printableStatus", "ready", "created", "runStrategy", "startFailure"}) {
    const json::Value* have = json::find(*current, field);
    const json::Value* want = json::find(wanted, field);
    if ((have == nullptr) != (want == nullptr) || (have != nullptr && !json::equal(*have, *want))) {
      return true;
    }
  }
  for (const char* field : {"observedGeneration", "desiredGeneration"}) {
    const json::Value* have = json::find(*current, field);
    const json::Value* want = json::find(wanted, field);
    if (want != nullptr && (have == nullptr || !json::equal(*have, *want))) {
      return true;
    }
  }
  const json::Value* have_ready = condition(vm, "Ready");
  const json::Value* want_ready = json::find_path(wanted, {"conditions"});
  const json::Value& want_condition = (*want_ready)[0];
  return have_ready == nullptr ||
         json::find_string(*have_ready, "status") != json::find_string(want_condition, "status") ||
         json::find_string(*have_ready, "reason") != json::find_string(want_condition, "reason");
}

}  // namespace

std::string_view to_string(ActionKind kind) {
  switch (kind) {
    case ActionKind::create_vmi:
      return "create VirtualMachineInstance";
    case ActionKind::delete_vmi:
      return "delete VirtualMachineInstance";
    case ActionKind::create_pod:
      return "create Pod";
    case ActionKind::delete_pod:
      return "delete Pod";
    case ActionKind::patch_vmi:
      return "patch VirtualMachineInstance";
    case ActionKind::patch_vm_status:
      return "patch VirtualMachine status";
    case ActionKind::patch_vm_spec:
      return "patch VirtualMachine spec";
    case ActionKind::remove_finalizer:
      return "remove finalizer";
  }
  return "unknown";
}

std::string denial_message(const admission::Verdict& verdict) {
  std::string message = "failed create validation: ";
  if (verdict.causes.empty()) {
    return message + verdict.message;
  }
  for (std::size_t i = 0; i < verdict.causes.size(); ++i) {
    const admission::FieldError& cause = verdict.causes[i];
    message += i == 0 ? "" : ", ";
    message += cause.field.empty() ? cause.message : cause.field + ": " + cause.message;
  }
  // Verdict::invalid keeps 10 causes; its message says how many more there were.
  if (const std::size_t more = verdict.message.rfind(", and ");
      more != std::string::npos && verdict.message.ends_with("more validation errors")) {
    message += verdict.message.substr(more);
  }
  return message;
}

std::string run_strategy(const json::Value& vm) {
  const json::Value* spec = json::find_object(vm, "spec");
  if (spec == nullptr) {
    return "Halted";
  }
  if (const std::string_view strategy = json::find_string(*spec, "runStrategy"); !strategy.empty()) {
    return std::string(strategy);
  }
  const json::Value* running = json::find(*spec, "running");
  return running != nullptr && running->IsBool() && running->GetBool() ? "Always" : "Halted";
}

json::Document vm_status(const json::Value& vm, const json::Value* vmi, bool start_expected, std::string_view now,
                         const json::Value* start_failure) {
  json::Document status(rapidjson::kObjectType);
  auto& a = status.GetAllocator();
  if (start_failure != nullptr && !start_failure->IsObject()) {
    start_failure = nullptr;
  }
  json::set_string(status, "printableStatus", printable_status(vm, vmi, start_expected, start_failure), a);
  const bool ready = condition_true(vmi, "Ready");
  json::set(status, "ready", json::Value(ready), a);
  json::set(status, "created", json::Value(vmi != nullptr), a);
  json::set_string(status, "runStrategy", run_strategy(vm), a);
  if (start_failure != nullptr) {
    json::set(status, "startFailure", json::copy(*start_failure, a), a);
  } else if (json::find_path(vm, {"status", "startFailure"}) != nullptr) {
    json::set(status, "startFailure", json::Value(), a);  // merge patch: remove
  }
  // syncGenerationInfo: the generation the VMI was started from (its kubevirt.io/vm-generation)
  // and the VM's current one; a VMI without a readable annotation leaves both alone.
  if (vmi != nullptr) {
    const json::Value* annotation = json::find_path(*vmi, {"metadata", "annotations", "kubevirt.io/vm-generation"});
    const json::Value* generation = json::find_path(vm, {"metadata", "generation"});
    if (annotation != nullptr && annotation->IsString() && generation != nullptr && generation->IsInt64()) {
      const std::string text(json::as_view(*annotation));
      char* end = nullptr;
      const long long observed = std::strtoll(text.c_str(), &end, 10);
      if (!text.empty() && end != nullptr && *end == '\0') {
        json::set(status, "observedGeneration", json::Value(static_cast<std::int64_t>(observed)), a);
        json::set(status, "desiredGeneration", json::Value(generation->GetInt64()), a);
      }
    }
  }
  // syncReadyConditionFromVMI.
  json::Value ready_condition(rapidjson::kObjectType);
  json::set_string(ready_condition, "type", "Ready", a);
  json::set_string(ready_condition, "status", ready ? "True" : "False", a);
  std::string reason = vmi == nullptr ? "VMINotExists" : ready ? "" : "VMINotReady";
  if (vmi != nullptr) {
    if (const json::Value* own = condition(*vmi, "Ready");
        own != nullptr && !json::find_string(*own, "reason").empty()) {
      reason = json::find_string(*own, "reason");
    }
  }
  if (!reason.empty()) {
    json::set_string(ready_condition, "reason", reason, a);
  }
  if (vmi == nullptr) {
    json::set_string(ready_condition, "message", "VMI does not exist", a);
  }
  // The transition time stays while the status does.
  const json::Value* previous = condition(vm, "Ready");
  std::string_view since = now;
  if (previous != nullptr && json::find_string(*previous, "status") == (ready ? "True" : "False") &&
      !json::find_string(*previous, "lastTransitionTime").empty()) {
    since = json::find_string(*previous, "lastTransitionTime");
  }
  json::set_string(ready_condition, "lastTransitionTime", since, a);
  json::set(ready_condition, "lastProbeTime", json::Value(), a);
  json::Value conditions(rapidjson::kArrayType);
  conditions.PushBack(ready_condition, a);
  json::set(status, "conditions", std::move(conditions), a);
  return status;
}

// Owner references name an object of the dependent's own namespace (Kubernetes' rule): objects are
// indexed by namespace and uid, so that an object in one namespace naming the uid of another
// namespace's object is nobody's (isolation: a tenant's pod cannot fail another tenant's VMI).
std::string namespaced_uid(const json::Value& object, std::string_view uid) {
  std::string key(meta_string(object, "namespace"));
  key.append("/").append(uid);
  return key;
}

std::vector<Action> plan(const State& state, const PlanSettings& settings, std::vector<std::string>* notes,
                         std::optional<std::chrono::seconds>* replan_within) {
  std::vector<Action> actions;
  // An unreadable `now` (never the command's own) makes every backoff look expired: starts are
  // not held back forever by a clock the planner cannot read.
  const std::int64_t now_seconds = kube::parse_utc_seconds(state.now).value_or(0);
  const auto replan_after = [replan_within](std::int64_t seconds) {
    if (replan_within != nullptr && (!*replan_within || (*replan_within)->count() > seconds)) {
      *replan_within = std::chrono::seconds(seconds);
    }
  };
  const auto note = [notes](std::string line) {
    if (notes != nullptr) {
      notes->push_back(std::move(line));
    }
  };
  std::map<std::string, const json::Value*> vm_by_uid;
  std::map<std::string, const json::Value*> vmi_by_key;
  std::map<std::string, const json::Value*> vmi_by_uid;
  std::map<std::string, std::vector<const json::Value*>> pods_by_vmi_uid;
  for (const json::Value* vm : state.vms) {
    vm_by_uid[namespaced_uid(*vm, meta_string(*vm, "uid"))] = vm;
  }
  for (const json::Value* vmi : state.vmis) {
    vmi_by_key[key_of(*vmi)] = vmi;
    vmi_by_uid[namespaced_uid(*vmi, meta_string(*vmi, "uid"))] = vmi;
  }
  for (const json::Value* pod : state.pods) {
    if (const std::string_view owner = controller_owner(*pod, "VirtualMachineInstance"); !owner.empty()) {
      pods_by_vmi_uid[namespaced_uid(*pod, owner)].push_back(pod);
    }
  }

  // VirtualMachines: the run strategy, then the status.
  for (const json::Value* vm : state.vms) {
    const std::string key = key_of(*vm);
    const std::string_view vm_uid = meta_string(*vm, "uid");
    const json::Value* vmi = nullptr;
    if (const auto found = vmi_by_key.find(key); found != vmi_by_key.end()) {
      const std::string_view owner = controller_owner(*found->second, "VirtualMachine");
      if (owner.empty() || owner == vm_uid) {
        vmi = found->second;
      } else {
        // A VMI of an earlier VM of the same name: it goes (below) before this VM starts.
        note(key + ": waiting for the VirtualMachineInstance of a previous VirtualMachine to go");
        continue;
      }
    }
    const std::string strategy = run_strategy(*vm);
    bool start = false;
    bool add_start_request = false;
    const bool start_request = has_start_request(*vm);
    const bool stop_request = vmi != nullptr && has_stop_request_for(*vm, *vmi);
    const json::Value* status = json::find_object(*vm, "status");
    const std::string_view previous_strategy = status == nullptr ? "" : json::find_string(*status, "runStrategy");
    const auto stop_vmi = [&](std::string reason) {
      if (!deleting(*vmi)) {  // stopVMI: a VMI being deleted is left to go
        actions.push_back(action(ActionKind::delete_vmi, "VirtualMachineInstance", *vmi, std::move(reason)));
      }
    };
    if (deleting(*vm)) {
      if (vmi != nullptr && !deleting(*vmi)) {
        actions.push_back(
            action(ActionKind::delete_vmi, "VirtualMachineInstance", *vmi, "its VirtualMachine is being deleted"));
      }
      if (vmi == nullptr && has_finalizer(*vm, {vmi_finalizer})) {
        actions.push_back(
            remove_finalizer(*vm, "VirtualMachine", {vmi_finalizer}, "its VirtualMachineInstance is gone"));
      }
    } else if (strategy == "Always") {
      // A Stop request for the VMI (virtctl restart: [Stop uid, Start]) or a final VMI: deleted,
      // and a new one started once it is gone.
      if (vmi == nullptr) {
        start = true;
      } else if (stop_request) {
        stop_vmi("runStrategy Always: a Stop request for the VMI (a restart)");
      } else if (is_final(*vmi)) {
        stop_vmi("runStrategy Always: restarting a VMI in phase " + std::string(phase_of(*vmi)));
      }
    } else if (strategy == "RerunOnFailure") {
      if (vmi == nullptr) {
        // shouldStartRerunOnFailure: on a switch to the strategy, or by a start request (which
        // a failure leaves, below).
        start = previous_strategy != strategy || start_request;
      } else if (phase_of(*vmi) == "Failed" && !deleting(*vmi) && !has_request(*vm, "Start")) {
        // addStartRequest, written before the VMI goes: KubeVirt deletes the VMI and appends a
        // Start in one sync; here the delete waits for a plan that sees the Start stored, so
        // that a status patch refused for a stale resourceVersion (409) cannot lose the rerun.
        add_start_request = true;
      } else if (stop_request || phase_of(*vmi) == "Failed" || phase_of(*vmi) == "Succeeded") {
        stop_vmi(stop_request ? "runStrategy RerunOnFailure: a Stop request for the VMI"
                              : "runStrategy RerunOnFailure: VMI " + std::string(phase_of(*vmi)));
      }
    } else if (strategy == "Once") {
      start = vmi == nullptr && previous_strategy != strategy;
    } else if (strategy == "Halted") {
      if (vmi != nullptr) {
        stop_vmi("runStrategy Halted");
      } else if (start_request) {
        actions.push_back(start_halted(*vm));
      }
    } else if (strategy == "Manual") {
      // Started and stopped only by requests (virtctl start, stop, restart).
      if (vmi == nullptr) {
        start = start_request;
      } else if (stop_request) {
        stop_vmi("runStrategy Manual: a Stop request for the VMI");
      }
    } else {
      std::string line = key;
      line += ": runStrategy " + strategy;
      line += " is not supported by vmgate's controller";
      note(std::move(line));
    }
    // syncStartFailureStatus, then the start failure backoff of the strategies that restart.
    const json::Document start_failure = next_start_failure(*vm, vmi, strategy, now_seconds);
    if (start && (strategy == "Always" || strategy == "RerunOnFailure")) {
      if (const std::int64_t left = start_backoff_left(start_failure, now_seconds); left > 0) {
        note(key + ": start delayed by the start failure backoff until " +
             std::string(json::find_string(start_failure, "retryAfterTimestamp")));
        replan_after(left);
        start = false;
      }
    }
    // A VMI this controller created a moment ago and the VMI list does not show yet.
    const bool created_unseen = vmi == nullptr && state.expected_vmis.count(key) != 0;
    if (start && created_unseen) {
      note(key + ": waiting for the VirtualMachineInstance it created to be seen");
      start = false;
    }
    if (start) {
      Result<json::Document> built =
          settings.build_vmi ? settings.build_vmi(*vm) : Result<json::Document>(Error{"no VMI builder"});
      if (!built) {
        note(key + ": cannot build the VirtualMachineInstance: " + built.error().message);
        start = false;
      } else {
        Action create = action(ActionKind::create_vmi, "VirtualMachineInstance", *vm, "runStrategy " + strategy);
        create.uid.clear();
        create.body = std::move(built.value());
        if (has_start_paused_request(*vm)) {  // SetupVMIFromVM
          auto& a = create.body.GetAllocator();
          json::set_string(json::ensure_object(create.body, "spec", a), "startStrategy", "Paused", a);
        }
        actions.push_back(std::move(create));
      }
    }
    json::Document wanted = vm_status(*vm, vmi, start || created_unseen, state.now, &start_failure);
    // updateStatus: the requests as addStartRequest and isTrimFirstChangeRequestNeeded leave them;
    // the rest of the list as it is. Written whole (null when empty) with the resourceVersion
    // planned from, so that a request the API server added meanwhile is not lost: the patch is
    // refused (409) and the next plan sees it.
    json::Value requests(rapidjson::kArrayType);
    {
      auto& a = wanted.GetAllocator();
      if (const json::Value* current = json::find_path(*vm, {"status", "stateChangeRequests"});
          current != nullptr && current->IsArray()) {
        requests.CopyFrom(*current, a);
      }
      if (add_start_request) {
        json::Value request(rapidjson::kObjectType);
        json::set_string(request, "action", "Start", a);
        requests.PushBack(request, a);
      }
      if (trim_first_request(requests, vmi)) {
        requests.Erase(requests.Begin());
      }
    }
    const json::Value* stored = json::find_path(*vm, {"status", "stateChangeRequests"});
    const bool requests_changed = stored == nullptr || stored->IsNull()
                                      ? !requests.Empty()
                                      : !(stored->IsArray() && json::equal(*stored, requests));
    if (requests_changed) {
      json::set(wanted, "stateChangeRequests", requests.Empty() ? json::Value() : std::move(requests),
                wanted.GetAllocator());
    }
    if (status_differs(*vm, wanted)) {
      Action patch = action(ActionKind::patch_vm_status, "VirtualMachine", *vm,
                            "printableStatus " + std::string(json::find_string(wanted, "printableStatus")));
      if (requests_changed) {
        seen_version(patch.body, *vm);
      }
      auto& a = patch.body.GetAllocator();
      json::set(patch.body, "status", json::copy(wanted, a), a);
      actions.push_back(std::move(patch));
    }
  }

  // VirtualMachineInstances: orphans, deletion, the pod, the phase.
  for (const json::Value* vmi : state.vmis) {
    const std::string key = key_of(*vmi);
    const std::string vmi_uid = namespaced_uid(*vmi, meta_string(*vmi, "uid"));
    const std::string_view owner = controller_owner(*vmi, "VirtualMachine");
    const auto pods = pods_by_vmi_uid.find(vmi_uid);
    const json::Value* pod = pods == pods_by_vmi_uid.end() ? nullptr : pods->second.front();
    const std::string pod_key = std::string(meta_string(*vmi, "namespace")) + "/" + launcher_pod_name(*vmi);
    const bool pod_expected = pod == nullptr && state.expected_pods.count(pod_key) != 0;
    if (!owner.empty() && vm_by_uid.count(namespaced_uid(*vmi, owner)) == 0 && !deleting(*vmi)) {
      // As the garbage collector would: the VM that owned it is gone.
      actions.push_back(action(ActionKind::delete_vmi, "VirtualMachineInstance", *vmi, "its VirtualMachine is gone"));
      continue;
    }
    if (deleting(*vmi)) {
      if (pods != pods_by_vmi_uid.end()) {
        for (const json::Value* each : pods->second) {
          if (!deleting(*each)) {
            actions.push_back(
                action(ActionKind::delete_pod, "Pod", *each, "its VirtualMachineInstance is being deleted"));
          }
        }
      } else if (!pod_expected && has_finalizer(*vmi, {vmi_finalizer, foreground_finalizer})) {
        actions.push_back(remove_finalizer(*vmi, "VirtualMachineInstance", {vmi_finalizer, foreground_finalizer},
                                           "its launcher pod is gone"));
      }
      continue;
    }
    if (pod == nullptr && !pod_expected && !is_final(*vmi) && (phase_of(*vmi).empty() || phase_of(*vmi) == "Pending")) {
      if (settings.admit_vmi) {
        if (const admission::Verdict verdict = settings.admit_vmi(*vmi, !owner.empty()); !verdict.allowed) {
          note(key + ": not admitted, so no launcher pod: " + denial_message(verdict));
          actions.push_back(failed_validation_patch(*vmi, verdict, state.now));
          continue;
        }
      }
      Result<json::Document> rendered = launcher_pod(*vmi, settings.pod);
      if (!rendered) {
        note(key + ": cannot render the launcher pod: " + rendered.error().message);
        continue;
      }
      Action create = action(ActionKind::create_pod, "Pod", *rendered, "VMI " + key + " has no launcher pod");
      create.uid.clear();
      create.body = std::move(rendered.value());
      actions.push_back(std::move(create));
      Action patch = action(ActionKind::patch_vmi, "VirtualMachineInstance", *vmi, "launcher pod created: Scheduling");
      auto& a = patch.body.GetAllocator();
      seen_version(patch.body, *vmi);
      json::Value& status = json::ensure_object(patch.body, "status", a);
      json::set_string(status, "phase", "Scheduling", a);
      json::set(status, "phaseTransitionTimestamps", phase_transitions_with(*vmi, "Scheduling", state.now, a), a);
      actions.push_back(std::move(patch));
      continue;
    }
    if (const std::string_view phase = next_phase(*vmi, pod, pod_expected); !phase.empty()) {
      Action patch = action(ActionKind::patch_vmi, "VirtualMachineInstance", *vmi,
                            pod == nullptr ? "launcher pod gone: " + std::string(phase)
                                           : "launcher pod " + std::string(phase_of(*pod)) + ": " + std::string(phase));
      auto& a = patch.body.GetAllocator();
      seen_version(patch.body, *vmi);
      json::Value& status = json::ensure_object(patch.body, "status", a);
      json::set_string(status, "phase", phase, a);
      json::set(status, "phaseTransitionTimestamps", phase_transitions_with(*vmi, phase, state.now, a), a);
      if (phase == "Failed") {
        json::set_string(status, "reason", pod == nullptr ? "PodDeleted" : "PodTerminated", a);
      }
      actions.push_back(std::move(patch));
    } else if (!deleting(*vmi) && phase_transition_missing(*vmi)) {
      // A phase the node agent wrote (Running, Succeeded, Failed): recorded once seen.
      const std::string_view current = phase_of(*vmi);
      Action patch = action(ActionKind::patch_vmi, "VirtualMachineInstance", *vmi,
                            "phase " + std::string(current) + ": transition recorded");
      auto& a = patch.body.GetAllocator();
      seen_version(patch.body, *vmi);
      json::set(json::ensure_object(patch.body, "status", a), "phaseTransitionTimestamps",
                phase_transitions_with(*vmi, current, state.now, a), a);
      actions.push_back(std::move(patch));
    }
  }

  // Launcher pods whose VMI is gone, or not the one that made them.
  for (const json::Value* pod : state.pods) {
    const std::string_view owner = controller_owner(*pod, "VirtualMachineInstance");
    if (!deleting(*pod) && !owner.empty() && vmi_by_uid.count(namespaced_uid(*pod, owner)) == 0) {
      actions.push_back(action(ActionKind::delete_pod, "Pod", *pod, "its VirtualMachineInstance is gone"));
    }
  }
  // An object without a namespace or a name (a broken API server, a bad watch event) would turn
  // into a request on `/namespaces//...`: nothing is done to it.
  std::erase_if(actions, [&note](const Action& planned) {
    const bool created = planned.kind == ActionKind::create_vmi || planned.kind == ActionKind::create_pod;
    if (!planned.namespace_name.empty() && (created || !planned.name.empty())) {
      return false;
    }
    note(planned.kind_name + " without a namespace or a name: no " + std::string(to_string(planned.kind)));
    return true;
  });
  return actions;
}

}  // namespace vmgate::controller
