#include "vmgate/server/api_cluster_source.hpp"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <functional>

namespace vmgate::serve {

std::optional<ReloadOutcome> ApiClusterSource::poll() {
  // A relist (after an apiserver restart, a 410) parsed whole list pages on an informer's thread,
  // each thread with its own malloc arena: give that memory back, or every restart leaves the
  // process a few megabytes larger.
  std::uint64_t lists = 0;
  for (const kube::ResourceStatus& status : cache_->statuses()) {
    lists += status.lists;
  }
  const bool relisted = lists != lists_seen_;
  lists_seen_ = lists;
  if (reported_sync_ || !cache_->synced()) {
    if (relisted && reported_sync_) {
      ::malloc_trim(0);
    }
    return std::nullopt;
  }
  reported_sync_ = true;
  // The first sync parsed every list page on the informers' threads; give those pages' memory
  // back to the kernel once (serve keeps freed heap otherwise, for the requests' sake).
  ::malloc_trim(0);
  return ReloadOutcome{true, "cluster cache synced: " + std::to_string(object_count()) + " objects"};
}

std::size_t ApiClusterSource::object_count() const {
  std::size_t objects = 0;
  for (const kube::ResourceStatus& status : cache_->statuses()) {
    objects += status.objects;
  }
  return objects;
}

std::string ApiClusterSource::metrics_text() const {
  const std::vector<kube::ResourceStatus> statuses = cache_->statuses();
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string out;
  const auto family = [&](std::string_view name, std::string_view type, std::string_view help,
                          const std::function<double(const kube::ResourceStatus&)>& value) {
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
    for (const kube::ResourceStatus& status : statuses) {
      std::array<char, 64> number{};
      std::snprintf(number.data(), number.size(), "%.17g", value(status));
      out.append(name).append("{resource=\"").append(status.resource).append("\"} ").append(number.data()).append("\n");
    }
  };
  family("vmgate_cluster_cache_objects", "gauge", "Objects of the resource in the watch cache.",
         [](const kube::ResourceStatus& s) { return static_cast<double>(s.objects); });
  family("vmgate_cluster_cache_unreadable_objects", "gauge",
         "Objects held but unreadable by the admission rules (a VM using one is refused naming it).",
         [](const kube::ResourceStatus& s) { return static_cast<double>(s.unreadable); });
  family("vmgate_cluster_cache_synced", "gauge", "1 once the resource was listed (or found not served).",
         [](const kube::ResourceStatus& s) { return s.synced ? 1.0 : 0.0; });
  family("vmgate_cluster_cache_served", "gauge", "0 when the API server does not serve the resource (no CRD).",
         [](const kube::ResourceStatus& s) { return s.served ? 1.0 : 0.0; });
  family("vmgate_cluster_cache_lists_total", "counter", "Complete lists of the resource.",
         [](const kube::ResourceStatus& s) { return static_cast<double>(s.lists); });
  family("vmgate_cluster_cache_watch_restarts_total", "counter",
         "Watches ended by an error, a stall or 410 Gone, and started again.",
         [](const kube::ResourceStatus& s) { return static_cast<double>(s.watch_restarts); });
  family("vmgate_cluster_cache_last_list_duration_seconds", "gauge", "How long the last complete list took.",
         [](const kube::ResourceStatus& s) { return s.last_list_seconds; });
  family("vmgate_cluster_cache_last_event_age_seconds", "gauge",
         "Seconds since the last list, event or bookmark of the resource (-1: none yet).",
         [now](const kube::ResourceStatus& s) {
           return s.last_event_unix == 0 ? -1.0 : static_cast<double>(now - s.last_event_unix);
         });
  const kube::LookupStats lookups = cache_->lookup_stats();
  out +=
      "# HELP vmgate_live_lookups_total Objects the cache missed, by how the live lookup answered: found, absent "
      "(404), failed (the GET failed), shed (no GET: the breaker was open or the queue full), coalesced (joined a "
      "GET in flight), recalled (a remembered answer).\n"
      "# TYPE vmgate_live_lookups_total counter\n";
  for (const auto& [result, count] : {std::pair<std::string_view, std::uint64_t>{"found", lookups.found},
                                      {"absent", lookups.absent},
                                      {"failed", lookups.failed},
                                      {"shed", lookups.shed},
                                      {"coalesced", lookups.coalesced},
                                      {"recalled", lookups.recalled}}) {
    out.append("vmgate_live_lookups_total{result=\"")
        .append(result)
        .append("\"} ")
        .append(std::to_string(count))
        .append("\n");
  }
  const auto gauge = [&out](std::string_view name, std::string_view type, std::string_view help, std::uint64_t value) {
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
    out.append(name).append(" ").append(std::to_string(value)).append("\n");
  };
  gauge("vmgate_live_lookup_queued", "gauge", "Live lookups waiting for a worker.", lookups.queued);
  gauge("vmgate_live_lookup_in_flight", "gauge", "Live lookup GETs in flight.", lookups.in_flight);
  gauge("vmgate_live_lookup_breaker_open", "gauge",
        "1 while live lookups are paused after repeated failures (misses are read as absent at once).",
        lookups.breaker_open ? 1 : 0);
  gauge("vmgate_live_lookup_breaker_trips_total", "counter", "Times the live lookups were paused after failures.",
        lookups.breaker_trips);
  return out;
}

}  // namespace vmgate::serve
