// The watch cache (watch_cache.hpp): informers, snapshots and live lookups.
#include "vmgate/kube/watch_cache.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/request_view.hpp"

namespace vmgate::kube {

namespace {

using Clock = std::chrono::steady_clock;
using admission::ObjectKind;

constexpr std::size_t kind_count = static_cast<std::size_t>(ObjectKind::kubevirt) + 1;

std::size_t slot(ObjectKind kind) {
  return static_cast<std::size_t>(kind);
}

using ObjectPtr = CachedObjectPtr;
using KindIndex = std::unordered_map<std::string, ObjectPtr>;

std::string object_key(ObjectKind kind, std::string_view namespace_name, std::string_view name) {
  if (!admission::is_namespaced(kind)) {
    return std::string(name);
  }
  std::string key;
  key.reserve(namespace_name.size() + 1 + name.size());
  key.append(namespace_name).append("/").append(name);
  return key;
}

std::string key_of(ObjectKind kind, const json::Value& object) {
  const json::Value* metadata = json::find_object(object, "metadata");
  if (metadata == nullptr) {
    return {};
  }
  return object_key(kind, json::find_string(*metadata, "namespace"), json::find_string(*metadata, "name"));
}

std::string resource_version_of(const json::Value& object) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata == nullptr ? std::string() : std::string(json::find_string(*metadata, "resourceVersion"));
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The object as the cache holds it; one the rules cannot read is held with its problem (counted,
// and named to a VM that uses it), not left out.
CachedObjectPtr checked_object(const admission::Pipeline& pipeline, const json::Value& source, std::size_t text_bytes,
                               std::string_view kind, std::string_view api_version) {
  auto object = std::make_shared<CachedObject>(source, text_bytes, kind, api_version);
  if (admission::ErrorList problems = pipeline.check_cluster_object(object->value); !problems.empty()) {
    object->problem = problems.front().message;
  }
  return object;
}

std::string describe_refusal(std::string_view what, const HttpResponse& response) {
  std::string reason = std::to_string(response.status);
  switch (response.status) {
    case 401:
      reason += " Unauthorized";
      break;
    case 403:
      reason += " Forbidden";
      break;
    case 404:
      reason += " Not Found";
      break;
    case 410:
      reason += " Gone";
      break;
    case 429:
      reason += " Too Many Requests";
      break;
    default:
      break;
  }
  return std::string(what) + ": " + reason + ": " + status_message(response);
}

// The KubeVirt CR configuration of an index (the install namespace's CRs only). A cluster has
// one; with several, KubeVirt's GetConfigFromKubeVirtCR: none being deleted, one that virt-operator
// deployed (a status.phase) before one it did not, then the first by name, so that the choice
// does not change from one list to the next.
std::shared_ptr<const admission::ClusterConfig> config_of(const KindIndex& kubevirts, std::string& problem) {
  const auto rank = [](const CachedObject& kubevirt) {
    const json::Value* metadata = json::find_object(kubevirt.value, "metadata");
    if (metadata != nullptr && json::has(*metadata, "deletionTimestamp")) {
      return 2;
    }
    const json::Value* status = json::find_object(kubevirt.value, "status");
    return status != nullptr && !json::find_string(*status, "phase").empty() ? 0 : 1;
  };
  const auto first = std::min_element(kubevirts.begin(), kubevirts.end(), [&](const auto& a, const auto& b) {
    return std::pair(rank(*a.second), a.first) < std::pair(rank(*b.second), b.first);
  });
  if (first == kubevirts.end() || rank(*first->second) == 2) {
    return std::make_shared<const admission::ClusterConfig>();
  }
  Result<admission::ClusterConfig> config = admission::ClusterConfig::from_kubevirt(first->second->value);
  if (!config) {
    problem = "KubeVirt CR " + first->first + ": " + config.error().message + " (using the defaults)";
    return std::make_shared<const admission::ClusterConfig>();
  }
  return std::make_shared<const admission::ClusterConfig>(std::move(config.value()));
}

}  // namespace

std::string ResourceSpec::api_version() const {
  constexpr std::string_view apis = "/apis/";
  if (prefix.starts_with(apis)) {
    return prefix.substr(apis.size());
  }
  return "v1";  // the core group: "/api/v1"
}

std::string ResourceSpec::object_path(std::string_view namespace_name, std::string_view name) const {
  const std::string escaped_name = query_escape(name);
  if (!namespaced) {
    return prefix + "/" + resource + "/" + escaped_name;
  }
  return prefix + "/namespaces/" + query_escape(namespace_name) + "/" + resource + "/" + escaped_name;
}

std::vector<ResourceSpec> admission_resources(std::string_view kubevirt_namespace) {
  const std::string instancetypes = "/apis/instancetype.kubevirt.io/v1beta1";
  const std::string cdi = "/apis/cdi.kubevirt.io/v1beta1";
  // Every kind but the KubeVirt CR is also looked up live on a miss: one `kubectl apply -f`
  // often creates an instancetype, a preference or a volume and the VM naming it, and the VM
  // can reach the webhook before the watch event of the object does.
  return {
      {ObjectKind::instancetype, instancetypes, "virtualmachineinstancetypes", true, true, {}, {}},
      {ObjectKind::cluster_instancetype, instancetypes, "virtualmachineclusterinstancetypes", false, true, {}, {}},
      {ObjectKind::preference, instancetypes, "virtualmachinepreferences", true, true, {}, {}},
      {ObjectKind::cluster_preference, instancetypes, "virtualmachineclusterpreferences", false, true, {}, {}},
      {ObjectKind::persistent_volume_claim, "/api/v1", "persistentvolumeclaims", true, true, {}, {}},
      {ObjectKind::data_volume, cdi, "datavolumes", true, true, {}, {}},
      {ObjectKind::data_source, cdi, "datasources", true, true, {}, {}},
      {ObjectKind::volume_snapshot, "/apis/snapshot.storage.k8s.io/v1", "volumesnapshots", true, true, {}, {}},
      // Only the revisions KubeVirt writes for instancetypes and preferences (it labels them);
      // one written by hand is found by the live lookup.
      {ObjectKind::controller_revision,
       "/apis/apps/v1",
       "controllerrevisions",
       true,
       true,
       "instancetype.kubevirt.io/object-kind",
       {}},
      {ObjectKind::kubevirt, "/apis/kubevirt.io/v1", "kubevirts", true, false, {}, std::string(kubevirt_namespace)},
  };
}

// ---------------------------------------------------------------- live lookups

namespace {

// A live lookup's GETs on a connection of its own. Found objects are checked as the informers
// check them: one the rules cannot read comes back with its problem.
class ApiFetcher final : public ObjectFetcher {
 public:
  ApiFetcher(std::unique_ptr<ApiConnection> connection, const admission::Pipeline& pipeline,
             const std::vector<ResourceSpec>& resources)
      : connection_(std::move(connection)), pipeline_(pipeline), resources_(resources) {}

  FetchAnswer get(const ObjectRef& ref, std::chrono::milliseconds deadline) override {
    const ResourceSpec* spec = nullptr;
    for (const ResourceSpec& candidate : resources_) {
      if (candidate.kind == ref.kind && candidate.live_lookup) {
        spec = &candidate;
      }
    }
    if (spec == nullptr) {
      return FetchAnswer{FetchAnswer::Outcome::failed, nullptr, "not looked up live"};
    }
    Result<HttpResponse, TransportError> response =
        connection_->get(spec->object_path(ref.namespace_name, ref.name), deadline);
    if (!response) {
      return FetchAnswer{FetchAnswer::Outcome::failed, nullptr, response.error().message};
    }
    if (response->status == 404) {
      return FetchAnswer{FetchAnswer::Outcome::absent, nullptr, {}};
    }
    if (response->status != 200) {
      return FetchAnswer{FetchAnswer::Outcome::failed, nullptr, describe_refusal("GET " + spec->resource, *response)};
    }
    Result<json::Document, json::DecodeError> parsed = json::parse_json(response->body);
    if (!parsed || !parsed->IsObject()) {
      return FetchAnswer{FetchAnswer::Outcome::failed, nullptr, "GET " + spec->resource + ": not a JSON object"};
    }
    return FetchAnswer{
        FetchAnswer::Outcome::found,
        checked_object(pipeline_, *parsed, response->body.size(), admission::kind_name(ref.kind), spec->api_version()),
        {}};
  }

  void cancel() override { connection_->cancel(); }

 private:
  std::unique_ptr<ApiConnection> connection_;
  const admission::Pipeline& pipeline_;
  const std::vector<ResourceSpec>& resources_;
};

// ---------------------------------------------------------------- the snapshot admissions read

class CacheView final : public admission::ClusterView {
 public:
  CacheView(std::array<std::shared_ptr<const KindIndex>, kind_count> indexes,
            std::shared_ptr<const admission::ClusterConfig> config)
      : indexes_(std::move(indexes)), config_(std::move(config)) {}

  [[nodiscard]] const json::Value* find(ObjectKind kind, std::string_view namespace_name,
                                        std::string_view name) const override {
    const CachedObject* object = lookup(kind, namespace_name, name);
    return object != nullptr && object->problem.empty() ? &object->value : nullptr;
  }

  [[nodiscard]] std::string_view unreadable(ObjectKind kind, std::string_view namespace_name,
                                            std::string_view name) const override {
    const CachedObject* object = lookup(kind, namespace_name, name);
    return object != nullptr ? std::string_view(object->problem) : std::string_view();
  }

  [[nodiscard]] const admission::ClusterConfig& config() const override { return *config_; }

 private:
  [[nodiscard]] const CachedObject* lookup(ObjectKind kind, std::string_view namespace_name,
                                           std::string_view name) const {
    const KindIndex* index = indexes_[slot(kind)].get();
    if (index == nullptr) {
      return nullptr;
    }
    const auto found = index->find(object_key(kind, namespace_name, name));
    return found != index->end() ? found->second.get() : nullptr;
  }

  std::array<std::shared_ptr<const KindIndex>, kind_count> indexes_;
  std::shared_ptr<const admission::ClusterConfig> config_;
};

}  // namespace

// ---------------------------------------------------------------- informers

struct WatchCache::Impl {
  Impl(ClientConfig client_config, const admission::Pipeline& rules, CacheLog sink, CacheTuning settings,
       std::vector<ResourceSpec> specs)
      : config(std::move(client_config)),
        pipeline(rules),
        log(std::move(sink)),
        tuning(settings),
        resources(std::move(specs)) {}

  ClientConfig config;
  const admission::Pipeline& pipeline;
  CacheLog log;
  CacheTuning tuning;
  std::vector<ResourceSpec> resources;
  std::shared_ptr<LiveLookup> live;

  std::atomic<bool> stopping{false};
  mutable std::mutex wake_mutex;
  mutable std::condition_variable wake;  // sleeps end early on stop(); waiters for sync
  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<ApiConnection>> connections;  // one per resource, for cancel()

  mutable std::mutex state_mutex;
  std::array<std::shared_ptr<const KindIndex>, kind_count> indexes;
  std::shared_ptr<const admission::ClusterConfig> cluster_config = std::make_shared<const admission::ClusterConfig>();
  std::vector<ResourceStatus> statuses;  // parallel to resources
  std::shared_ptr<const admission::ClusterView> current;
  std::size_t synced_count = 0;

  void emit(std::string_view level, std::string_view message,
            const std::vector<std::pair<std::string, std::string>>& fields) {
    if (log) {
      log(level, message, fields);
    }
  }

  // Sleeps up to `duration`; false when stop() interrupted it.
  bool sleep(std::chrono::milliseconds duration) {
    std::unique_lock lock(wake_mutex);
    return !wake.wait_for(lock, duration, [this] { return stopping.load(); });
  }

  void update_status(std::size_t index, const std::function<void(ResourceStatus&)>& change) {
    const std::lock_guard lock(state_mutex);
    change(statuses[index]);
  }

  // Publishes `objects` as the resource's index; the first time, counts it as synced.
  void publish(std::size_t index, const KindIndex& objects) {
    const ResourceSpec& spec = resources[index];
    auto copy = std::make_shared<const KindIndex>(objects);
    std::string config_problem;
    std::shared_ptr<const admission::ClusterConfig> new_config;
    if (spec.kind == ObjectKind::kubevirt) {
      new_config = config_of(*copy, config_problem);
    }
    bool became_synced = false;
    {
      const std::lock_guard lock(state_mutex);
      if (new_config) {
        cluster_config = new_config;
      }
      ResourceStatus& status = statuses[index];
      if (!status.synced) {
        status.synced = true;
        ++synced_count;
        became_synced = synced_count == resources.size();
      }
      status.objects = copy->size();
      status.unreadable = static_cast<std::size_t>(
          std::count_if(copy->begin(), copy->end(), [](const auto& entry) { return !entry.second->problem.empty(); }));
      indexes[slot(spec.kind)] = std::move(copy);
      if (synced_count == resources.size()) {
        current = std::make_shared<const CacheView>(indexes, cluster_config);
      }
    }
    if (!config_problem.empty()) {
      emit("error", "cluster configuration", {{"problem", config_problem}});
    }
    if (became_synced) {
      emit("info", "cluster cache synced", {});
      const std::lock_guard lock(wake_mutex);
      wake.notify_all();
    }
  }

  // Adds or replaces an object. One the rules cannot read (a malformed instancetype or
  // preference, a quantity beyond their range: the apiserver's schema lets some through) is held
  // with its problem and logged once per change.
  void upsert(std::size_t index, KindIndex& objects, const json::Value& object, std::size_t size_hint) {
    const ResourceSpec& spec = resources[index];
    std::string key = key_of(spec.kind, object);
    if (key.empty()) {
      return;
    }
    CachedObjectPtr cached =
        checked_object(pipeline, object, size_hint, admission::kind_name(spec.kind), spec.api_version());
    if (!cached->problem.empty()) {
      emit("warning", "cluster object unreadable by the rules: a VM using it is refused with this problem",
           {{"resource", spec.resource}, {"object", key}, {"problem", cached->problem}});
    }
    objects[std::move(key)] = std::move(cached);
  }

  // The watch saw the object: a remembered live answer about it no longer counts.
  void forget_live(std::size_t index, const json::Value& object) {
    const json::Value* metadata = json::find_object(object, "metadata");
    if (metadata != nullptr) {
      live->forget(resources[index].kind, json::find_string(*metadata, "namespace"),
                   json::find_string(*metadata, "name"));
    }
  }

  std::chrono::milliseconds jittered(std::chrono::milliseconds delay, std::mt19937_64& random) const {
    std::uniform_int_distribution<std::int64_t> spread(delay.count() / 2, std::max<std::int64_t>(delay.count(), 1));
    return std::chrono::milliseconds(spread(random));
  }

  enum class ListOutcome { listed, not_served, failed };

  // Lists every page into `objects`; sets `resource_version`.
  ListOutcome list(std::size_t index, ApiConnection& connection, KindIndex& objects, std::string& resource_version) {
    const ResourceSpec& spec = resources[index];
    const auto started = Clock::now();
    KindIndex listed;
    std::string continue_token;
    do {
      std::string target = spec.collection_path() + "?limit=" + std::to_string(tuning.page_size);
      if (!spec.label_selector.empty()) {
        target += "&labelSelector=" + query_escape(spec.label_selector);
      }
      if (!continue_token.empty()) {
        target += "&continue=" + query_escape(continue_token);
      }
      Result<HttpResponse, TransportError> response = connection.get(target, tuning.request_deadline);
      if (!response) {
        fail(index, "list " + spec.resource + ": " + response.error().message);
        return ListOutcome::failed;
      }
      if (response->status == 404) {
        return ListOutcome::not_served;
      }
      if (response->status == 410 && !continue_token.empty()) {
        continue_token.clear();  // the continue token expired: start over
        listed.clear();
        continue;
      }
      if (response->status != 200) {
        fail(index, describe_refusal("list " + spec.resource, *response));
        return ListOutcome::failed;
      }
      Result<json::Document, json::DecodeError> page = json::parse_json(response->body);
      const json::Value* items = page ? json::find_array(*page, "items") : nullptr;
      const json::Value* metadata = page ? json::find_object(*page, "metadata") : nullptr;
      if (items == nullptr || metadata == nullptr) {
        fail(index, "list " + spec.resource + ": the answer is not a list" +
                        (page ? std::string() : ": " + page.error().message));
        return ListOutcome::failed;
      }
      const std::size_t size_hint = items->Size() == 0 ? 0 : response->body.size() / items->Size();
      for (const json::Value& item : items->GetArray()) {
        upsert(index, listed, item, size_hint);
      }
      continue_token = std::string(json::find_string(*metadata, "continue"));
      resource_version = std::string(json::find_string(*metadata, "resourceVersion"));
    } while (!continue_token.empty() && !stopping.load());
    objects = std::move(listed);
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    update_status(index, [&](ResourceStatus& status) {
      ++status.lists;
      status.last_list_seconds = seconds;
      status.last_event_unix = unix_now();
      status.last_error.clear();
    });
    return ListOutcome::listed;
  }

  void fail(std::size_t index, const std::string& message) {
    bool changed = false;
    update_status(index, [&](ResourceStatus& status) {
      changed = status.last_error != message;
      status.last_error = message;
    });
    if (changed && !stopping.load()) {
      emit("error", "cluster cache", {{"resource", resources[index].resource}, {"error", message}});
    }
  }

  // broken: the watch was up (200) and then failed (a stall, a closed connection): watched again
  // after the initial backoff, since the server was healthy a moment ago.
  enum class WatchOutcome { ended, relist, failed, broken };

  WatchOutcome watch(std::size_t index, ApiConnection& connection, KindIndex& objects, std::string& resource_version,
                     std::mt19937_64& random) {
    const ResourceSpec& spec = resources[index];
    std::uniform_int_distribution<std::int64_t> extra(0, tuning.watch_timeout.count());
    std::string target = spec.collection_path() +
                         "?watch=1&allowWatchBookmarks=true&resourceVersion=" + query_escape(resource_version) +
                         "&timeoutSeconds=" + std::to_string(tuning.watch_timeout.count() + extra(random));
    if (!spec.label_selector.empty()) {
      target += "&labelSelector=" + query_escape(spec.label_selector);
    }
    bool changed = false;
    bool gone = false;
    std::string watch_error;
    const auto on_line = [&](std::string_view line) {
      if (stopping.load()) {
        return false;
      }
      Result<json::Document, json::DecodeError> event = json::parse_json(line);
      const json::Value* object = event ? json::find_object(*event, "object") : nullptr;
      if (object == nullptr) {
        watch_error = "watch " + spec.resource + ": an event that is not a watch event";
        return false;
      }
      const std::string_view type = json::find_string(*event, "type");
      update_status(index, [](ResourceStatus& status) { status.last_event_unix = unix_now(); });
      if (type == "ERROR") {
        const json::Value* code = json::find(*object, "code");
        gone = code != nullptr && code->IsInt() && code->GetInt() == 410;
        watch_error = "watch " + spec.resource + ": " + std::string(json::find_string(*object, "message"));
        return false;
      }
      if (const std::string version = resource_version_of(*object); !version.empty()) {
        resource_version = version;
      }
      if (type == "ADDED" || type == "MODIFIED") {
        upsert(index, objects, *object, line.size());
        forget_live(index, *object);
        changed = true;
      } else if (type == "DELETED") {
        objects.erase(key_of(spec.kind, *object));
        forget_live(index, *object);
        changed = true;
      }
      return true;
    };
    const auto after_lines = [&] {
      if (changed) {
        publish(index, objects);
        changed = false;
      }
    };
    Result<ApiConnection::Streamed, TransportError> streamed =
        connection.stream(target, tuning.request_deadline, tuning.watch_idle, on_line, after_lines);
    after_lines();
    if (stopping.load()) {
      return WatchOutcome::ended;
    }
    if (!streamed) {
      fail(index, "watch " + spec.resource + ": " +
                      (streamed.error().timed_out
                           ? "no event or bookmark for " + std::to_string(tuning.watch_idle.count()) + " ms; restarting"
                           : streamed.error().message));
      return streamed.error().after_response ? WatchOutcome::broken : WatchOutcome::failed;
    }
    if (streamed->refused) {
      if (streamed->refused->status == 410) {
        return WatchOutcome::relist;
      }
      fail(index, describe_refusal("watch " + spec.resource, *streamed->refused));
      return WatchOutcome::failed;
    }
    if (gone) {
      return WatchOutcome::relist;
    }
    if (!watch_error.empty()) {
      fail(index, watch_error);
      return WatchOutcome::failed;
    }
    return WatchOutcome::ended;
  }

  void run_informer(std::size_t index) {
    ApiConnection& connection = *connections[index];
    const ResourceSpec& spec = resources[index];
    std::mt19937_64 random(std::random_device{}() + index);
    KindIndex objects;
    std::string resource_version;
    bool need_list = true;
    std::chrono::milliseconds backoff = tuning.backoff_initial;
    const auto back_off = [&] {
      const bool slept = sleep(jittered(backoff, random));
      backoff = std::min(backoff * 2, tuning.backoff_max);
      return slept;
    };
    while (!stopping.load()) {
      if (need_list) {
        switch (list(index, connection, objects, resource_version)) {
          case ListOutcome::listed:
            publish(index, objects);
            need_list = false;
            backoff = tuning.backoff_initial;
            break;
          case ListOutcome::not_served: {
            bool first = false;
            update_status(index, [&](ResourceStatus& status) {
              first = status.served;
              status.served = false;
              status.last_error.clear();
            });
            if (first) {
              emit("warning", "resource not served by the API server; treated as empty",
                   {{"resource", spec.collection_path()}});
            }
            objects.clear();
            publish(index, objects);
            if (!sleep(tuning.not_served_recheck)) {
              return;
            }
            continue;
          }
          case ListOutcome::failed:
            if (!back_off()) {
              return;
            }
            continue;
        }
        update_status(index, [](ResourceStatus& status) { status.served = true; });
      }
      const auto watch_started = Clock::now();
      switch (watch(index, connection, objects, resource_version, random)) {
        case WatchOutcome::ended:
          // The server's timeoutSeconds: watch again from where it stopped; a server that ends
          // watches at once is not re-asked in a loop.
          if (Clock::now() - watch_started < std::chrono::seconds(1) && !back_off()) {
            return;
          }
          break;
        case WatchOutcome::relist:
          update_status(index, [](ResourceStatus& status) { ++status.watch_restarts; });
          need_list = true;
          break;
        case WatchOutcome::broken:
          backoff = tuning.backoff_initial;
          [[fallthrough]];
        case WatchOutcome::failed:
          update_status(index, [](ResourceStatus& status) { ++status.watch_restarts; });
          if (!back_off()) {
            return;
          }
          break;
      }
    }
  }
};

WatchCache::WatchCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WatchCache::~WatchCache() {
  stop();
}

Result<std::unique_ptr<WatchCache>> WatchCache::create(ClientConfig config, const admission::Pipeline& pipeline,
                                                       CacheLog log, CacheTuning tuning,
                                                       std::vector<ResourceSpec> resources) {
  auto impl = std::make_unique<Impl>(std::move(config), pipeline, std::move(log), tuning, std::move(resources));
  for (const ResourceSpec& spec : impl->resources) {
    Result<std::unique_ptr<ApiConnection>> connection = ApiConnection::create(impl->config);
    if (!connection) {
      return connection.error();
    }
    impl->connections.push_back(std::move(connection.value()));
    ResourceStatus status;
    status.resource = spec.resource;
    impl->statuses.push_back(status);
  }
  std::vector<ObjectKind> live_kinds;
  for (const ResourceSpec& spec : impl->resources) {
    if (spec.live_lookup) {
      live_kinds.push_back(spec.kind);
    }
  }
  WatchCache::Impl* state = impl.get();
  impl->live = std::make_shared<LiveLookup>(
      [state]() -> std::unique_ptr<ObjectFetcher> {
        Result<std::unique_ptr<ApiConnection>> connection = ApiConnection::create(state->config);
        if (!connection) {
          return nullptr;  // the informers' connections were made from the same configuration
        }
        return std::make_unique<ApiFetcher>(std::move(connection.value()), state->pipeline, state->resources);
      },
      std::move(live_kinds), tuning.lookup);
  return std::unique_ptr<WatchCache>(new WatchCache(std::move(impl)));
}

void WatchCache::start() {
  for (std::size_t index = 0; index < impl_->resources.size(); ++index) {
    impl_->threads.emplace_back([impl = impl_.get(), index] { impl->run_informer(index); });
  }
}

void WatchCache::stop() {
  if (!impl_) {
    return;
  }
  {
    const std::lock_guard lock(impl_->wake_mutex);
    impl_->stopping.store(true);
    impl_->wake.notify_all();
  }
  for (const std::unique_ptr<ApiConnection>& connection : impl_->connections) {
    connection->cancel();
  }
  impl_->live->stop();
  for (std::thread& thread : impl_->threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  impl_->threads.clear();
}

std::shared_ptr<const admission::ClusterView> WatchCache::snapshot() const {
  const std::lock_guard lock(impl_->state_mutex);
  return impl_->current;
}

std::shared_ptr<RequestView> WatchCache::request_view() const {
  std::shared_ptr<const admission::ClusterView> current = snapshot();
  if (current == nullptr) {
    return nullptr;
  }
  return std::make_shared<RequestView>(std::move(current), impl_->live);
}

LookupStats WatchCache::lookup_stats() const {
  return impl_->live->stats();
}

bool WatchCache::synced() const {
  return snapshot() != nullptr;
}

std::vector<ResourceStatus> WatchCache::statuses() const {
  const std::lock_guard lock(impl_->state_mutex);
  return impl_->statuses;
}

std::string WatchCache::not_synced_reason() const {
  const std::lock_guard lock(impl_->state_mutex);
  std::string reason;
  for (const ResourceStatus& status : impl_->statuses) {
    if (!status.synced) {
      reason += (reason.empty() ? "" : "; ") +
                (status.last_error.empty() ? status.resource + ": not listed yet" : status.last_error);
    }
  }
  return reason;
}

bool WatchCache::wait_synced(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->wake_mutex);
  impl_->wake.wait_for(lock, timeout, [this] { return impl_->stopping.load() || synced(); });
  return synced();
}

Result<ListedCluster> list_cluster(const ClientConfig& config, const admission::Pipeline& pipeline,
                                   const CacheTuning& tuning, const std::vector<ResourceSpec>& resources) {
  std::vector<std::string> problems;
  Result<std::unique_ptr<WatchCache>> cache = WatchCache::create(
      config, pipeline,
      [&problems](std::string_view level, std::string_view message,
                  const std::vector<std::pair<std::string, std::string>>& fields) {
        if (level == "warning") {
          std::string note(message);
          for (const auto& [key, value] : fields) {
            note.append(" ").append(key).append("=").append(value);
          }
          problems.push_back(note);
        }
      },
      tuning, resources);
  if (!cache) {
    return cache.error();
  }
  WatchCache::Impl& impl = *(*cache)->impl_;
  ListedCluster listed;
  std::unique_ptr<ApiConnection>& connection = impl.connections.front();
  for (std::size_t index = 0; index < impl.resources.size(); ++index) {
    KindIndex objects;
    std::string resource_version;
    switch (impl.list(index, *connection, objects, resource_version)) {
      case WatchCache::Impl::ListOutcome::not_served:
        listed.notes.push_back(impl.resources[index].collection_path() + ": not served by the API server; none read");
        continue;
      case WatchCache::Impl::ListOutcome::failed:
        return Error{impl.statuses[index].last_error};
      case WatchCache::Impl::ListOutcome::listed:
        break;
    }
    std::vector<std::pair<std::string, ObjectPtr>> sorted(objects.begin(), objects.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, object] : sorted) {
      if (Result<ObjectKind> added = listed.store.add(object->value); !added) {
        return Error{impl.resources[index].resource + " " + key + ": " + added.error().message};
      }
    }
  }
  listed.notes.insert(listed.notes.end(), problems.begin(), problems.end());
  return listed;
}

}  // namespace vmgate::kube
