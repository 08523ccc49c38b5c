// The controller's informers (object_informer.hpp).
#include "vmgate/kube/object_informer.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/api_client.hpp"

namespace vmgate::kube {

using Objects = std::map<std::string, std::shared_ptr<const json::Document>>;

namespace {

std::string key_of(const json::Value& object) {
  const json::Value* metadata = json::find_object(object, "metadata");
  if (metadata == nullptr) {
    return {};
  }
  return std::string(json::find_string(*metadata, "namespace")) + "/" +
         std::string(json::find_string(*metadata, "name"));
}

std::shared_ptr<const json::Document> document_of(const json::Value& object) {
  auto document = std::make_shared<json::Document>();
  document->CopyFrom(object, document->GetAllocator());
  return document;
}

}  // namespace

struct ObjectInformer::Impl {
  InformerSpec spec;
  CacheLog log;
  std::function<void()> on_change;
  CacheTuning tuning;
  std::unique_ptr<ApiConnection> connection;
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::mutex sleep_mutex;
  std::condition_variable sleep_wake;

  mutable std::mutex mutex;
  Objects published;
  bool synced = false;
  std::string last_error;

  void emit(std::string_view level, std::string_view message, const std::string& error) {
    if (log) {
      log(level, message, {{"resource", spec.resource}, {"error", error}});
    }
  }

  void fail(const std::string& message) {
    bool changed = false;
    {
      std::lock_guard lock(mutex);
      changed = last_error != message;
      last_error = message;
    }
    if (changed && !stopping.load()) {
      emit("error", "informer", message);
    }
  }

  void publish(const Objects& objects) {
    {
      std::lock_guard lock(mutex);
      published = objects;
      synced = true;
      last_error.clear();
    }
    if (on_change) {
      on_change();
    }
  }

  bool sleep(std::chrono::milliseconds duration) {
    std::unique_lock lock(sleep_mutex);
    sleep_wake.wait_for(lock, duration, [this] { return stopping.load(); });
    return !stopping.load();
  }

  std::string with_selector(std::string target) const {
    if (!spec.label_selector.empty()) {
      target += "&labelSelector=" + query_escape(spec.label_selector);
    }
    if (!spec.field_selector.empty()) {
      target += "&fieldSelector=" + query_escape(spec.field_selector);
    }
    return target;
  }

  bool list(Objects& objects, std::string& resource_version) {
    Objects listed;
    std::string continue_token;
    do {
      std::string target = with_selector(spec.collection_path + "?limit=" + std::to_string(tuning.page_size));
      if (!continue_token.empty()) {
        target += "&continue=" + query_escape(continue_token);
      }
      Result<HttpResponse, TransportError> response = connection->get(target, tuning.request_deadline);
      if (!response) {
        fail("list " + spec.resource + ": " + response.error().message);
        return false;
      }
      if (response->status != 200) {
        fail("list " + spec.resource + ": " + std::to_string(response->status) + ": " + status_message(*response));
        return false;
      }
      Result<json::Document, json::DecodeError> page = json::parse_json(response->body);
      const json::Value* items = page ? json::find_array(*page, "items") : nullptr;
      const json::Value* metadata = page ? json::find_object(*page, "metadata") : nullptr;
      if (items == nullptr || metadata == nullptr) {
        fail("list " + spec.resource + ": the answer is not a list");
        return false;
      }
      for (const json::Value& item : items->GetArray()) {
        listed[key_of(item)] = document_of(item);
      }
      continue_token = std::string(json::find_string(*metadata, "continue"));
      resource_version = std::string(json::find_string(*metadata, "resourceVersion"));
    } while (!continue_token.empty() && !stopping.load());
    objects = std::move(listed);
    return true;
  }

  // true: watch again from resource_version; false: list again (after a backoff when failed).
  bool watch(Objects& objects, std::string& resource_version, bool& failed) {
    const std::string target = with_selector(
        spec.collection_path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + query_escape(resource_version) +
        "&timeoutSeconds=" + std::to_string(tuning.watch_timeout.count()));
    bool changed = false;
    bool again = true;
    const auto on_line = [&](std::string_view line) {
      if (stopping.load()) {
        return false;
      }
      Result<json::Document, json::DecodeError> event = json::parse_json(line);
      const json::Value* object = event ? json::find_object(*event, "object") : nullptr;
      if (object == nullptr) {
        fail("watch " + spec.resource + ": an event that is not a watch event");
        again = false;
        failed = true;
        return false;
      }
      const std::string_view type = json::find_string(*event, "type");
      if (type == "ERROR") {
        const json::Value* code = json::find(*object, "code");
        const bool gone = code != nullptr && code->IsInt() && code->GetInt() == 410;
        if (!gone) {
          fail("watch " + spec.resource + ": " + std::string(json::find_string(*object, "message")));
          failed = true;
        }
        again = false;
        return false;
      }
      if (const json::Value* version = json::find_path(*object, {"metadata", "resourceVersion"});
          version != nullptr && version->IsString()) {
        resource_version = std::string(json::as_view(*version));
      }
      if (type == "ADDED" || type == "MODIFIED") {
        objects[key_of(*object)] = document_of(*object);
        changed = true;
      } else if (type == "DELETED") {
        objects.erase(key_of(*object));
        changed = true;
      }
      return true;
    };
    const auto after_lines = [&] {
      if (changed) {
        publish(objects);
        changed = false;
      }
    };
    Result<ApiConnection::Streamed, TransportError> streamed =
        connection->stream(target, tuning.request_deadline, tuning.watch_idle, on_line, after_lines);
    after_lines();
    if (!streamed) {
      if (!stopping.load()) {
        fail("watch " + spec.resource + ": " + streamed.error().message);
      }
      failed = true;
      return false;
    }
    if (streamed->refused) {
      if (streamed->refused->status != 410) {
        fail("watch " + spec.resource + ": " + std::to_string(streamed->refused->status) + ": " +
             status_message(*streamed->refused));
        failed = true;
      }
      return false;
    }
    return again;
  }

  void run() {
    std::mt19937_64 random(std::random_device{}());
    std::chrono::milliseconds backoff = tuning.backoff_initial;
    Objects objects;
    std::string resource_version;
    while (!stopping.load()) {
      if (!list(objects, resource_version)) {
        std::uniform_int_distribution<std::int64_t> jitter(backoff.count() / 2, backoff.count());
        if (!sleep(std::chrono::milliseconds(jitter(random)))) {
          return;
        }
        backoff = std::min(backoff * 2, tuning.backoff_max);
        continue;
      }
      backoff = tuning.backoff_initial;
      publish(objects);
      bool failed = false;
      while (!stopping.load() && watch(objects, resource_version, failed)) {
      }
      if (failed && !sleep(backoff)) {
        return;
      }
    }
  }
};

ObjectInformer::ObjectInformer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ObjectInformer::~ObjectInformer() {
  stop();
}

Result<std::unique_ptr<ObjectInformer>> ObjectInformer::create(const ClientConfig& config, InformerSpec spec,
                                                               CacheLog log, std::function<void()> on_change,
                                                               CacheTuning tuning) {
  Result<std::unique_ptr<ApiConnection>> connection = ApiConnection::create(config);
  if (!connection) {
    return connection.error();
  }
  auto impl = std::make_unique<Impl>();
  impl->spec = std::move(spec);
  impl->log = std::move(log);
  impl->on_change = std::move(on_change);
  impl->tuning = tuning;
  impl->connection = std::move(connection.value());
  return std::unique_ptr<ObjectInformer>(new ObjectInformer(std::move(impl)));
}

void ObjectInformer::start() {
  impl_->thread = std::thread([this] { impl_->run(); });
}

void ObjectInformer::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) {
    return;
  }
  { std::lock_guard lock(impl_->sleep_mutex); }
  impl_->sleep_wake.notify_all();
  impl_->connection->cancel();
  if (impl_->thread.joinable()) {
    impl_->thread.join();
  }
}

bool ObjectInformer::synced() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->synced;
}

std::vector<std::shared_ptr<const json::Document>> ObjectInformer::objects() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::shared_ptr<const json::Document>> out;
  out.reserve(impl_->published.size());
  for (const auto& [key, object] : impl_->published) {
    out.push_back(object);
  }
  return out;
}

}  // namespace vmgate::kube
