#pragma once
// The cluster from the Kubernetes API for `vmgate serve --kubeconfig` and in a pod: the watch
// cache (kube/watch_cache.hpp) behind the server's ClusterSource interface, with its informers'
// state on /readyz and /metrics.
// Thread-safety: as ClusterSource; the cache's threads run from start() until destruction.
#include <cstdint>
#include <memory>
#include <string>

#include "vmgate/kube/watch_cache.hpp"
#include "vmgate/server/sources.hpp"

namespace vmgate::serve {

class ApiClusterSource final : public ClusterSource {
 public:
  explicit ApiClusterSource(std::unique_ptr<kube::WatchCache> cache) : cache_(std::move(cache)) {}

  /// Reports the first sync once ("synced 1234 objects").
  std::optional<ReloadOutcome> poll() override;
  [[nodiscard]] std::shared_ptr<const admission::ClusterView> current() const override { return cache_->snapshot(); }
  [[nodiscard]] std::shared_ptr<kube::RequestView> request_view() const override { return cache_->request_view(); }
  [[nodiscard]] std::size_t object_count() const override;
  [[nodiscard]] std::string not_ready_reason() const override { return cache_->not_synced_reason(); }
  /// Per resource: vmgate_cluster_cache_{objects,unreadable_objects,synced,served,lists_total,
  /// watch_restarts_total,last_list_duration_seconds,last_event_age_seconds}; the live lookups:
  /// vmgate_live_lookups_total{result}, vmgate_live_lookup_{queued,in_flight,breaker_open},
  /// vmgate_live_lookup_breaker_trips_total.
  [[nodiscard]] std::string metrics_text() const override;

  [[nodiscard]] kube::WatchCache& cache() { return *cache_; }

 private:
  std::unique_ptr<kube::WatchCache> cache_;
  bool reported_sync_ = false;
  std::uint64_t lists_seen_ = 0;  // the informers' lists counted at the last poll()
};

}  // namespace vmgate::serve
