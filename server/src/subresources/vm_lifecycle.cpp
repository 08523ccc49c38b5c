// start, stop and restart of a VirtualMachine, decided as virt-api's StartVMRequestHandler,
// StopVMRequestHandler and RestartVMRequestHandler decide (pkg/virt-api/rest/lifecycle.go):
// a run strategy change of the spec, or a state change request in the status for the
// controller, each guarded by a JSON patch `test` so that a concurrent change fails the patch.
#include "object_fields.hpp"
#include "vmgate/server/subresource_api.hpp"

namespace vmgate::subresources {

namespace {

constexpr std::string_view vm_kind = "virtualmachine";
constexpr std::string_view vm_not_running = "VM is not running";
constexpr std::string_view manual_recovery_required =
    "VM recovery required: Volume migration failed, leaving some volumes pointing to non-consistent targets; "
    "manual intervention is needed to reassign them to their original volumes.";

using fields::name_of;
using fields::phase_of;

bool is_final(const json::Value& vmi) {
  const std::string_view phase = phase_of(vmi);
  return phase == "Failed" || phase == "Succeeded";
}

bool condition_true(const json::Value& object, std::string_view type) {
  return fields::has_condition(object, type, "True");
}

// VirtualMachine.RunStrategy(): spec.running wins over its absence; both set is an error.
Result<std::string> run_strategy(const json::Value& vm) {
  const json::Value* running = json::find_path(vm, {"spec", "running"});
  const json::Value* strategy = json::find_path(vm, {"spec", "runStrategy"});
  if (running != nullptr && running->IsNull()) {
    running = nullptr;
  }
  if (strategy != nullptr && strategy->IsNull()) {
    strategy = nullptr;
  }
  if (running != nullptr && strategy != nullptr) {
    return Error{"running and runstrategy are mutually exclusive"};
  }
  if (running != nullptr) {
    return std::string(running->IsBool() && running->GetBool() ? "Always" : "Halted");
  }
  if (strategy != nullptr && strategy->IsString()) {
    return std::string(json::as_view(*strategy));
  }
  return std::string("Halted");
}

class Patch {
 public:
  Patch() : document_(rapidjson::kArrayType) {}

  Patch& op(std::string_view operation, std::string_view path, const json::Value* value) {
    auto& a = document_.GetAllocator();
    json::Value entry(rapidjson::kObjectType);
    json::set_string(entry, "op", operation, a);
    json::set_string(entry, "path", path, a);
    if (value != nullptr) {
      json::set(entry, "value", json::copy(*value, a), a);
    }
    document_.PushBack(entry, a);
    return *this;
  }

  [[nodiscard]] std::string str() const { return json::to_string(document_); }

 private:
  json::Document document_;
};

struct ChangeRequest {
  std::string_view action;  // "Start" or "Stop"
  std::string_view uid;     // a Stop's VMI
  bool paused = false;      // a Start's data {"paused": "true"}
};

json::Value change_requests(const std::vector<ChangeRequest>& changes, json::Allocator& a) {
  json::Value list(rapidjson::kArrayType);
  for (const ChangeRequest& change : changes) {
    json::Value entry(rapidjson::kObjectType);
    json::set_string(entry, "action", change.action, a);
    if (change.paused) {
      json::Value data(rapidjson::kObjectType);
      json::set_string(data, "paused", "true", a);
      json::set(entry, "data", std::move(data), a);
    }
    if (!change.uid.empty()) {
      json::set_string(entry, "uid", change.uid, a);
    }
    list.PushBack(entry, a);
  }
  return list;
}

// equality.Semantic.DeepEqual(vm.Status, VirtualMachineStatus{}): no status, or only empty values.
bool status_empty(const json::Value& vm) {
  const json::Value* status = json::find(vm, "status");
  if (status == nullptr || status->IsNull()) {
    return true;
  }
  if (!status->IsObject()) {
    return false;
  }
  // Semantic.DeepEqual takes an empty list for a nil one.
  for (const auto& member : status->GetObject()) {
    if (!json::is_zero(&member.value) && !(member.value.IsArray() && member.value.Empty())) {
      return false;
    }
  }
  return true;
}

// getChangeRequestJson.
Result<std::string> change_request_patch(const json::Value& vm, const std::vector<ChangeRequest>& changes) {
  Patch patch;
  json::Document values;
  auto& a = values.GetAllocator();
  if (status_empty(vm)) {
    json::Value status(rapidjson::kObjectType);
    json::set(status, "stateChangeRequests", change_requests(changes, a), a);
    patch.op("add", "/status", &status);
  } else {
    const json::Value* current = json::find_path(vm, {"status", "stateChangeRequests"});
    const json::Value null_value;
    patch.op("test", "/status/stateChangeRequests", current == nullptr ? &null_value : current);
    const bool none = current == nullptr || !current->IsArray() || current->Empty();
    json::Value list = change_requests(changes, a);
    if (none) {
      patch.op("add", "/status/stateChangeRequests", &list);
    } else if (changes.size() == 1 && changes.front().action == "Stop") {
      patch.op("replace", "/status/stateChangeRequests", &list);
    } else {
      return Error{"unable to complete request: stop/start already underway"};
    }
  }
  if (const json::Value* failure = json::find_path(vm, {"status", "startFailure"});
      failure != nullptr && !failure->IsNull()) {
    patch.op("remove", "/status/startFailure", nullptr);
  }
  return patch.str();
}

// getRunningPatch.
std::string running_patch(const json::Value& vm, bool running) {
  Patch patch;
  const json::Value* strategy = json::find_path(vm, {"spec", "runStrategy"});
  if (strategy != nullptr && !strategy->IsNull()) {
    const json::Value wanted(running ? "Always" : "Halted");
    patch.op("test", "/spec/runStrategy", strategy).op("replace", "/spec/runStrategy", &wanted);
  } else {
    const json::Value* current = json::find_path(vm, {"spec", "running"});
    const json::Value null_value;
    const json::Value wanted(running);
    patch.op("test", "/spec/running", current == nullptr ? &null_value : current)
        .op("replace", "/spec/running", &wanted);
  }
  return patch.str();
}

LifecyclePlan refused(ApiStatus status) {
  LifecyclePlan plan;
  plan.error = std::move(status);
  return plan;
}

bool dry_run_of(const RequestOptions& options) {
  return !options.dry_run.empty();
}

// The status write of a state change, or the plan's error when the list cannot take it.
LifecyclePlan with_change_requests(const json::Value& vm, const std::vector<ChangeRequest>& changes,
                                   const RequestOptions& options, LifecyclePlan plan = {}) {
  Result<std::string> patch = change_request_patch(vm, changes);
  if (!patch) {
    plan.error = internal_error(patch.error().message);
    return plan;
  }
  plan.writes.push_back(ApiWrite{ApiWrite::Target::vm_status, std::move(patch.value())});
  plan.dry_run = dry_run_of(options);
  return plan;
}

using fields::uid_of;

}  // namespace

LifecyclePlan plan_start(const json::Value& vm, const json::Value* vmi, const RequestOptions& options) {
  const std::string_view name = name_of(vm);
  if (vmi != nullptr && !is_final(*vmi) && phase_of(*vmi) != "Unknown" && !phase_of(*vmi).empty()) {
    return refused(conflict(vm_kind, name, "VM is already running"));
  }
  if (condition_true(vm, "ManualRecoveryRequired")) {
    return refused(conflict(vm_kind, name, manual_recovery_required));
  }
  const Result<std::string> strategy = run_strategy(vm);
  if (!strategy) {
    return refused(internal_error(strategy.error().message));
  }
  if (*strategy == "Halted") {
    // virt-api compares the template's startStrategy pointer with a local's address, so a paused
    // start always goes through a request, which the controller turns into runStrategy Always.
    if (options.paused) {
      return with_change_requests(vm, {ChangeRequest{"Start", "", true}}, options);
    }
    LifecyclePlan plan;
    plan.writes.push_back(ApiWrite{ApiWrite::Target::vm, running_patch(vm, true)});
    plan.dry_run = dry_run_of(options);
    return plan;
  }
  if (*strategy == "RerunOnFailure" || *strategy == "Manual") {
    bool restart = false;
    if ((*strategy == "RerunOnFailure" && vmi != nullptr && phase_of(*vmi) == "Succeeded") ||
        (*strategy == "Manual" && vmi != nullptr && is_final(*vmi))) {
      restart = true;
    } else if (*strategy == "RerunOnFailure" && vmi != nullptr && phase_of(*vmi) == "Failed") {
      return refused(conflict(vm_kind, name, "RerunOnFailure does not support starting VM from failed state"));
    }
    if (restart) {
      return with_change_requests(
          vm, {ChangeRequest{"Stop", uid_of(*vmi), false}, ChangeRequest{"Start", "", options.paused}}, options);
    }
    return with_change_requests(vm, {ChangeRequest{"Start", "", options.paused}}, options);
  }
  if (*strategy == "Always" || *strategy == "Once") {
    return refused(conflict(vm_kind, name, *strategy + " does not support manual start requests"));
  }
  return {};  // virt-api writes nothing for other strategies (WaitAsReceiver) and accepts
}

LifecyclePlan plan_stop(const json::Value& vm, const json::Value* vmi, const RequestOptions& options) {
  const std::string_view name = name_of(vm);
  const Result<std::string> strategy = run_strategy(vm);
  if (!strategy) {
    return refused(internal_error(strategy.error().message));
  }
  LifecyclePlan plan;
  plan.dry_run = dry_run_of(options);
  const bool running = vmi != nullptr && !is_final(*vmi);
  std::int64_t old_grace_period = 0;
  const json::Value* vmi_grace =
      vmi == nullptr ? nullptr : json::find_path(*vmi, {"spec", "terminationGracePeriodSeconds"});
  if (vmi_grace != nullptr && !vmi_grace->IsInt64()) {
    vmi_grace = nullptr;
  }
  if (running && options.grace_period) {
    Patch patch;
    const json::Value null_value;
    if (vmi_grace != nullptr) {
      old_grace_period = vmi_grace->GetInt64();
    }
    const json::Value wanted(static_cast<std::int64_t>(*options.grace_period));
    patch.op("test", "/spec/terminationGracePeriodSeconds", vmi_grace != nullptr ? vmi_grace : &null_value)
        .op("replace", "/spec/terminationGracePeriodSeconds", &wanted);
    plan.writes.push_back(ApiWrite{ApiWrite::Target::vmi, patch.str()});
  }
  if (*strategy == "Halted") {
    if (!running) {
      plan.error = conflict(vm_kind, name, vm_not_running);
      return plan;
    }
    if (!options.grace_period || (vmi_grace != nullptr && *options.grace_period >= old_grace_period)) {
      plan.error = conflict(vm_kind, name, "Halted only supports manual stop requests with a shorter graceperiod");
      return plan;
    }
    return with_change_requests(vm, {ChangeRequest{"Stop", uid_of(*vmi), false}}, options, std::move(plan));
  }
  if (*strategy == "RerunOnFailure" || *strategy == "Manual") {
    if (!running) {
      plan.error = conflict(vm_kind, name, vm_not_running);
      return plan;
    }
    return with_change_requests(vm, {ChangeRequest{"Stop", uid_of(*vmi), false}}, options, std::move(plan));
  }
  if (*strategy == "Always" || *strategy == "Once") {
    plan.writes.push_back(ApiWrite{ApiWrite::Target::vm, running_patch(vm, false)});
  }
  return plan;
}

LifecyclePlan plan_restart(const json::Value& vm, const json::Value* vmi, const RequestOptions& options) {
  const std::string_view name = name_of(vm);
  if (condition_true(vm, "VolumesChange")) {
    return refused(conflict(vm_kind, name, manual_recovery_required));
  }
  const Result<std::string> strategy = run_strategy(vm);
  if (!strategy) {
    return refused(internal_error(strategy.error().message));
  }
  if (*strategy == "Halted" || *strategy == "Once") {
    // "RunStategy" is virt-api's spelling.
    return refused(conflict(vm_kind, name, "RunStategy " + *strategy + " does not support manual restart requests"));
  }
  if (vmi == nullptr) {
    return refused(conflict(vm_kind, name, "VM is not running: Halted"));
  }
  LifecyclePlan plan =
      with_change_requests(vm, {ChangeRequest{"Stop", uid_of(*vmi)}, ChangeRequest{"Start", "", false}}, options);
  plan.delete_launcher_pod = !plan.error && options.grace_period && *options.grace_period == 0;
  return plan;
}

}  // namespace vmgate::subresources
