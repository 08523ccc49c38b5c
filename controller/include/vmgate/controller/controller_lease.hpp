#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it
// (tryAcquireOrRenew): the holder renews spec.renewTime every retry period; another candidate
// takes the Lease over only when it has seen the record unchanged for a whole
// leaseDurationSeconds by its own clock (never comparing clocks across machines), or when the
// holder released it (empty holderIdentity). Every write is a PUT with the resourceVersion read
// (or a create), so two candidates never both win. Pure: the executor reads, writes and keeps
// the time of the last change seen. Thread-safe.
#include <chrono>
#include <cstdint>
#include <string>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::controller {

struct LeaseRecord {
  bool exists = false;
  std::string holder;
  std::int64_t duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  std::int64_t transitions = 0;
  std::string resource_version;
};

/// Reads a Lease object. Errors: not an object with metadata.
Result<LeaseRecord> read_lease(const json::Value& lease);

enum class LeaseStep {
  create,     // no Lease: POST one held by us
  renew,      // ours: PUT with a new renewTime
  take_over,  // released, or expired by our clock: PUT with us as holder, transitions + 1
  wait,       // another's, still valid
};

/// `unchanged_for`: how long this candidate has seen the record with the same holder and
/// renewTime (0 when it just changed).
LeaseStep decide(const LeaseRecord& record, std::string_view identity, std::chrono::milliseconds unchanged_for);

/// The Lease to write for `step` (create, renew, take_over) or for a release (`release`: an empty
/// holder and a 1 s duration, as client-go's ReleaseOnCancel). `now`: RFC 3339 with microseconds.
json::Document lease_body(const LeaseRecord& record, LeaseStep step, bool release, std::string_view namespace_name,
                          std::string_view name, std::string_view identity, std::int64_t duration_seconds,
                          std::string_view now);

}  // namespace vmgate::controller
