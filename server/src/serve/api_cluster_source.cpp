#include "vmgate/server/api_cluster_source.hpp"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <functional>

namespace vmgate::serve {

std::optional<ReloadOutcome> ApiClusterSource::poll() {
  if (reported_sync_ || !cache_->synced()) {
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
  return out;
}

}  // namespace vmgate::serve
