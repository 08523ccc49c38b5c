#pragma once
// The VM controller's decisions (docs/controller.md): from the VirtualMachines, the
// VirtualMachineInstances and the launcher pods as last listed, the writes that bring them one
// step closer to what the run strategies ask, as KubeVirt's virt-controller decides them
// (pkg/virt-controller/watch/vm/vm.go syncRunStrategy and setPrintableStatus,
// pkg/virt-controller/watch/vmi/ for the VMI phase from its pod). Pure: the VMI of a VM comes
// from a function the caller gives (the admission core's expansion), the time is an input; no
// I/O. Thread-safe. Every write is keyed by name and checked by uid, so that planning twice
// from the same state, or from a state a write has not reached yet, is harmless: creates of an
// existing name fail with 409, deletes carry the uid as a precondition.
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/controller/controller_pod.hpp"

namespace vmgate::controller {

/// The finalizer KubeVirt's VM controller puts on the VMIs it creates (and vmgate's expansion
/// too); the controller removes it once the VMI's pod is gone.
inline constexpr const char* vmi_finalizer = "kubevirt.io/virtualMachineControllerFinalize";
/// The finalizer KubeVirt's VMI defaults add (virt-handler removes it once the domain is gone;
/// here the controller does, once the launcher pod is gone).
inline constexpr const char* foreground_finalizer = "kubevirt.io/foregroundDeleteVirtualMachine";

enum class ActionKind {
  create_vmi,
  delete_vmi,
  create_pod,
  delete_pod,
  patch_vmi,        // JSON merge patch of the VMI (its status: the CRD has no status subresource)
  patch_vm_status,  // JSON merge patch of the VM's status subresource; with metadata.resourceVersion
                    // (409 on a VM changed since) when it rewrites status.stateChangeRequests
  patch_vm_spec,    // JSON patch (test + replace, or add) of the VM's spec.runStrategy or spec.running:
                    // a Start request on a Halted VM (vm.go syncRunStrategy)
  remove_finalizer  // JSON patch (test + replace) of metadata.finalizers; `kind_name` says which object
};

struct Action {
  ActionKind kind = ActionKind::create_vmi;
  std::string kind_name;  // "VirtualMachine", "VirtualMachineInstance", "Pod"
  std::string namespace_name;
  std::string name;
  std::string uid;      // deletes and patches: the object's uid (a precondition)
  json::Document body;  // create: the object; patches: the patch document
  std::string reason;   // one line for the log
};

/// What the planner reads. Pointers into documents the caller keeps alive during plan().
struct State {
  std::vector<const json::Value*> vms;
  std::vector<const json::Value*> vmis;
  std::vector<const json::Value*> pods;  // launcher pods (label kubevirt.io=virt-launcher)
  /// Pods created by an earlier plan that the pod list does not show yet ("namespace/name"):
  /// taken as existing, so that a lagging watch neither creates them again nor fails their VMI.
  std::set<std::string> expected_pods;
  /// VMIs ("namespace/name") an earlier plan created that the VMI list does not show yet: not
  /// created again (a replan woken by another watch's event would otherwise create a second
  /// time and be refused 409), and their VM shown Starting meanwhile.
  std::set<std::string> expected_vmis;
  std::string now;  // RFC 3339, for condition transition times
};

struct PlanSettings {
  PodSettings pod;
  /// The VMI a VM starts: the admission core's expansion (Pipeline::expand). Errors are logged
  /// and reported in the VM's status; the VM is retried on the next plan.
  std::function<Result<json::Document>(const json::Value& vm)> build_vmi;
  /// The admission core's verdict on a VMI as `vmgate serve` would give it for the VMI's CREATE
  /// (Pipeline::admit: mutate, then validate) under the cluster's current configuration. Asked
  /// before a VMI's launcher pod is rendered, because a VMI stored where the webhooks do not
  /// reach (an excluded namespace, a `failurePolicy: Ignore` outage) was never judged: a denied
  /// VMI gets no pod and goes Failed instead. `made_by_controller`: the VMI is controlled by a
  /// VM the planner sees, so it was created by this controller (KubeVirt's service account,
  /// which may set the reserved kubevirt.io/ labels); a VMI of nobody's is judged as a user's.
  /// Unset: every VMI passes.
  std::function<admission::Verdict(const json::Value& vmi, bool made_by_controller)> admit_vmi;
};

/// The reason of the VMI's Synchronized condition when admission denies it at pod creation
/// (lifecycle.go's "FailedCreateValidation", which virt-controller uses for the network rules it
/// re-checks there).
inline constexpr const char* failed_create_validation_reason = "FailedCreateValidation";

/// "failed create validation: <field>: <message>, ..." (lifecycle.go's wording), each cause with
/// its field path when it has one; a denial without causes gives its message.
std::string denial_message(const admission::Verdict& verdict);

/// The run strategy of a VM: spec.runStrategy, else spec.running (true: Always, false or
/// absent: Halted), as VirtualMachine.RunStrategy().
std::string run_strategy(const json::Value& vm);

/// The VM status KubeVirt's controller would show for `vm` with `vmi` (may be null):
/// printableStatus, ready, created, runStrategy, startFailure and the Ready condition (not
/// stateChangeRequests: plan() decides those).
/// `start_expected`: the plan is creating the VMI now. `start_failure`: the VM's start failure
/// as next_start_failure() gives it (null or absent: none, and a recorded one is removed).
json::Document vm_status(const json::Value& vm, const json::Value* vmi, bool start_expected, std::string_view now,
                         const json::Value* start_failure = nullptr);

/// The next writes. Never throws; objects it cannot read are skipped with an Action-free note in
/// `notes` (one line each) when given. `replan_within`, when given, is lowered to the time after
/// which a plan would do what this one held back (a VM's start failure backoff ending).
std::vector<Action> plan(const State& state, const PlanSettings& settings, std::vector<std::string>* notes = nullptr,
                         std::optional<std::chrono::seconds>* replan_within = nullptr);

std::string_view to_string(ActionKind kind);

}  // namespace vmgate::controller
