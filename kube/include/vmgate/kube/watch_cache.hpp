#pragma once
// The cluster as admission reads it, kept current from the Kubernetes API: one informer per
// resource (list in pages, then watch from the list's resourceVersion with bookmarks; a 410 Gone
// re-lists; errors back off exponentially with jitter; a watch silent for longer than the idle
// timeout is restarted), feeding immutable snapshots that admissions read without ever waiting
// for the informers (each snapshot is swapped in whole; an admission keeps the one it started
// with). Objects missing from the cache are looked up live without blocking the admission
// (request_view(), live_lookup.hpp): a VM often arrives in the same `kubectl apply` as its
// instancetype or volume, before the watch event. Objects the rules cannot read are held and
// counted with their problem, and named to a VM that uses them.
// Thread-safety: snapshot(), request_view(), synced(), statuses() and lookup_stats() from any
// thread; start() and stop() from the owner.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/pipeline.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/live_lookup.hpp"
#include "vmgate/kube/request_view.hpp"

namespace vmgate::kube {

/// One resource the cache lists and watches.
struct ResourceSpec {
  admission::ObjectKind kind;
  std::string prefix;    // "/api/v1", "/apis/cdi.kubevirt.io/v1beta1"
  std::string resource;  // "persistentvolumeclaims"
  bool namespaced = true;
  bool live_lookup = false;    // GET on a cache miss
  std::string label_selector;  // empty: every object
  std::string only_namespace;  // set: that namespace's objects only (the KubeVirt CR)

  [[nodiscard]] std::string collection_path() const {
    return only_namespace.empty() ? prefix + "/" + resource : prefix + "/namespaces/" + only_namespace + "/" + resource;
  }
  [[nodiscard]] std::string object_path(std::string_view namespace_name, std::string_view name) const;
  [[nodiscard]] std::string api_version() const;  // "cdi.kubevirt.io/v1beta1", "v1"
};

/// What vmgate reads, with the verbs listed in the README's RBAC section: instancetypes and
/// preferences (both scopes), PVCs, DataVolumes, DataSources, VolumeSnapshots,
/// ControllerRevisions, and the KubeVirt CR of `kubevirt_namespace` only (KubeVirt's install
/// namespace, where virt-config reads it): a KubeVirt CR that a tenant creates in a namespace of
/// its own never configures vmgate.
std::vector<ResourceSpec> admission_resources(std::string_view kubevirt_namespace = "kubevirt");

struct CacheTuning {
  std::size_t page_size = 500;
  std::chrono::milliseconds request_deadline{30000};  // each list page, each connect
  std::chrono::seconds watch_timeout{300};            // the server ends a watch after this (+ up to 100 % jitter)
  // No byte (not even a bookmark: kube-apiserver sends one about every minute) for this long:
  // the watch is restarted.
  std::chrono::milliseconds watch_idle{150000};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30000};
  std::chrono::milliseconds not_served_recheck{60000};  // a resource whose API is not installed
  LookupTuning lookup;                                  // live lookups of what the cache misses
};

/// One informer's state, for /readyz, /metrics and the log.
struct ResourceStatus {
  std::string resource;  // "persistentvolumeclaims"
  bool synced = false;   // listed successfully at least once (or found not served)
  bool served = true;    // false: the API answered 404 for the resource (CRD not installed)
  std::size_t objects = 0;
  std::size_t unreadable = 0;  // of `objects`: held, but the rules cannot read them (CachedObject::problem)
  std::uint64_t lists = 0;
  std::uint64_t watch_restarts = 0;  // watches ended by an error, a stall or a 410
  double last_list_seconds = 0;
  std::int64_t last_event_unix = 0;  // the last list, event or bookmark; 0: none yet
  std::string last_error;            // empty once the last attempt succeeded
};

/// Log lines from the informer threads: level ("info", "warning", "error"), message, fields.
using CacheLog = std::function<void(std::string_view level, std::string_view message,
                                    const std::vector<std::pair<std::string, std::string>>& fields)>;

struct ListedCluster;

class WatchCache {
 public:
  /// Errors: the TLS settings of `config` unusable (ApiConnection::create's).
  static Result<std::unique_ptr<WatchCache>> create(ClientConfig config, const admission::Pipeline& pipeline,
                                                    CacheLog log, CacheTuning tuning = {},
                                                    std::vector<ResourceSpec> resources = admission_resources());
  WatchCache(const WatchCache&) = delete;
  WatchCache& operator=(const WatchCache&) = delete;
  ~WatchCache();  // stops

  /// Starts one thread per resource.
  void start();
  /// Stops and joins the threads; interrupts requests in flight. Idempotent.
  void stop();

  /// The current cluster view, without live lookups; nullptr until every resource synced once.
  [[nodiscard]] std::shared_ptr<const admission::ClusterView> snapshot() const;
  /// A view for one admission: the current snapshot plus live lookups of what it misses;
  /// nullptr until synced.
  [[nodiscard]] std::shared_ptr<RequestView> request_view() const;
  [[nodiscard]] LookupStats lookup_stats() const;
  [[nodiscard]] bool synced() const;
  [[nodiscard]] std::vector<ResourceStatus> statuses() const;
  /// Why the cache is not synced yet ("persistentvolumeclaims: list: 403 Forbidden: ..."), or "".
  [[nodiscard]] std::string not_synced_reason() const;
  /// Blocks until synced or `timeout` passes; returns synced().
  bool wait_synced(std::chrono::milliseconds timeout) const;

 private:
  friend Result<ListedCluster> list_cluster(const ClientConfig&, const admission::Pipeline&, const CacheTuning&,
                                            const std::vector<ResourceSpec>&);
  struct Impl;
  explicit WatchCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Lists every resource once (all pages) into an ObjectStore, for `vmgate check --kubeconfig`.
/// Resources the API does not serve are skipped with a note. Errors: any list that fails
/// (transport, 401, 403, ...), naming the resource and the server's reason.
struct ListedCluster {
  admission::ObjectStore store;
  std::vector<std::string> notes;
};
Result<ListedCluster> list_cluster(const ClientConfig& config, const admission::Pipeline& pipeline,
                                   const CacheTuning& tuning = {},
                                   const std::vector<ResourceSpec>& resources = admission_resources());

}  // namespace vmgate::kube
