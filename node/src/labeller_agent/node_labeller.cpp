// The node labeller's thread (node_labeller.hpp). KubeVirt: pkg/virt-handler/node-labeller/
// node_labeller.go (Run: every 3 minutes with a 1.2 jitter factor and on every configuration
// change; run: get the node, skip it when annotated, patch), pkg/virt-handler/heartbeat/
// heartbeat.go (every minute; schedulable=false on the way out), cmd/virt-handler/virt-handler.go.
#include "vmgate/node/node_labeller.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

#include "host_query.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/object_informer.hpp"
#include "vmgate/node/node_labels.hpp"

namespace vmgate::node {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds api_deadline{10000};
// How long the first labelling waits for the KubeVirt CR's first list: a cluster without the
// CRD (or an API that refuses the list) still gets labels, from the defaults.
constexpr std::chrono::seconds settings_wait{15};
// Retry delays after a failed libvirt query or API write (then the last one, repeatedly).
constexpr std::array<std::chrono::seconds, 6> backoff{std::chrono::seconds(1),  std::chrono::seconds(2),
                                                      std::chrono::seconds(5),  std::chrono::seconds(10),
                                                      std::chrono::seconds(30), std::chrono::seconds(60)};

std::chrono::seconds delay_after(std::size_t failures) {
  return backoff[std::min(failures, backoff.size()) - 1];
}

// metav1.Time's JSON: RFC 3339 in UTC, whole seconds.
std::string now_rfc3339() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  const std::size_t size = std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text.data(), size);
}

bool same_settings(const KubeVirtSettings& a, const KubeVirtSettings& b) {
  return a.obsolete_cpu_models == b.obsolete_cpu_models && a.use_emulation == b.use_emulation &&
         a.cpu_manager_gate == b.cpu_manager_gate;
}

}  // namespace

struct NodeLabeller::Impl {
  LabellerSettings settings;
  EventLog& log;
  kube::ClientConfig client;
  std::unique_ptr<kube::ApiConnection> api;
  std::unique_ptr<kube::ObjectInformer> kubevirts;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;    // guarded by mutex
  bool cr_changed = false;  // guarded by mutex
  bool stopped = false;     // the owner's
  std::mt19937 jitter{std::random_device{}()};

  Impl(LabellerSettings s, EventLog& l) : settings(std::move(s)), log(l) {}

  std::string node_path() const { return "/api/v1/nodes/" + kube::query_escape(settings.node_name); }

  KubeVirtSettings kubevirt() const {
    const std::vector<std::shared_ptr<const json::Document>> objects = kubevirts->objects();
    std::vector<const json::Value*> values;
    values.reserve(objects.size());
    for (const auto& object : objects) {
      values.push_back(object.get());
    }
    return kubevirt_settings(values);
  }

  // Sleeps until `until`, a stop, or (when `on_change`) a KubeVirt CR change. True: stopping.
  bool sleep_until(Clock::time_point until, bool on_change) {
    std::unique_lock lock(mutex);
    wake.wait_until(lock, until, [&] { return stopping || (on_change && cr_changed); });
    if (on_change) {
      cr_changed = false;
    }
    return stopping;
  }

  Status patch(std::string_view body, std::string_view content_type) {
    Result<kube::HttpResponse, kube::TransportError> response =
        api->request("PATCH", node_path(), body, content_type, api_deadline);
    if (!response) {
      return Error{"PATCH node " + settings.node_name + ": " + response.error().message};
    }
    if (response->status != 200) {
      return Error{"PATCH node " + settings.node_name + ": HTTP " + std::to_string(response->status) + ": " +
                   kube::status_message(*response)};
    }
    return Ok{};
  }

  Status heartbeat(bool schedulable, const KubeVirtSettings& kubevirt_settings) {
    const bool cpu_manager = kubevirt_settings.cpu_manager_gate && kubelet_cpu_manager_static(settings.kubelet_root);
    return patch(heartbeat_patch(schedulable, cpu_manager, now_rfc3339()), "application/strategic-merge-patch+json");
  }

  // NodeLabeller.run: the node as it is now, our labels computed afresh, only the difference sent.
  Status label(const NodeFacts& facts, const KubeVirtSettings& kubevirt_settings) {
    Result<kube::HttpResponse, kube::TransportError> response = api->get(node_path(), api_deadline);
    if (!response) {
      return Error{"GET node " + settings.node_name + ": " + response.error().message};
    }
    if (response->status != 200) {
      return Error{"GET node " + settings.node_name + ": HTTP " + std::to_string(response->status) + ": " +
                   kube::status_message(*response)};
    }
    Result<json::Document, json::DecodeError> node = json::parse_json(response->body);
    if (!node || !node->IsObject()) {
      return Error{"GET node " + settings.node_name + ": not a JSON object"};
    }
    if (skip_node(*node)) {
      log.write("info", "node annotated node-labeller.kubevirt.io/skip-node: labels left alone",
                {{"node", settings.node_name}});
      return Ok{};
    }
    const std::map<std::string, std::string> labels = node_labels(facts, kubevirt_settings);
    const std::optional<std::string> body = labels_patch(json::find_path(*node, {"metadata", "labels"}), labels);
    if (!body) {
      return Ok{};
    }
    if (Status patched = patch(*body, "application/merge-patch+json"); !patched) {
      return patched;
    }
    log.write("info", "node labels written",
              {{"node", settings.node_name},
               {"labels", std::to_string(labels.size())},
               {"kubevirt_cr", kubevirt_settings.source.empty() ? "none" : kubevirt_settings.source}});
    return Ok{};
  }

  void run() {
    const LibvirtEventLoop event_loop;
    LibvirtConnection connection;
    std::optional<NodeFacts> facts;
    std::string facts_type;
    std::optional<KubeVirtSettings> labelled_with;

    const Clock::time_point waited = Clock::now() + settings_wait;
    while (!kubevirts->synced() && Clock::now() < waited) {
      if (sleep_until(std::min(waited, Clock::now() + std::chrono::milliseconds(200)), true)) {
        return;
      }
    }
    if (!kubevirts->synced()) {
      log.write("warning", "KubeVirt CRs not listed yet: labelling with the defaults until they are",
                {{"namespace", settings.kubevirt_namespace}});
    }

    Clock::time_point heartbeat_due = Clock::now();
    Clock::time_point label_due = Clock::now();
    Clock::time_point libvirt_due = Clock::now();
    std::size_t libvirt_failures = 0;
    std::size_t label_failures = 0;
    std::size_t heartbeat_failures = 0;
    std::string last_settings_error;
    while (true) {
      const KubeVirtSettings kubevirt_settings = kubevirt();
      for (const std::string& problem : kubevirt_settings.errors) {
        if (problem != last_settings_error) {
          log.write("warning", "KubeVirt CR setting ignored",
                    {{"kubevirt_cr", kubevirt_settings.source}, {"error", problem}});
          last_settings_error = problem;
        }
      }
      const auto now = Clock::now();
      if (now >= heartbeat_due) {
        if (Status sent = heartbeat(true, kubevirt_settings); !sent) {
          log.write("error", "heartbeat failed; retrying", {{"error", sent.error().message}});
          heartbeat_due = now + delay_after(++heartbeat_failures);
        } else {
          heartbeat_failures = 0;
          heartbeat_due = now + settings.heartbeat_interval;
        }
      }

      std::error_code error;
      const bool kvm_device = std::filesystem::exists(settings.dev_root + "/dev/kvm", error);
      const std::string_view type =
          virt_type(settings.use_emulation || kubevirt_settings.use_emulation, kvm_device, hardware_kvm_module());
      if ((!facts || facts_type != type) && now >= libvirt_due) {
        Status queried = Ok{};
        if (!connection) {
          Result<LibvirtConnection> opened = open_embedded(settings.libvirt_root);
          if (opened) {
            connection = std::move(*opened);
          } else {
            queried = opened.error();
          }
        }
        if (connection) {
          Result<NodeFacts> found = query_libvirt(connection.get(), type);
          if (found) {
            found->hyperv = hyperv_capabilities(settings.dev_root + "/dev/kvm");
            found->realtime = realtime_capable();
            facts = std::move(*found);
            facts_type = std::string(type);
            libvirt_failures = 0;
            label_due = now;
            log.write("info", "libvirt queried",
                      {{"virttype", facts_type},
                       {"host_model", facts->domain.host_model.name},
                       {"usable_models", std::to_string(facts->domain.usable_models.size())}});
          } else {
            queried = found.error();
            connection.reset();  // a fresh connection next time
          }
        }
        if (!queried) {
          libvirt_due = now + delay_after(++libvirt_failures);
          log.write("error", "libvirt query failed; retrying",
                    {{"virttype", type}, {"error", queried.error().message}});
        }
      }

      const bool settings_changed = labelled_with && !same_settings(*labelled_with, kubevirt_settings);
      if (facts && (now >= label_due || settings_changed)) {
        if (Status written = label(*facts, kubevirt_settings); !written) {
          log.write("error", "node labelling failed; retrying", {{"error", written.error().message}});
          label_due = now + delay_after(++label_failures);
        } else {
          label_failures = 0;
          // wait.JitterUntil(interval, 1.2): the interval plus up to 120 % more.
          std::uniform_real_distribution<double> spread(0.0, 1.2);
          label_due =
              now + std::chrono::duration_cast<Clock::duration>(settings.label_interval * (1.0 + spread(jitter)));
        }
        labelled_with = kubevirt_settings;
      }

      Clock::time_point next = std::min(heartbeat_due, label_due);
      if (!facts || facts_type != type) {
        next = std::min(next, libvirt_due);
      }
      // A second at most: the KVM device's presence decides the virttype and is not watched.
      next = std::min(next, Clock::now() + std::chrono::seconds(1) * (facts ? 30 : 1));
      if (sleep_until(std::max(next, Clock::now()), true)) {
        return;
      }
    }
  }
};

NodeLabeller::NodeLabeller(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NodeLabeller::~NodeLabeller() {
  stop();
}

Result<std::unique_ptr<NodeLabeller>> NodeLabeller::create(LabellerSettings settings, EventLog& log) {
  Result<kube::ClientConfig> config = kube::kubeconfig_or_in_cluster(
      settings.kubeconfig, "", "no Kubernetes API: give --kubeconfig or run in a pod with a service account");
  if (!config) {
    return config.error();
  }
  auto impl = std::make_unique<Impl>(std::move(settings), log);
  impl->client = std::move(*config);
  for (const std::string& warning : impl->client.warnings) {
    log.write("warning", warning);
  }
  Result<std::unique_ptr<kube::ApiConnection>> api = kube::ApiConnection::create(impl->client);
  if (!api) {
    return api.error();
  }
  impl->api = std::move(*api);
  Impl* raw = impl.get();
  // Only the install namespace's CRs: a tenant may create a KubeVirt object in a namespace of
  // its own, and it must not decide which CPU models this node offers.
  Result<std::unique_ptr<kube::ObjectInformer>> informer = kube::ObjectInformer::create(
      impl->client,
      {.resource = "kubevirts",
       .collection_path =
           "/apis/kubevirt.io/v1/namespaces/" + kube::query_escape(impl->settings.kubevirt_namespace) + "/kubevirts",
       .label_selector = "",
       .field_selector = ""},
      [&log](std::string_view level, std::string_view message,
             const std::vector<std::pair<std::string, std::string>>& fields) {
        std::string detail;
        for (const auto& [key, value] : fields) {
          detail.append(detail.empty() ? "" : ", ").append(key).append("=").append(value);
        }
        log.write(level, message, {{"detail", detail}});
      },
      [raw] {
        const std::lock_guard lock(raw->mutex);
        raw->cr_changed = true;
        raw->wake.notify_all();
      });
  if (!informer) {
    return informer.error();
  }
  impl->kubevirts = std::move(*informer);
  return std::unique_ptr<NodeLabeller>(new NodeLabeller(std::move(impl)));
}

void NodeLabeller::start() {
  impl_->kubevirts->start();
  impl_->log.write("info", "node labeller started",
                   {{"node", impl_->settings.node_name},
                    {"api", impl_->client.origin},
                    {"kubevirt_namespace", impl_->settings.kubevirt_namespace}});
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

void NodeLabeller::stop() {
  if (impl_->stopped) {
    return;
  }
  impl_->stopped = true;
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) {
    impl_->thread.join();
  } else {
    return;  // never started: nothing was marked schedulable
  }
  impl_->kubevirts->stop();
  // heartbeat.go labelNodeUnschedulable: retried a few times, as retry.DefaultBackoff.
  const KubeVirtSettings kubevirt_settings = impl_->kubevirt();
  for (int attempt = 0; attempt < 4; ++attempt) {
    const Status sent = impl_->heartbeat(false, kubevirt_settings);
    if (sent) {
      impl_->log.write("info", "node marked kubevirt.io/schedulable=false", {{"node", impl_->settings.node_name}});
      return;
    }
    impl_->log.write("warning", "cannot mark the node unschedulable", {{"error", sent.error().message}});
    std::this_thread::sleep_for(std::chrono::milliseconds(200) * (attempt + 1));
  }
}

}  // namespace vmgate::node
