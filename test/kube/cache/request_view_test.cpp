// RequestView (kube/src/cache/request_view.cpp): the snapshot first, misses recorded instead of
// waited for, the live answers read after resolve(), unreadable objects named and never looked
// up, and a view without live lookups that never misses.
#include "vmgate/kube/request_view.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "support/json_test_support.hpp"

namespace vmgate::kube {
namespace {

using namespace std::chrono_literals;
using admission::ObjectKind;

// Answers every GET from the name: "missing*" 404, anything else found; counts the GETs.
class NameFetcher final : public ObjectFetcher {
 public:
  explicit NameFetcher(std::atomic<int>& gets) : gets_(gets) {}
  FetchAnswer get(const ObjectRef& ref, std::chrono::milliseconds /*deadline*/) override {
    ++gets_;
    if (ref.name.starts_with("missing")) {
      return FetchAnswer{FetchAnswer::Outcome::absent, nullptr, {}};
    }
    const json::Document object = testing::parse(R"({"metadata":{"name":")" + ref.name + R"("},"live":true})");
    auto cached = std::make_shared<CachedObject>(object, 64);
    if (ref.name.starts_with("unreadable")) {
      cached->problem = "spec.memory.guest: too large";
    }
    return FetchAnswer{FetchAnswer::Outcome::found, std::move(cached), {}};
  }
  void cancel() override {}

 private:
  std::atomic<int>& gets_;
};

// A snapshot with one PVC, "cached", and one instancetype it holds but cannot read.
class Snapshot final : public admission::ClusterView {
 public:
  Snapshot() : pvc_(testing::parse(R"({"metadata":{"name":"cached"}})")) {}
  [[nodiscard]] const json::Value* find(ObjectKind kind, std::string_view namespace_name,
                                        std::string_view name) const override {
    return kind == ObjectKind::persistent_volume_claim && namespace_name == "ns" && name == "cached" ? &pvc_ : nullptr;
  }
  [[nodiscard]] const admission::ClusterConfig& config() const override { return config_; }
  [[nodiscard]] std::string_view unreadable(ObjectKind kind, std::string_view, std::string_view name) const override {
    return kind == ObjectKind::cluster_instancetype && name == "huge" ? "spec.memory.guest: too large" : "";
  }

 private:
  json::Document pvc_;
  admission::ClusterConfig config_;
};

struct Fixture {
  Fixture()
      : live(std::make_shared<LiveLookup>(
            [this] { return std::make_unique<NameFetcher>(gets); },
            std::vector<ObjectKind>{ObjectKind::persistent_volume_claim, ObjectKind::cluster_instancetype})),
        view(std::make_shared<const Snapshot>(), live) {}
  std::atomic<int> gets{0};
  std::shared_ptr<LiveLookup> live;
  RequestView view;
};

TEST(RequestView, TheSnapshotAnswersFirstWithoutAMiss) {
  Fixture fixture;
  const json::Value* pvc = fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "cached");
  ASSERT_NE(pvc, nullptr);
  EXPECT_EQ(testing::dump(*pvc), R"({"metadata":{"name":"cached"}})");
  EXPECT_FALSE(fixture.view.has_misses());
}

TEST(RequestView, AMissIsRecordedThenReadFromTheLiveAnswer) {
  Fixture fixture;
  EXPECT_EQ(fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "fresh"), nullptr);
  EXPECT_EQ(fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "fresh"), nullptr);  // one miss
  EXPECT_EQ(fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "missing"), nullptr);
  EXPECT_EQ(fixture.view.find(ObjectKind::kubevirt, "ns", "kubevirt"), nullptr);  // never looked up
  EXPECT_EQ(fixture.view.find(ObjectKind::persistent_volume_claim, "ns", ""), nullptr);
  ASSERT_TRUE(fixture.view.has_misses());
  fixture.view.resolve_and_wait(LiveLookup::Clock::now() + 5s);
  EXPECT_FALSE(fixture.view.has_misses());
  EXPECT_EQ(fixture.gets.load(), 2);

  const json::Value* fresh = fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "fresh");
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(testing::dump(*fresh), R"({"metadata":{"name":"fresh"},"live":true})");
  // The same pointer for the rest of the request.
  EXPECT_EQ(fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "fresh"), fresh);
  EXPECT_EQ(fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "missing"), nullptr);
  EXPECT_FALSE(fixture.view.has_misses());
  // Another request's view recalls the answers without a GET.
  RequestView next(std::make_shared<const Snapshot>(), fixture.live);
  EXPECT_NE(next.find(ObjectKind::persistent_volume_claim, "ns", "fresh"), nullptr);
  EXPECT_FALSE(next.has_misses());
  EXPECT_EQ(fixture.gets.load(), 2);
}

TEST(RequestView, UnreadableObjectsAreNamedAndNotLookedUp) {
  Fixture fixture;
  EXPECT_EQ(fixture.view.find(ObjectKind::cluster_instancetype, "", "huge"), nullptr);
  EXPECT_FALSE(fixture.view.has_misses());
  EXPECT_EQ(fixture.view.unreadable(ObjectKind::cluster_instancetype, "", "huge"), "spec.memory.guest: too large");
  // One found live that the rules cannot read.
  EXPECT_EQ(fixture.view.find(ObjectKind::cluster_instancetype, "", "unreadable-live"), nullptr);
  fixture.view.resolve_and_wait(LiveLookup::Clock::now() + 5s);
  EXPECT_EQ(fixture.view.find(ObjectKind::cluster_instancetype, "", "unreadable-live"), nullptr);
  EXPECT_EQ(fixture.view.unreadable(ObjectKind::cluster_instancetype, "", "unreadable-live"),
            "spec.memory.guest: too large");
  EXPECT_EQ(fixture.view.unreadable(ObjectKind::cluster_instancetype, "", "absent"), "");
}

TEST(RequestView, WithoutLiveLookupsNothingIsMissed) {
  RequestView view(std::make_shared<const Snapshot>(), nullptr);
  EXPECT_EQ(view.find(ObjectKind::persistent_volume_claim, "ns", "fresh"), nullptr);
  EXPECT_FALSE(view.has_misses());
  bool done = false;
  view.resolve(LiveLookup::Clock::now() + 5s, [&done] { done = true; });
  EXPECT_TRUE(done);
}

TEST(RequestView, MissesPerAdmissionAreBounded) {
  Fixture fixture;
  for (std::size_t i = 0; i < RequestView::max_objects + 10; ++i) {
    EXPECT_EQ(fixture.view.find(ObjectKind::persistent_volume_claim, "ns", "pvc-" + std::to_string(i)), nullptr);
  }
  fixture.view.resolve_and_wait(LiveLookup::Clock::now() + 5s);
  EXPECT_EQ(static_cast<std::size_t>(fixture.gets.load()), RequestView::max_objects);
}

}  // namespace
}  // namespace vmgate::kube
