// `vmgate controller`: the executor around the pure planner (controller_plan.hpp) and the lease
// decisions (controller_lease.hpp), in the shape of `vmgate certs`: informers feed a plan, the
// plan's writes go to the API while this replica leads, each write logged as one JSON line.
#include "vmgate/controller/controller_command.hpp"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "vmgate/admission/pipeline.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/api_command.hpp"
#include "vmgate/kube/command_frame.hpp"
#include "vmgate/kube/object_informer.hpp"
#include "vmgate/kube/watch_cache.hpp"
#include "vmgate/kube/log_line.hpp"
#include "vmgate/kube/stop_signal.hpp"
#include "vmgate/controller/controller_lease.hpp"
#include "vmgate/controller/controller_plan.hpp"
#include "vmgate/controller/controller_throttle.hpp"

namespace vmgate::controller {
namespace {

constexpr auto request_deadline = std::chrono::seconds(30);
constexpr auto lease_retry = std::chrono::seconds(2);
constexpr auto expected_pod_ttl = std::chrono::seconds(30);
constexpr auto max_lookup_time = std::chrono::seconds(3);  // live lookups before a plan is made without them
constexpr unsigned max_lookup_rounds = 3;
using Clock = std::chrono::steady_clock;
using Fields = std::vector<std::pair<std::string, std::string>>;

using Log = kube::EventLog;

// RFC 3339 UTC, with microseconds when asked (a Lease's MicroTime).
std::string rfc3339(bool micros) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 40> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%S", &utc);
  std::string out(text.data());
  if (micros) {
    const auto fraction =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::array<char, 16> digits{};
    std::snprintf(digits.data(), digits.size(), ".%06lld", static_cast<long long>(fraction));
    out += digits.data();
  }
  return out + "Z";
}

std::string default_identity() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) {
    host[0] = '\0';
  }
  return std::string(host.data()) + "_" + std::to_string(getpid());
}

// Wakes the planner: informer changes, the lease gained, a signal.
class Wake {
 public:
  void notify() {
    {
      std::lock_guard lock(mutex_);
      pending_ = true;
    }
    cv_.notify_all();
  }
  void wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [this] { return pending_; });
    pending_ = false;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool pending_ = false;
};

// Holds or waits for the Lease on a thread of its own; leading() says whether this replica may
// write. A renewal that fails for longer than two thirds of the duration (client-go's renew
// deadline) loses the lead before another replica can take it.
class Elector {
 public:
  Elector(kube::ApiConnection& api, const ControllerOptions& options, std::string identity, Log& log, Wake& wake)
      : api_(api), options_(options), identity_(std::move(identity)), log_(log), wake_(wake) {}
  Elector(const Elector&) = delete;
  Elector& operator=(const Elector&) = delete;
  ~Elector() { stop(); }

  void start() {
    thread_ = std::thread([this] { run(); });
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  [[nodiscard]] bool leading() const { return leading_.load() && Clock::now() < valid_until_.load(); }
  /// Gives the Lease up (SIGTERM), so that another replica leads within a retry period.
  void release() {
    if (!leading_.exchange(false)) {
      return;
    }
    Result<LeaseRecord> record = read();
    if (!record || record->holder != identity_) {
      return;
    }
    const json::Document body =
        lease_body(*record, LeaseStep::renew, true, options_.lease_namespace, options_.lease_name, identity_,
                   options_.lease_duration.count(), rfc3339(true));
    Result<kube::HttpResponse, kube::TransportError> response =
        api_.request("PUT", path(), json::to_string(body), "application/json", request_deadline);
    log_(response && response->status == 200 ? "info" : "warning", "lease released",
         {{"lease", options_.lease_namespace + "/" + options_.lease_name}, {"identity", identity_}});
  }

 private:
  std::string path() const {
    return "/apis/coordination.k8s.io/v1/namespaces/" + kube::query_escape(options_.lease_namespace) + "/leases/" +
           kube::query_escape(options_.lease_name);
  }

  Result<LeaseRecord> read() {
    Result<kube::HttpResponse, kube::TransportError> response = api_.get(path(), request_deadline);
    if (!response) {
      return Error{"GET Lease: " + response.error().message};
    }
    if (response->status == 404) {
      return LeaseRecord{};
    }
    if (response->status != 200) {
      return Error{"GET Lease: " + std::to_string(response->status) + ": " + kube::status_message(*response)};
    }
    Result<json::Document, json::DecodeError> lease = json::parse_json(response->body);
    if (!lease) {
      return Error{"GET Lease: " + lease.error().message};
    }
    return read_lease(*lease);
  }

  void attempt() {
    Result<LeaseRecord> record = read();
    if (!record) {
      log_("error", "lease", {{"error", record.error().message}});
      return;
    }
    const std::string seen = record->holder + "|" + record->renew_time + "|" + record->resource_version;
    if (seen != last_seen_) {
      last_seen_ = seen;
      last_change_ = Clock::now();
    }
    const auto unchanged = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_change_);
    const LeaseStep step = decide(*record, identity_, unchanged);
    if (step == LeaseStep::wait) {
      if (leading_.exchange(false)) {
        log_("warning", "lost the lease", {{"holder", record->holder}});
      }
      return;
    }
    const json::Document body = lease_body(*record, step, false, options_.lease_namespace, options_.lease_name,
                                           identity_, options_.lease_duration.count(), rfc3339(true));
    const auto started = Clock::now();
    Result<kube::HttpResponse, kube::TransportError> response =
        step == LeaseStep::create
            ? api_.request(
                  "POST",
                  "/apis/coordination.k8s.io/v1/namespaces/" + kube::query_escape(options_.lease_namespace) + "/leases",
                  json::to_string(body), "application/json", request_deadline)
            : api_.request("PUT", path(), json::to_string(body), "application/json", request_deadline);
    if (response && (response->status == 200 || response->status == 201)) {
      // Valid for two thirds of the duration from the moment the write was sent.
      valid_until_.store(started + options_.lease_duration * 2 / 3);
      if (!leading_.exchange(true)) {
        log_("info", "leading",
             {{"lease", options_.lease_namespace + "/" + options_.lease_name},
              {"identity", identity_},
              {"previous_holder", record->holder}});
        wake_.notify();
      }
      return;
    }
    // 409: another replica wrote first; it leads.
    const std::string why =
        response ? std::to_string(response->status) + ": " + kube::status_message(*response) : response.error().message;
    if (!response || response->status != 409) {
      log_("warning", "lease write failed", {{"error", why}});
    }
  }

  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      attempt();
      lock.lock();
      cv_.wait_for(lock, lease_retry, [this] { return stopping_; });
    }
  }

  kube::ApiConnection& api_;
  const ControllerOptions& options_;
  std::string identity_;
  Log& log_;
  Wake& wake_;
  std::atomic<bool> leading_{false};
  std::atomic<Clock::time_point> valid_until_{Clock::time_point{}};
  std::string last_seen_;
  Clock::time_point last_change_ = Clock::now();
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

std::string object_path(const Action& action) {
  const std::string ns = "/namespaces/" + kube::query_escape(action.namespace_name);
  if (action.kind_name == "Pod") {
    return "/api/v1" + ns + "/pods";
  }
  return "/apis/kubevirt.io/v1" + ns +
         (action.kind_name == "VirtualMachine" ? "/virtualmachines" : "/virtualmachineinstances");
}

// The "namespace/name"s of `expected` that `seen` does not hold yet, younger than the TTL; the
// seen and the expired are forgotten.
std::set<std::string> still_expected(std::map<std::string, Clock::time_point>& expected,
                                     const std::vector<std::shared_ptr<const json::Document>>& seen) {
  for (const auto& object : seen) {
    const json::Value* metadata = json::find_object(*object, "metadata");
    if (metadata != nullptr) {
      expected.erase(std::string(json::find_string(*metadata, "namespace")) + "/" +
                     std::string(json::find_string(*metadata, "name")));
    }
  }
  std::set<std::string> out;
  for (auto it = expected.begin(); it != expected.end();) {
    if (Clock::now() - it->second > expected_pod_ttl) {
      it = expected.erase(it);
    } else {
      out.insert(it->first);
      ++it;
    }
  }
  return out;
}

class Executor {
 public:
  Executor(kube::ApiConnection& api, Log& log) : api_(api), log_(log) {}

  // The pods created and not yet seen by the pod informer.
  std::set<std::string> expected_pods(const std::vector<std::shared_ptr<const json::Document>>& pods) {
    return still_expected(expected_, pods);
  }

  // The VMIs created and not yet seen by the VMI informer.
  std::set<std::string> expected_vmis(const std::vector<std::shared_ptr<const json::Document>>& vmis) {
    return still_expected(expected_vmis_, vmis);
  }

  void run(Action& action) {
    const std::string key = throttle_key(action);
    const auto now = Clock::now();
    if (const WriteThrottle::Verdict verdict = throttle_.admit(key, now); verdict != WriteThrottle::Verdict::write) {
      // Planned again on a later pass; said once until the key writes again.
      if (deferred_.insert(key).second) {
        log_("info", "write deferred",
             {{"key", key},
              {"action", std::string(to_string(action.kind))},
              {"why", verdict == WriteThrottle::Verdict::backing_off ? "backing off after a failed write"
                      : verdict == WriteThrottle::Verdict::key_budget
                          ? "this VM/VMI wrote too much lately (30 writes a minute)"
                          : "the controller's write budget (100 a second)"}});
      }
      return;
    }
    deferred_.erase(key);
    const std::string collection = object_path(action);
    const std::string object = collection + "/" + kube::query_escape(action.name);
    std::string method;
    std::string target;
    std::string body;
    std::string content_type = "application/json";
    switch (action.kind) {
      case ActionKind::create_vmi:
      case ActionKind::create_pod:
        method = "POST";
        target = collection;
        body = json::to_string(action.body);
        break;
      case ActionKind::delete_vmi:
      case ActionKind::delete_pod:
        method = "DELETE";
        target = object;
        body = R"({"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"uid":)" +
               json::to_string(json::Value(action.uid.c_str(), static_cast<rapidjson::SizeType>(action.uid.size()))) +
               "}}";
        break;
      case ActionKind::patch_vmi: {
        // The uid in the patch: a VMI recreated under the name refuses it (uid is immutable).
        auto& a = action.body.GetAllocator();
        json::set_string(json::ensure_object(action.body, "metadata", a), "uid", action.uid, a);
        method = "PATCH";
        target = object;
        body = json::to_string(action.body);
        content_type = "application/merge-patch+json";
        break;
      }
      case ActionKind::patch_vm_status:
        method = "PATCH";
        target = object + "/status";
        body = json::to_string(action.body);
        content_type = "application/merge-patch+json";
        break;
      case ActionKind::patch_vm_spec:
      case ActionKind::remove_finalizer:
        method = "PATCH";
        target = object;
        body = json::to_string(action.body);
        content_type = "application/json-patch+json";
        break;
    }
    Result<kube::HttpResponse, kube::TransportError> response =
        api_.request(method, target, body, content_type, request_deadline);
    Fields fields{{"action", std::string(to_string(action.kind))},
                  {"namespace", action.namespace_name},
                  {"name", action.kind == ActionKind::create_pod || action.kind == ActionKind::create_vmi
                               ? std::string(json::find_string(action.body["metadata"], "name"))
                               : action.name},
                  {"reason", action.reason}};
    if (!response) {
      throttle_.failed(key, Clock::now());
      fields.emplace_back("error", response.error().message);
      log_("error", "write failed", fields);
      return;
    }
    const unsigned status = response->status;
    fields.emplace_back("code", std::to_string(status));
    // A pod created now, or by the previous leader a moment ago (409), may not be in the pod
    // list yet: expected, so that its VMI is not failed for a pod that exists.
    if (action.kind == ActionKind::create_pod && (status == 409 || (status >= 200 && status < 300))) {
      expected_[action.namespace_name + "/" + std::string(json::find_string(action.body["metadata"], "name"))] =
          Clock::now();
    }
    // A VMI created now may not be in the VMI list when the next plan runs (another watch's
    // event can wake it first): expected until seen, so that it is not created twice.
    if (action.kind == ActionKind::create_vmi && status >= 200 && status < 300) {
      expected_vmis_[action.namespace_name + "/" + std::string(json::find_string(action.body["metadata"], "name"))] =
          Clock::now();
    }
    if (status >= 200 && status < 300) {
      throttle_.succeeded(key);
      log_("info", "write", fields);
      return;
    }
    // Someone got there first (409 on a create, a gone object, a failed precondition such as the
    // resourceVersion of a VM status patch that rewrites status.stateChangeRequests): the change
    // that made the object newer reaches the watch, which wakes the next plan, and that plan
    // starts from the newer object.
    const bool benign = status == 404 || status == 409;
    if (benign) {
      throttle_.succeeded(key);
    } else {
      throttle_.failed(key, Clock::now());
      fields.emplace_back("retry_in_ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                            throttle_.retry_after(key) - Clock::now())
                                                            .count()));
    }
    fields.emplace_back("error", kube::status_message(*response));
    log_(benign ? "info" : "error", benign ? "write skipped" : "write failed", fields);
  }

 private:
  // What a write is about, for the throttle: the VM/VMI's namespace/name (they share it); a
  // launcher pod counts for its VMI.
  static std::string throttle_key(const Action& action) {
    std::string_view name = action.name;
    if (action.kind == ActionKind::create_vmi) {
      name = json::find_string(action.body["metadata"], "name");
    } else if (action.kind == ActionKind::create_pod) {
      const json::Value* owners = json::find_path(action.body, {"metadata", "ownerReferences"});
      if (owners != nullptr && owners->IsArray() && !owners->Empty()) {
        name = json::find_string((*owners)[0], "name");
      }
    }
    return action.namespace_name + "/" + std::string(name);
  }

  kube::ApiConnection& api_;
  Log& log_;
  std::map<std::string, Clock::time_point> expected_;
  std::map<std::string, Clock::time_point> expected_vmis_;
  WriteThrottle throttle_;
  std::set<std::string> deferred_;  // keys whose deferral was logged
};

std::string collection(std::string_view group_prefix, std::string_view resource, const std::string& namespace_name) {
  std::string path(group_prefix);
  if (!namespace_name.empty()) {
    path += "/namespaces/" + kube::query_escape(namespace_name);
  }
  return path + "/" + std::string(resource);
}

}  // namespace

int run_controller(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  kube::CommandStart<ControllerOptions> start =
      kube::start_command(parse_controller_options(args), {"error: ", "vmgate controller"}, controller_usage, out, err);
  if (!start.options) {
    return start.exit_code;
  }
  const ControllerOptions& options = *start.options;
  // The writes and the Lease each on a connection of their own.
  Result<std::unique_ptr<kube::ApiCommand>> api = kube::open_api_command(options.kubeconfig, options.context, 2);
  if (!api) {
    return kube::usage_error({"error: ", ""}, api.error(), err);
  }
  const kube::ClientConfig& config = (*api)->config;
  kube::ApiConnection& writer = *(*api)->connections[0];
  kube::ApiConnection& lease_api = *(*api)->connections[1];
  Log& log = (*api)->log;
  const std::string identity = options.identity.empty() ? default_identity() : options.identity;
  Wake wake;
  const kube::CacheLog cache_log = [&log](std::string_view level, std::string_view message,
                                          const std::vector<std::pair<std::string, std::string>>& fields) {
    log(level, message, fields);
  };

  // The objects the expansion reads (instancetypes, preferences, PVCs, the KubeVirt CR).
  const admission::Pipeline pipeline(options.release);
  Result<std::unique_ptr<kube::WatchCache>> cache = kube::WatchCache::create(config, pipeline, cache_log);
  if (!cache) {
    err << "error: " << cache.error().message << '\n';
    return kube::exit_usage;
  }
  const auto on_change = [&wake] { wake.notify(); };
  std::vector<std::unique_ptr<kube::ObjectInformer>> informers;
  for (const kube::InformerSpec& spec :
       {kube::InformerSpec{"virtualmachines",
                           collection("/apis/kubevirt.io/v1", "virtualmachines", options.namespace_name), "", ""},
        kube::InformerSpec{"virtualmachineinstances",
                           collection("/apis/kubevirt.io/v1", "virtualmachineinstances", options.namespace_name), "",
                           ""},
        kube::InformerSpec{"pods", collection("/api/v1", "pods", options.namespace_name), "kubevirt.io=virt-launcher",
                           ""}}) {
    Result<std::unique_ptr<kube::ObjectInformer>> informer =
        kube::ObjectInformer::create(config, spec, cache_log, on_change);
    if (!informer) {
      err << "error: " << informer.error().message << '\n';
      return kube::exit_usage;
    }
    informers.push_back(std::move(informer.value()));
  }

  std::optional<Elector> elector;
  if (!options.lease_name.empty()) {
    elector.emplace(lease_api, options, identity, log, wake);
  }
  log("info", "vmgate controller starting",
      {{"server", config.server},
       {"namespace", options.namespace_name.empty() ? "(all)" : options.namespace_name},
       {"lease",
        options.lease_name.empty() ? "(none: single replica)" : options.lease_namespace + "/" + options.lease_name},
       {"identity", identity}});
  kube::StopSignal stop([&wake] { wake.notify(); });
  (*cache)->start();
  for (const auto& informer : informers) {
    informer->start();
  }
  if (elector) {
    elector->start();
  }

  Executor executor(writer, log);
  bool announced_synced = false;
  std::set<std::string> logged_notes;
  std::optional<std::chrono::seconds> replan_within;  // a backoff ends before the next resync
  while (!stop.stopped()) {
    // Until the caches sync (the cluster cache has no change callback), look again soon.
    std::chrono::milliseconds wait =
        announced_synced ? options.resync : std::min(options.resync, std::chrono::milliseconds(250));
    if (replan_within) {
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(*replan_within));
    }
    wake.wait(wait);
    if (stop.stopped()) {
      break;
    }
    std::shared_ptr<kube::RequestView> cluster = (*cache)->request_view();
    const bool synced = cluster != nullptr && std::all_of(informers.begin(), informers.end(),
                                                          [](const auto& informer) { return informer->synced(); });
    if (!synced) {
      continue;
    }
    if (!announced_synced) {
      log("info", "caches synced");
      announced_synced = true;
    }
    if (elector && !elector->leading()) {
      continue;
    }
    const auto vms = informers[0]->objects();
    const auto vmis = informers[1]->objects();
    const auto pods = informers[2]->objects();
    State state;
    state.now = rfc3339(false);
    for (const auto& vm : vms) {
      state.vms.push_back(vm.get());
    }
    for (const auto& vmi : vmis) {
      state.vmis.push_back(vmi.get());
    }
    for (const auto& pod : pods) {
      state.pods.push_back(pod.get());
    }
    state.expected_pods = executor.expected_pods(pods);
    state.expected_vmis = executor.expected_vmis(vmis);
    PodSettings from_options;
    from_options.image = options.launcher_image;
    from_options.container_disk_delivery = options.container_disk_delivery;
    from_options.allow_emulation = options.use_emulation;
    // The KubeVirt CR as the admission cache read it (one parse, shared with the expansion).
    ClusterPodSettings from_cluster = with_cluster_configuration(std::move(from_options), cluster->config());
    PlanSettings settings;
    settings.pod = std::move(from_cluster.pod);
    settings.build_vmi = [&](const json::Value& vm) {
      const json::Value* metadata = json::find_object(vm, "metadata");
      return pipeline.expand(vm, metadata == nullptr ? "" : json::find_string(*metadata, "namespace"), state.now,
                             *cluster);
    };
    // A VMI CREATE as `vmgate serve` judges it: the mutating webhook, then the validating one.
    settings.admit_vmi = [&](const json::Value& vmi, bool made_by_controller) {
      admission::Request request;
      request.resource = admission::Resource::virtual_machine_instance;
      request.operation = admission::Operation::create;
      const json::Value* metadata = json::find_object(vmi, "metadata");
      request.namespace_name = metadata == nullptr ? "" : json::find_string(*metadata, "namespace");
      request.object = &vmi;
      request.from_kubevirt_service_account = made_by_controller;
      request.now = state.now;
      return pipeline.admit(request, *cluster).verdict;
    };
    std::vector<std::string> notes = std::move(from_cluster.refused);
    const std::size_t cluster_notes = notes.size();
    std::vector<Action> actions;
    // Objects the cache has not delivered yet (a VM applied with its instancetype) are looked up
    // live and the plan made again with them, a round per link of a chain.
    for (unsigned round = 0;; ++round) {
      notes.resize(cluster_notes);
      settings.pod.block_claims = block_claims(state.vmis, *cluster);
      replan_within.reset();
      actions = plan(state, settings, &notes, &replan_within);
      if (!cluster->has_misses() || round == max_lookup_rounds || stop.stopped()) {
        break;
      }
      cluster->resolve_and_wait(Clock::now() + max_lookup_time);
    }
    // A note is logged when it first appears, not on every plan.
    std::set<std::string> current(notes.begin(), notes.end());
    for (const std::string& note : current) {
      if (logged_notes.count(note) == 0) {
        log("warning", "reconcile", {{"note", note}});
      }
    }
    logged_notes = std::move(current);
    for (Action& action : actions) {
      if (stop.stopped() || (elector && !elector->leading())) {
        break;
      }
      executor.run(action);
    }
  }
  log("info", "stopping on signal");
  if (elector) {
    elector->stop();
    elector->release();
  }
  for (const auto& informer : informers) {
    informer->stop();
  }
  (*cache)->stop();
  return 0;
}

}  // namespace vmgate::controller
