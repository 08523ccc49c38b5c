#include "vmgate/kube/request_view.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace vmgate::kube {

namespace {

std::string held_key(admission::ObjectKind kind, std::string_view namespace_name, std::string_view name) {
  std::string key(admission::kind_name(kind));
  key.append("/");
  if (admission::is_namespaced(kind)) {
    key.append(namespace_name);
  }
  key.append("/").append(name);
  return key;
}

}  // namespace

RequestView::RequestView(std::shared_ptr<const admission::ClusterView> snapshot, std::shared_ptr<LiveLookup> live)
    : snapshot_(std::move(snapshot)), live_(std::move(live)) {}

const json::Value* RequestView::find(admission::ObjectKind kind, std::string_view namespace_name,
                                     std::string_view name) const {
  if (const json::Value* object = snapshot_->find(kind, namespace_name, name)) {
    return object;
  }
  if (live_ == nullptr || name.empty() || !live_->looks_up(kind) ||
      !snapshot_->unreadable(kind, namespace_name, name).empty()) {
    return nullptr;
  }
  std::string key = held_key(kind, namespace_name, name);
  if (const auto held = held_.find(key); held != held_.end()) {
    return held->second->problem.empty() ? &held->second->value : nullptr;
  }
  ObjectRef ref{kind, admission::is_namespaced(kind) ? std::string(namespace_name) : std::string(), std::string(name)};
  Recalled recalled = live_->recall(ref);
  switch (recalled.state) {
    case Recalled::State::found: {
      if (recalled.object == nullptr || held_.size() >= max_objects) {
        return nullptr;
      }
      const CachedObjectPtr& object = held_.emplace(std::move(key), std::move(recalled.object)).first->second;
      return object->problem.empty() ? &object->value : nullptr;
    }
    case Recalled::State::unknown: {
      const bool known = std::any_of(misses_.begin(), misses_.end(), [&](const ObjectRef& miss) {
        return miss.kind == ref.kind && miss.namespace_name == ref.namespace_name && miss.name == ref.name;
      });
      if (!known && misses_.size() < max_objects) {
        misses_.push_back(std::move(ref));
      }
      return nullptr;
    }
    case Recalled::State::absent:
    case Recalled::State::unavailable:
      return nullptr;
  }
  return nullptr;
}

std::string_view RequestView::unreadable(admission::ObjectKind kind, std::string_view namespace_name,
                                         std::string_view name) const {
  if (const std::string_view problem = snapshot_->unreadable(kind, namespace_name, name); !problem.empty()) {
    return problem;
  }
  if (held_.empty()) {
    return {};  // nothing recalled for this request: no key to build
  }
  if (const auto held = held_.find(held_key(kind, namespace_name, name)); held != held_.end()) {
    return held->second->problem;
  }
  return {};
}

void RequestView::resolve(LiveLookup::Clock::time_point deadline, std::function<void()> done) {
  std::vector<ObjectRef> misses;
  misses.swap(misses_);
  if (live_ == nullptr || misses.empty()) {
    done();
    return;
  }
  live_->resolve(std::move(misses), deadline, std::move(done));
}

void RequestView::resolve_and_wait(LiveLookup::Clock::time_point deadline) {
  struct Answered {
    std::mutex mutex;
    std::condition_variable changed;
    bool done = false;
  };
  auto answered = std::make_shared<Answered>();
  resolve(deadline, [answered] {
    const std::lock_guard lock(answered->mutex);
    answered->done = true;
    answered->changed.notify_all();
  });
  std::unique_lock lock(answered->mutex);
  answered->changed.wait(lock, [&answered] { return answered->done; });
}

}  // namespace vmgate::kube
