#pragma once
// vmgate serve's access log: one line per admission with identifiers and the decision, never
// the object (it may carry secrets), in the shape of every vmgate log line (vmgate/kube/log_line.hpp;
// docs/webhook.md, "Log lines").
#include <chrono>
#include <string>

#include "vmgate/server/admission_review.hpp"

namespace vmgate::serve {

/// {"ts":..,"level":"info","msg":"admission","uid":..,"webhook":..,"operation":..,"kind":..,
///  "namespace":..,"name":..,"dry_run":..,"decision":"allowed|denied|error","code":..,
///  "latency_ms":..[,"error":..]} and a line break. Pure; thread-safe.
std::string admission_line(std::chrono::system_clock::time_point now, webhook::Endpoint endpoint,
                           const webhook::ReviewSummary& summary, std::chrono::nanoseconds latency);

}  // namespace vmgate::serve
