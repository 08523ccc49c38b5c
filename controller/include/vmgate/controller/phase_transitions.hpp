#pragma once
// A VMI's status.phaseTransitionTimestamps, one {phase, phaseTransitionTimestamp} per phase it
// entered (KubeVirt's virt-controller and virt-handler append one on each phase change). The
// admission core records Pending; the controller records the phases it writes and, for those
// the node agent writes (Running, Succeeded, Failed), the next time it sees them, so that a VM
// can tell a VMI that failed after running from one that never started (start_failure.hpp).
// Pure.
#include <string_view>

#include "vmgate/common/json.hpp"

namespace vmgate::controller {

/// The VMI's list as read (entries kept as they are, a list that is not one taken as empty) with
/// {phase, now} appended: a merge patch replaces the whole list.
json::Value phase_transitions_with(const json::Value& vmi, std::string_view phase, std::string_view now,
                                   json::Allocator& allocator);

/// The VMI has a phase that its list does not end with.
bool phase_transition_missing(const json::Value& vmi);

}  // namespace vmgate::controller
