// Leader election decisions (controller_lease.hpp), after client-go
// tools/leaderelection/leaderelection.go tryAcquireOrRenew and release.
#include "vmgate/controller/controller_lease.hpp"

namespace vmgate::controller {

Result<LeaseRecord> read_lease(const json::Value& lease) {
  const json::Value* metadata = json::find_object(lease, "metadata");
  if (metadata == nullptr) {
    return Error{"the Lease has no metadata"};
  }
  LeaseRecord record;
  record.exists = true;
  record.resource_version = json::find_string(*metadata, "resourceVersion");
  const json::Value* spec = json::find_object(lease, "spec");
  if (spec == nullptr) {
    return record;
  }
  record.holder = json::find_string(*spec, "holderIdentity");
  record.acquire_time = json::find_string(*spec, "acquireTime");
  record.renew_time = json::find_string(*spec, "renewTime");
  if (const json::Value* duration = json::find(*spec, "leaseDurationSeconds");
      duration != nullptr && duration->IsInt64()) {
    record.duration_seconds = duration->GetInt64();
  }
  if (const json::Value* transitions = json::find(*spec, "leaseTransitions");
      transitions != nullptr && transitions->IsInt64()) {
    record.transitions = transitions->GetInt64();
  }
  return record;
}

LeaseStep decide(const LeaseRecord& record, std::string_view identity, std::chrono::milliseconds unchanged_for) {
  if (!record.exists) {
    return LeaseStep::create;
  }
  if (record.holder == identity) {
    return LeaseStep::renew;
  }
  if (record.holder.empty()) {
    return LeaseStep::take_over;
  }
  // A record without a duration counts as expired once seen unchanged for a moment: a holder
  // that wrote it is not renewing properly.
  if (unchanged_for >= std::chrono::seconds(record.duration_seconds)) {
    return LeaseStep::take_over;
  }
  return LeaseStep::wait;
}

json::Document lease_body(const LeaseRecord& record, LeaseStep step, bool release, std::string_view namespace_name,
                          std::string_view name, std::string_view identity, std::int64_t duration_seconds,
                          std::string_view now) {
  json::Document lease(rapidjson::kObjectType);
  auto& a = lease.GetAllocator();
  json::set_string(lease, "apiVersion", "coordination.k8s.io/v1", a);
  json::set_string(lease, "kind", "Lease", a);
  json::Value& metadata = json::ensure_object(lease, "metadata", a);
  json::set_string(metadata, "name", name, a);
  json::set_string(metadata, "namespace", namespace_name, a);
  if (record.exists && !record.resource_version.empty()) {
    json::set_string(metadata, "resourceVersion", record.resource_version, a);  // optimistic concurrency
  }
  json::Value& spec = json::ensure_object(lease, "spec", a);
  json::set_string(spec, "holderIdentity", release ? std::string_view() : identity, a);
  json::set(spec, "leaseDurationSeconds", json::Value(release ? std::int64_t{1} : duration_seconds), a);
  const bool acquiring = step == LeaseStep::create || step == LeaseStep::take_over;
  json::set_string(spec, "acquireTime",
                   acquiring || record.acquire_time.empty() ? now : std::string_view(record.acquire_time), a);
  json::set_string(spec, "renewTime", now, a);
  json::set(spec, "leaseTransitions",
            json::Value(step == LeaseStep::take_over ? record.transitions + 1 : record.transitions), a);
  return lease;
}

}  // namespace vmgate::controller
