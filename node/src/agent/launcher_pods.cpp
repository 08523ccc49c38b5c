// The launcher pods of this node (launcher_pods.hpp): status files to VMI status, pod networks.
// Follows KubeVirt's virt-handler, which reports a domain's state to its VMI
// (pkg/virt-handler/vm.go updateVMIStatus) and sets up the pod network before the domain starts
// (pkg/network/setup, netpod). The decisions are launcher_status.hpp's and pod_network.hpp's.
#include "vmgate/kube/utc_time.hpp"
#include "vmgate/node/launcher_pods.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/object_informer.hpp"
#include "vmgate/node/launcher_status.hpp"
#include "vmgate/node/pod_network.hpp"
#include "vmgate/node/pod_plumbing.hpp"
#include "vmgate/node/unique_fd.hpp"

namespace vmgate::node {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds next_backoff(std::chrono::milliseconds current) {
  return std::min(current * 2, std::chrono::milliseconds(30000));
}

// The file's identity and version: an unchanged file is not read again.
struct FileVersion {
  std::uint64_t inode = 0;
  std::int64_t seconds = 0;
  std::int64_t nanoseconds = 0;
  std::int64_t size = 0;
  bool operator==(const FileVersion&) const = default;
};

// What the agent keeps per launcher pod (by pod uid).
struct PodState {
  // status
  std::optional<FileVersion> seen;  // the file version last read
  std::optional<LauncherStatus> current;
  ReportState report;
  std::string last_problem;  // logged once until it changes
  Clock::time_point next_patch{};
  std::chrono::milliseconds patch_backoff{1000};
  // network
  bool network_done = false;
  Clock::time_point next_network{};
  std::chrono::milliseconds network_backoff{1000};
  std::string last_network_problem;
  bool waiting_logged = false;
};

}  // namespace

Result<std::optional<std::string>> read_status_file(const std::string& private_dir) {
  const UniqueFd directory(::open(private_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!directory.valid()) {
    if (errno == ENOENT) {
      return std::optional<std::string>();
    }
    return Error{"the private directory: " + std::string(std::strerror(errno))};
  }
  const std::string name(status_file_name);
  const UniqueFd file(
      ::openat(directory.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!file.valid()) {
    if (errno == ENOENT) {
      return std::optional<std::string>();
    }
    if (errno == ELOOP) {
      return Error{"the status file is a symbolic link"};
    }
    return Error{"the status file: " + std::string(std::strerror(errno))};
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) {
    return Error{"the status file: " + std::string(std::strerror(errno))};
  }
  if (!S_ISREG(info.st_mode)) {
    return Error{"the status file is not a regular file"};
  }
  if (info.st_size < 0 || static_cast<std::uint64_t>(info.st_size) > max_status_file_bytes) {
    return Error{"the status file is larger than " + std::to_string(max_status_file_bytes) + " bytes"};
  }
  // Read one byte more than allowed: a file that grew after fstat is caught too.
  std::string text(max_status_file_bytes + 1, '\0');
  std::size_t used = 0;
  while (used < text.size()) {
    const ssize_t got = ::read(file.get(), text.data() + used, text.size() - used);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return Error{"the status file: " + std::string(std::strerror(errno))};
    }
    if (got == 0) {
      break;
    }
    used += static_cast<std::size_t>(got);
  }
  if (used > max_status_file_bytes) {
    return Error{"the status file is larger than " + std::to_string(max_status_file_bytes) + " bytes"};
  }
  text.resize(used);
  return std::optional<std::string>(std::move(text));
}

struct LauncherPods::Impl {
  LauncherPodsConfig config;
  EventLog& log;
  std::unique_ptr<kube::ApiConnection> api;
  std::unique_ptr<kube::ObjectInformer> informer;
  std::map<std::string, PodState> pods;  // worker thread only
  std::set<std::string> rejected;        // pods logged as not launcher pods (uid), worker only

  std::mutex mutex;
  std::condition_variable wake;
  bool changed = false;
  bool stopping = false;
  std::thread worker;

  Impl(LauncherPodsConfig c, EventLog& l) : config(std::move(c)), log(l) {}

  void notify() {
    {
      const std::lock_guard lock(mutex);
      changed = true;
    }
    wake.notify_all();
  }

  void run() {
    for (;;) {
      {
        std::unique_lock lock(mutex);
        wake.wait_for(lock, std::chrono::seconds(1), [this] { return changed || stopping; });
        if (stopping) {
          return;
        }
        changed = false;
      }
      if (informer->synced()) {
        round();
      }
    }
  }

  void round() {
    std::set<std::string> present;
    for (const std::shared_ptr<const json::Document>& object : informer->objects()) {
      Result<LauncherPod> pod = launcher_pod(*object, config.node_name);
      if (!pod) {
        const json::Value* metadata = json::find_object(*object, "metadata");
        const std::string uid = metadata == nullptr ? "" : std::string(json::find_string(*metadata, "uid"));
        if (rejected.insert(uid).second) {
          log.write("warning", "pod ignored: not a launcher pod of this node",
                    {{"namespace", metadata == nullptr ? "" : json::find_string(*metadata, "namespace")},
                     {"pod", metadata == nullptr ? "" : json::find_string(*metadata, "name")},
                     {"why", pod.error().message}});
        }
        continue;
      }
      present.insert(pod->uid);
      PodState& state = pods[pod->uid];
      follow_status(*pod, state);
      if (config.pod_network) {
        build_network(*pod, state);
      }
    }
    std::erase_if(pods, [&present](const auto& entry) { return present.count(entry.first) == 0; });
    if (rejected.size() > 10000) {
      rejected.clear();  // bounded memory; a pod logged again is harmless
    }
  }

  void problem(const LauncherPod& pod, std::string& last, const std::string& what, const std::string& message) {
    if (message != last) {
      last = message;
      log.write("warning", what, {{"namespace", pod.namespace_name}, {"pod", pod.name}, {"error", message}});
    }
  }

  void follow_status(const LauncherPod& pod, PodState& state) {
    const std::string directory = private_dir(config.kubelet_root, pod.uid);
    struct stat info {};
    const std::string path = directory + "/" + std::string(status_file_name);
    if (::lstat(path.c_str(), &info) != 0) {
      return;  // no status yet
    }
    const FileVersion version{static_cast<std::uint64_t>(info.st_ino), info.st_mtim.tv_sec, info.st_mtim.tv_nsec,
                              info.st_size};
    if (state.seen != version) {
      state.seen = version;
      Result<std::optional<std::string>> text = read_status_file(directory);
      if (!text) {
        problem(pod, state.last_problem, "status file refused", text.error().message);
        return;
      }
      if (!text->has_value()) {
        return;
      }
      Result<LauncherStatus> status = parse_launcher_status(**text);
      if (!status) {
        problem(pod, state.last_problem, "status file refused", status.error().message);
        return;
      }
      state.last_problem.clear();
      if (state.current != *status) {
        state.current = *status;
        state.next_patch = {};
        state.patch_backoff = std::chrono::milliseconds(1000);
      }
    }
    if (!state.current || !needs_report(state.report, *state.current) || Clock::now() < state.next_patch) {
      return;
    }
    patch(pod, state);
  }

  void patch(const LauncherPod& pod, PodState& state) {
    const LauncherStatus status = *state.current;
    const std::string target = "/apis/kubevirt.io/v1/namespaces/" + kube::query_escape(pod.namespace_name) +
                               "/virtualmachineinstances/" + kube::query_escape(pod.vmi_name);
    const std::string body =
        json::to_string(launcher_status_patch(pod.vmi_uid, status, config.node_name, kube::utc_now()));
    Result<kube::HttpResponse, kube::TransportError> response =
        api->request("PATCH", target, body, "application/merge-patch+json", std::chrono::seconds(10), 1 << 20);
    const std::string_view vmi_field = pod.vmi_name;
    if (response && response->status == 200) {
      state.report.written = status;
      state.patch_backoff = std::chrono::milliseconds(1000);
      log.write("info", "VMI status written",
                {{"namespace", pod.namespace_name}, {"vmi", vmi_field}, {"phase", status.phase}});
      return;
    }
    // 404: the VMI is gone; 409: another VMI of that name (the uid precondition); 422: refused
    // as invalid. Retrying cannot help: the status counts as written until the file changes.
    if (response && (response->status == 404 || response->status == 409 || response->status == 422)) {
      state.report.written = status;
      log.write("warning", "VMI status not written; not retried",
                {{"namespace", pod.namespace_name},
                 {"vmi", vmi_field},
                 {"code", std::to_string(response->status)},
                 {"error", kube::status_message(*response)}});
      return;
    }
    const std::string error =
        response ? std::to_string(response->status) + ": " + kube::status_message(*response) : response.error().message;
    state.next_patch = Clock::now() + state.patch_backoff;
    state.patch_backoff = next_backoff(state.patch_backoff);
    log.write("warning", "VMI status not written; retrying",
              {{"namespace", pod.namespace_name}, {"vmi", vmi_field}, {"error", error}});
  }

  // The pod's VMI as the API has it now, the uid checked against the owner reference.
  Result<json::Document> fetch_vmi(const LauncherPod& pod) {
    const std::string target = "/apis/kubevirt.io/v1/namespaces/" + kube::query_escape(pod.namespace_name) +
                               "/virtualmachineinstances/" + kube::query_escape(pod.vmi_name);
    Result<kube::HttpResponse, kube::TransportError> response =
        api->get(target, std::chrono::seconds(10), std::size_t{8} << 20U);
    if (!response) {
      return Error{"reading the VMI: " + response.error().message};
    }
    if (response->status != 200) {
      return Error{"reading the VMI: " + std::to_string(response->status) + ": " + kube::status_message(*response)};
    }
    Result<json::Document, json::DecodeError> vmi = json::parse_json(response->body);
    if (!vmi) {
      return Error{"reading the VMI: " + vmi.error().message};
    }
    const json::Value* metadata = json::find_object(*vmi, "metadata");
    if (metadata == nullptr || json::find_string(*metadata, "uid") != pod.vmi_uid) {
      return Error{"the VMI of that name is not the pod's owner (another uid)"};
    }
    return std::move(*vmi);
  }

  void build_network(const LauncherPod& pod, PodState& state) {
    if (state.network_done || Clock::now() < state.next_network) {
      return;
    }
    const auto retry = [&state](bool backoff) {
      state.next_network = Clock::now() + (backoff ? state.network_backoff : std::chrono::milliseconds(1000));
      if (backoff) {
        state.network_backoff = next_backoff(state.network_backoff);
      }
    };
    if (pod.host_network) {
      state.network_done = true;
      problem(pod, state.last_network_problem, "pod network not built", "the pod is on the host network");
      return;
    }
    Result<json::Document> vmi = fetch_vmi(pod);
    if (!vmi) {
      problem(pod, state.last_network_problem, "pod network not built yet", vmi.error().message);
      retry(true);
      return;
    }
    Result<std::optional<PodNetworkPlan>> plan = plan_pod_network(*vmi);
    if (!plan) {
      state.network_done = true;  // the VMI does not change its interfaces: no retry
      problem(pod, state.last_network_problem, "pod network not built", plan.error().message);
      return;
    }
    if (!plan->has_value()) {
      state.network_done = true;
      return;
    }
    Result<std::optional<UniqueFd>> netns = open_pod_netns(config.cgroup_root, config.proc_root, pod.uid);
    if (!netns) {
      problem(pod, state.last_network_problem, "pod network not built yet", netns.error().message);
      retry(true);
      return;
    }
    if (!netns->has_value()) {
      if (!state.waiting_logged) {
        state.waiting_logged = true;
        log.write("info", "waiting for the pod's sandbox", {{"namespace", pod.namespace_name}, {"pod", pod.name}});
      }
      retry(false);
      return;
    }
    Result<NetworkSetup> done = setup_pod_network((*netns)->get(), **plan, config.nft_path);
    if (!done) {
      problem(pod, state.last_network_problem, "pod network not built; retrying", done.error().message);
      retry(true);
      return;
    }
    state.network_done = true;
    log.write("info", *done == NetworkSetup::created ? "pod network built" : "pod network already there",
              {{"namespace", pod.namespace_name},
               {"pod", pod.name},
               {"binding", (*plan)->binding == PodBinding::masquerade ? "masquerade" : "bridge"},
               {"tap", (*plan)->tap}});
  }
};

LauncherPods::LauncherPods(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LauncherPods::~LauncherPods() {
  stop();
}

Result<std::unique_ptr<LauncherPods>> LauncherPods::create(const kube::ClientConfig& client, LauncherPodsConfig config,
                                                           EventLog& log) {
  if (config.node_name.empty()) {
    return Error{"no node name (--node-name or NODE_NAME)"};
  }
  if (config.nft_path.empty()) {
    config.nft_path = find_nft();
  }
  auto impl = std::make_unique<Impl>(std::move(config), log);
  Result<std::unique_ptr<kube::ApiConnection>> api = kube::ApiConnection::create(client);
  if (!api) {
    return api.error();
  }
  impl->api = std::move(*api);
  Impl* raw = impl.get();
  kube::CacheLog cache_log = [raw](std::string_view level, std::string_view message,
                                   const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string detail;
    for (const auto& [key, value] : fields) {
      detail.append(detail.empty() ? "" : " ").append(key).append("=").append(value);
    }
    raw->log.write(level, message, {{"informer", "pods"}, {"detail", detail}});
  };
  kube::InformerSpec spec{"pods", "/api/v1/pods", "kubevirt.io=virt-launcher",
                          "spec.nodeName=" + impl->config.node_name};
  kube::CacheTuning tuning;
  tuning.backoff_max = std::chrono::milliseconds(5000);
  Result<std::unique_ptr<kube::ObjectInformer>> informer = kube::ObjectInformer::create(
      client, spec, cache_log, [raw] { raw->notify(); }, tuning);
  if (!informer) {
    return informer.error();
  }
  impl->informer = std::move(*informer);
  return std::unique_ptr<LauncherPods>(new LauncherPods(std::move(impl)));
}

std::vector<LauncherPod> LauncherPods::current() const {
  std::vector<LauncherPod> result;
  for (const std::shared_ptr<const json::Document>& object : impl_->informer->objects()) {
    if (Result<LauncherPod> pod = launcher_pod(*object, impl_->config.node_name); pod) {
      result.push_back(std::move(*pod));
    }
  }
  return result;
}

void LauncherPods::start() {
  impl_->informer->start();
  impl_->worker = std::thread([this] { impl_->run(); });
}

void LauncherPods::stop() {
  if (!impl_) {
    return;
  }
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->api->cancel();
  if (impl_->worker.joinable()) {
    impl_->worker.join();
  }
  impl_->informer->stop();
}

}  // namespace vmgate::node
