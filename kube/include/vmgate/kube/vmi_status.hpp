#pragma once
// A VMI's status as the launcher's supervisor phases make it (docs/launcher.md, "Status in the
// VMI"; docs/node.md, "VMI status"): the launcher's `api` link and vmgate-node, which reads the
// launcher's status file, write the same merge patch. Pure; thread-safe.
// The VMI has no status subresource (KubeVirt's CRD), so the status is a JSON merge patch of the
// object carrying the VMI's uid: a VMI deleted and created again under the name refuses it (409).
#include <string_view>

#include "vmgate/common/json.hpp"

namespace vmgate::kube {

/// The annotation carrying the domain's state ("starting", "running", "paused", "shutting-down",
/// "shutoff", "failed").
inline constexpr const char* domain_state_annotation = "vmgate.kubevirt.io/domain-state";

/// The merge patch for a supervisor phase ("Scheduled", "Running", "Succeeded", "Failed") and
/// its one-line reason: metadata.uid (the precondition), status.phase, the Ready condition (True
/// only while Running, not paused and not stopping), a Paused condition (PausedByUser, as
/// virt-handler's calculatePausedCondition) while the domain is paused (started paused, or
/// `virtctl pause`), status.reason on failure, and the domain-state annotation. The conditions
/// are the whole array of the merge patch, so an unpaused domain's patch drops Paused.
/// `stopping`: a stop was requested. `paused`: the launcher says its domain is paused (only
/// counts while Running and not stopping). `now`: the conditions' lastTransitionTime.
json::Document vmi_status_patch(std::string_view uid, std::string_view phase, std::string_view reason, bool stopping,
                                bool paused, std::string_view now);

}  // namespace vmgate::kube
