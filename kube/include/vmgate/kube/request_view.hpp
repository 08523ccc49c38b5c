#pragma once
// The cluster as one admission reads it: a snapshot (the watch cache's, or the loaded files),
// plus the objects looked up live for this admission. find() never waits: an object neither in
// the snapshot nor answered by a live lookup yet is recorded as a miss and read as absent. The
// caller then resolve()s the misses and runs the admission again on the same view; admission is
// pure, so the last run is the answer a blocking lookup would have given, and admissions that
// miss nothing run once, as before.
// Thread-safety: one admission at a time (it is the request's own); resolve()'s callback may run
// on another thread.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/kube/live_lookup.hpp"

namespace vmgate::kube {

class RequestView final : public admission::ClusterView {
 public:
  /// `live` may be nullptr: nothing is ever missed (objects from files).
  RequestView(std::shared_ptr<const admission::ClusterView> snapshot, std::shared_ptr<LiveLookup> live);

  [[nodiscard]] const json::Value* find(admission::ObjectKind kind, std::string_view namespace_name,
                                        std::string_view name) const override;
  [[nodiscard]] const admission::ClusterConfig& config() const override { return snapshot_->config(); }
  [[nodiscard]] std::string_view unreadable(admission::ObjectKind kind, std::string_view namespace_name,
                                            std::string_view name) const override;

  /// Objects the admissions since the last resolve() read as absent that a live lookup may find.
  [[nodiscard]] bool has_misses() const { return !misses_.empty(); }
  /// Looks the misses up; `done` runs once they are answered or at `deadline` (LiveLookup::resolve).
  void resolve(LiveLookup::Clock::time_point deadline, std::function<void()> done);
  /// resolve(), waiting for it: for a caller whose own thread may block (the controller).
  void resolve_and_wait(LiveLookup::Clock::time_point deadline);

  /// At most this many objects are looked up for one admission, and held by the view.
  static constexpr std::size_t max_objects = 64;

 private:
  std::shared_ptr<const admission::ClusterView> snapshot_;
  std::shared_ptr<LiveLookup> live_;
  // Objects found live, kept so that the pointers find() returned stay valid for the request.
  mutable std::unordered_map<std::string, CachedObjectPtr> held_;
  mutable std::vector<ObjectRef> misses_;
};

}  // namespace vmgate::kube
