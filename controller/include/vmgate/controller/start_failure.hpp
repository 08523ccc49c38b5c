#pragma once
// A VM's start-failure backoff (KubeVirt's vm.go: syncStartFailureStatus,
// calculateStartBackoffTime, startFailureBackoffTimeLeft): a VMI that ends before it ever ran
// is a start failure; the VM records it in status.startFailure, and the next VMI of a run
// strategy that restarts (Always, RerunOnFailure) waits 10 s × failures² plus up to half again,
// at most 5 minutes, so that a VM whose guest can never start costs a bounded number of writes
// (printableStatus CrashLoopBackOff meanwhile). A VMI that reaches Running clears it. Pure: the
// time is an input; the jitter KubeVirt draws at random comes from the failed VMI's uid, so
// failing VMs still spread out and planning twice gives the same answer.
#include <cstdint>
#include <string_view>

#include "vmgate/common/json.hpp"

namespace vmgate::controller {

/// KubeVirt's defaultMaxCrashLoopBackoffDelaySeconds.
inline constexpr std::int64_t max_start_backoff_seconds = 300;

/// calculateStartBackoffTime(fail_count, 300): 10 s × fail_count², plus a jitter in [0, half of
/// that] picked by `jitter_key`, at most 300 s. A count below 1 counts as 1.
std::int64_t start_backoff_seconds(std::int64_t fail_count, std::string_view jitter_key);

/// wasVMIInRunningPhase: the VMI's phaseTransitionTimestamps (or its phase) show Running.
bool vmi_ever_ran(const json::Value& vmi);

/// The VM's status.startFailure after this plan has seen `vmi` (may be null) under `strategy`:
/// null when there is none (or it is cleared), else {lastFailedVMIUID, retryAfterTimestamp,
/// consecutiveFailCount}. A failure already counted (same VMI uid) is kept as it is. `now`:
/// seconds since the epoch.
json::Document next_start_failure(const json::Value& vm, const json::Value* vmi, std::string_view strategy,
                                  std::int64_t now);

/// startFailureBackoffTimeLeft: seconds until `start_failure`'s retryAfterTimestamp, 0 when
/// that is past, unreadable or there is no start failure (`start_failure` null or not an object).
std::int64_t start_backoff_left(const json::Value& start_failure, std::int64_t now);

}  // namespace vmgate::controller
