// The VMI status merge patch (vmi_status.hpp). Follows virt-handler's status of a domain
// (pkg/virt-handler/vm.go: the Ready condition from the domain's state, calculatePausedCondition).
#include "vmgate/kube/vmi_status.hpp"

namespace vmgate::kube {

json::Document vmi_status_patch(std::string_view uid, std::string_view phase, std::string_view reason, bool stopping,
                                bool domain_paused, std::string_view now) {
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value& metadata = json::ensure_object(patch, "metadata", a);
  json::set_string(metadata, "uid", uid, a);
  // startStrategy Paused or virtctl pause (virt-handler's calculatePausedCondition gives a
  // domain paused by the user the Paused condition, PausedByUser, and the pod's unpaused
  // readiness gate makes the VMI not Ready).
  const bool paused = phase == "Running" && !stopping && domain_paused;
  std::string_view state = "failed";
  if (phase == "Scheduled") {
    state = "starting";
  } else if (phase == "Running") {
    state = stopping ? "shutting-down" : paused ? "paused" : "running";
  } else if (phase == "Succeeded") {
    state = "shutoff";
  }
  json::set_string(json::ensure_object(metadata, "annotations", a), domain_state_annotation, state, a);
  json::Value& status = json::ensure_object(patch, "status", a);
  json::set_string(status, "phase", phase, a);
  if (phase == "Failed") {
    json::set_string(status, "reason", reason, a);
  }
  const bool ready = phase == "Running" && !stopping && !paused;
  json::Value condition(rapidjson::kObjectType);
  json::set_string(condition, "type", "Ready", a);
  json::set_string(condition, "status", ready ? "True" : "False", a);
  if (!ready) {
    std::string_view why = "DomainStopped";  // Succeeded, Failed
    if (phase == "Scheduled") {
      why = "DomainStarting";
    } else if (phase == "Running") {
      why = paused ? "DomainPaused" : "DomainStopping";
    }
    json::set_string(condition, "reason", why, a);
  }
  json::set_string(condition, "message", reason, a);
  json::set_string(condition, "lastTransitionTime", now, a);
  json::set(condition, "lastProbeTime", json::Value(), a);
  json::Value conditions(rapidjson::kArrayType);
  conditions.PushBack(condition, a);
  if (paused) {
    json::Value paused_condition(rapidjson::kObjectType);
    json::set_string(paused_condition, "type", "Paused", a);
    json::set_string(paused_condition, "status", "True", a);
    json::set_string(paused_condition, "reason", "PausedByUser", a);
    json::set_string(paused_condition, "message", "VMI was paused by user", a);
    json::set_string(paused_condition, "lastTransitionTime", now, a);
    json::set(paused_condition, "lastProbeTime", json::Value(), a);
    conditions.PushBack(paused_condition, a);
  }
  json::set(status, "conditions", std::move(conditions), a);
  return patch;
}

}  // namespace vmgate::kube
