// The launcher's link to its VMI (vmi_link.hpp).
#include "vmgate/kube/utc_time.hpp"
#include "vmgate/launcher/vmi_link.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/object_informer.hpp"
#include "vmgate/kube/vmi_status.hpp"

namespace vmgate::launcher {
namespace {

std::string_view meta(const json::Value& object, std::string_view key) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata == nullptr ? std::string_view() : json::find_string(*metadata, key);
}

}  // namespace

Result<kube::ClientConfig> vmi_client_config(const std::string& kubeconfig, const std::string& context) {
  return kube::kubeconfig_or_in_cluster(kubeconfig, context,
                                        "--vmi-name needs --kubeconfig FILE, or a pod's service account");
}

struct VmiLink::Impl {
  std::ostream& log;
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string path;
  kube::ClientConfig config;
  std::unique_ptr<kube::ApiConnection> api;
  std::unique_ptr<kube::ObjectInformer> informer;
  std::function<void()> on_deleted;
  std::atomic<bool> deleted{false};

  std::mutex mutex;
  std::condition_variable wake;
  std::optional<std::pair<std::string, std::string>> pending;  // phase, reason
  bool stopping_seen = false;
  bool finishing = false;
  bool idle = true;
  std::thread writer;
  std::mutex log_mutex;

  explicit Impl(std::ostream& out) : log(out) {}

  void say(const std::string& line) {
    std::lock_guard lock(log_mutex);
    log << "vmgate-launcher: " << line << std::endl;
  }

  void write_loop() {
    std::unique_lock lock(mutex);
    std::chrono::milliseconds backoff{200};
    for (;;) {
      wake.wait(lock, [this] { return pending.has_value() || finishing; });
      if (!pending) {
        return;
      }
      const auto [phase, reason] = *pending;
      const bool stopping = stopping_seen;
      pending.reset();
      idle = false;
      lock.unlock();
      bool written = deleted.load() && (phase == "Succeeded" || phase == "Failed");  // nothing left to report to
      if (!written) {
        const std::string body = json::to_string(kube::vmi_status_patch(uid, phase, reason, stopping, kube::utc_now()));
        Result<kube::HttpResponse, kube::TransportError> response =
            api->request("PATCH", path, body, "application/merge-patch+json", std::chrono::seconds(10));
        written = response && (response->status == 200 || response->status == 404 || response->status == 409 ||
                               response->status == 422);
        if (!response) {
          say("status " + phase + " not written: " + response.error().message);
        } else if (response->status != 200) {
          say("status " + phase + " not written: " + std::to_string(response->status) + ": " +
              kube::status_message(*response));
        }
      }
      lock.lock();
      idle = true;
      wake.notify_all();
      if (!written && !finishing && !pending) {
        pending.emplace(phase, reason);  // retry, unless a newer report came
        wake.wait_for(lock, backoff, [this] { return finishing; });
        backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
      } else {
        backoff = std::chrono::milliseconds(200);
      }
    }
  }

  void check_vmi() {
    if (!informer->synced() || deleted.load()) {
      return;
    }
    const auto objects = informer->objects();
    std::string why;
    if (objects.empty()) {
      why = "deleted";
    } else if (meta(*objects.front(), "uid") != uid) {
      why = "replaced by another of the same name";
    } else if (!meta(*objects.front(), "deletionTimestamp").empty()) {
      why = "marked for deletion";
    }
    if (!why.empty() && !deleted.exchange(true)) {
      say("VirtualMachineInstance " + namespace_name + "/" + name + " " + why + ": stopping the guest");
      if (on_deleted) {
        on_deleted();
      }
    }
  }
};

VmiLink::VmiLink(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

VmiLink::~VmiLink() {
  finish();
}

Result<std::unique_ptr<VmiLink>> VmiLink::create(const kube::ClientConfig& config, const json::Value& vmi,
                                                 std::ostream& log) {
  auto impl = std::make_unique<Impl>(log);
  impl->namespace_name = meta(vmi, "namespace");
  impl->name = meta(vmi, "name");
  impl->uid = meta(vmi, "uid");
  if (impl->namespace_name.empty() || impl->name.empty() || impl->uid.empty()) {
    return Error{"the VirtualMachineInstance read has no namespace, name or uid"};
  }
  impl->config = config;
  const std::string collection =
      "/apis/kubevirt.io/v1/namespaces/" + kube::query_escape(impl->namespace_name) + "/virtualmachineinstances";
  impl->path = collection + "/" + kube::query_escape(impl->name);
  Result<std::unique_ptr<kube::ApiConnection>> api = kube::ApiConnection::create(config);
  if (!api) {
    return api.error();
  }
  impl->api = std::move(api.value());
  Impl* raw = impl.get();
  kube::CacheLog cache_log = [raw](std::string_view level, std::string_view message,
                                   const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string line = std::string(level) + ": " + std::string(message);
    for (const auto& [key, value] : fields) {
      line += " ";
      line += key;
      line += "=";
      line += value;
    }
    raw->say(line);
  };
  kube::InformerSpec spec{"virtualmachineinstances", collection, "", "metadata.name=" + impl->name};
  kube::CacheTuning tuning;
  tuning.backoff_max = std::chrono::milliseconds(5000);
  Result<std::unique_ptr<kube::ObjectInformer>> informer = kube::ObjectInformer::create(
      config, spec, cache_log, [raw] { raw->check_vmi(); }, tuning);
  if (!informer) {
    return informer.error();
  }
  impl->informer = std::move(informer.value());
  return std::unique_ptr<VmiLink>(new VmiLink(std::move(impl)));
}

void VmiLink::start(std::function<void()> on_deleted) {
  impl_->on_deleted = std::move(on_deleted);
  impl_->writer = std::thread([this] { impl_->write_loop(); });
  impl_->informer->start();
}

void VmiLink::report(const std::string& phase, const std::string& reason) {
  {
    std::lock_guard lock(impl_->mutex);
    if (reason.find("stop requested") != std::string::npos) {
      impl_->stopping_seen = true;
    }
    impl_->pending.emplace(phase, reason);
  }
  impl_->wake.notify_all();
}

void VmiLink::finish() {
  if (!impl_ || !impl_->writer.joinable()) {
    return;
  }
  {
    // The last report gets its chance (bounded), then the writer ends.
    std::unique_lock lock(impl_->mutex);
    impl_->wake.wait_for(lock, std::chrono::seconds(10), [this] { return !impl_->pending && impl_->idle; });
    impl_->finishing = true;
  }
  impl_->wake.notify_all();
  impl_->writer.join();
  impl_->informer->stop();
}

}  // namespace vmgate::launcher
