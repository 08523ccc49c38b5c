// The VM's start-failure backoff (start_failure.hpp), after KubeVirt's vm.go.
#include "vmgate/controller/start_failure.hpp"

#include <algorithm>

#include "vmgate/kube/utc_time.hpp"

namespace vmgate::controller {
namespace {

constexpr std::int64_t min_interval_seconds = 10;

bool restarts(std::string_view strategy) {
  return strategy == "Always" || strategy == "RerunOnFailure" || strategy == "Once";
}

// FNV-1a: a stable spread of the jitter over VMIs; not a secret, not a security boundary.
std::uint64_t spread(std::string_view key) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (const char c : key) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return hash;
}

}  // namespace

std::int64_t start_backoff_seconds(std::int64_t fail_count, std::string_view jitter_key) {
  // Past 6 failures the quadratic term alone exceeds the cap; clamping the count first keeps
  // the arithmetic small whatever count a stored status claims.
  const std::int64_t count = std::clamp<std::int64_t>(fail_count, 1, 6);
  const std::int64_t interval = std::max(max_start_backoff_seconds / 30, min_interval_seconds);
  const std::int64_t delay = interval * count * count;
  const std::int64_t jitter = static_cast<std::int64_t>(spread(jitter_key) % static_cast<std::uint64_t>(delay / 2 + 1));
  return std::min(delay + jitter, max_start_backoff_seconds);
}

bool vmi_ever_ran(const json::Value& vmi) {
  const json::Value* status = json::find_object(vmi, "status");
  if (status == nullptr) {
    return false;
  }
  if (json::find_string(*status, "phase") == "Running") {
    return true;
  }
  const json::Value* transitions = json::find_array(*status, "phaseTransitionTimestamps");
  if (transitions == nullptr) {
    return false;
  }
  return std::any_of(transitions->Begin(), transitions->End(), [](const json::Value& transition) {
    return transition.IsObject() && json::find_string(transition, "phase") == "Running";
  });
}

json::Document next_start_failure(const json::Value& vm, const json::Value* vmi, std::string_view strategy,
                                  std::int64_t now) {
  json::Document out;  // null: none
  const json::Value* current = json::find_path(vm, {"status", "startFailure"});
  const bool recorded = current != nullptr && current->IsObject();
  if ((vmi != nullptr && vmi_ever_ran(*vmi)) || !restarts(strategy)) {
    return out;
  }
  const json::Value* status = vmi == nullptr ? nullptr : json::find_object(*vmi, "status");
  const std::string_view phase = status == nullptr ? std::string_view() : json::find_string(*status, "phase");
  const bool failed_early = phase == "Succeeded" || phase == "Failed";
  const json::Value* uid = vmi == nullptr ? nullptr : json::find_path(*vmi, {"metadata", "uid"});
  const std::string_view vmi_uid = uid != nullptr && uid->IsString() ? json::as_view(*uid) : std::string_view();
  if (!failed_early || (recorded && json::find_string(*current, "lastFailedVMIUID") == vmi_uid)) {
    if (recorded) {
      out.CopyFrom(*current, out.GetAllocator());
    }
    return out;
  }
  std::int64_t count = 1;
  if (recorded) {
    if (const json::Value* previous = json::find(*current, "consecutiveFailCount");
        previous != nullptr && previous->IsInt64() && previous->GetInt64() > 0 && previous->GetInt64() < 1000000) {
      count = previous->GetInt64() + 1;
    }
  }
  auto& a = out.GetAllocator();
  out.SetObject();
  json::set_string(out, "lastFailedVMIUID", vmi_uid, a);
  json::set_string(out, "retryAfterTimestamp", kube::format_utc_seconds(now + start_backoff_seconds(count, vmi_uid)),
                   a);
  json::set(out, "consecutiveFailCount", json::Value(count), a);
  return out;
}

std::int64_t start_backoff_left(const json::Value& start_failure, std::int64_t now) {
  if (!start_failure.IsObject()) {
    return 0;
  }
  const std::optional<std::int64_t> retry_after =
      kube::parse_utc_seconds(json::find_string(start_failure, "retryAfterTimestamp"));
  if (!retry_after || *retry_after <= now) {
    return 0;
  }
  // A retry time a tenant could not have written (the status subresource) but that a broken
  // writer might: never wait longer than the longest backoff.
  return std::min(*retry_after - now, max_start_backoff_seconds);
}

}  // namespace vmgate::controller
