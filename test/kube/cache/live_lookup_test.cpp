// LiveLookup (kube/src/cache/live_lookup.cpp) with scripted fetchers: answers remembered and
// forgotten, one GET per key however many admissions wait for it, deadlines kept while a GET
// hangs, the breaker opening after failures in a row and probing after its pause, the queue
// bound, and stop() answering whoever waits. Time for remembering and the breaker is injected.
#include "vmgate/kube/live_lookup.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::kube {
namespace {

using namespace std::chrono_literals;
using admission::ObjectKind;
using Clock = LiveLookup::Clock;

// The answers of a scripted API server, shared by the workers' fetchers: `answer` decides from
// the object's name; `hold` makes GETs wait until released (or cancelled).
class Script {
 public:
  std::function<FetchAnswer(const ObjectRef&)> answer = [](const ObjectRef& ref) {
    if (ref.name.starts_with("missing")) {
      return FetchAnswer{FetchAnswer::Outcome::absent, nullptr, {}};
    }
    if (ref.name.starts_with("broken")) {
      return FetchAnswer{FetchAnswer::Outcome::failed, nullptr, "503 Service Unavailable"};
    }
    const json::Document object = testing::parse(R"({"metadata":{"name":")" + ref.name + R"("}})");
    return FetchAnswer{FetchAnswer::Outcome::found, std::make_shared<const CachedObject>(object, 64), {}};
  };

  void hold() {
    const std::lock_guard lock(mutex_);
    held_ = true;
  }
  void release() {
    const std::lock_guard lock(mutex_);
    held_ = false;
    changed_.notify_all();
  }
  // Waits until `count` GETs were sent.
  bool wait_for_gets(std::size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 5s, [&] { return gets_.size() >= count; });
  }
  std::vector<std::string> gets() {
    const std::lock_guard lock(mutex_);
    return gets_;
  }

  FetchAnswer get(const ObjectRef& ref, const std::atomic<bool>& cancelled) {
    std::unique_lock lock(mutex_);
    gets_.push_back(ref.name);
    changed_.notify_all();
    changed_.wait(lock, [&] { return !held_ || cancelled.load(); });
    if (cancelled.load()) {
      return FetchAnswer{FetchAnswer::Outcome::failed, nullptr, "cancelled"};
    }
    lock.unlock();
    return answer(ref);
  }
  void cancelled() {
    const std::lock_guard lock(mutex_);
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool held_ = false;
  std::vector<std::string> gets_;
};

class ScriptedFetcher final : public ObjectFetcher {
 public:
  explicit ScriptedFetcher(Script& script) : script_(script) {}
  FetchAnswer get(const ObjectRef& ref, std::chrono::milliseconds /*deadline*/) override {
    return script_.get(ref, cancelled_);
  }
  void cancel() override {
    cancelled_ = true;
    script_.cancelled();
  }

 private:
  Script& script_;
  std::atomic<bool> cancelled_{false};
};

// A clock the test moves.
struct TestClock {
  std::atomic<Clock::rep> ticks{Clock::now().time_since_epoch().count()};
  Clock::time_point now() const { return Clock::time_point(Clock::duration(ticks.load())); }
  void advance(Clock::duration by) { ticks += by.count(); }
};

// Counts resolve() completions.
class Waiter {
 public:
  std::function<void()> callback() {
    return [this] {
      const std::lock_guard lock(mutex_);
      ++done_;
      changed_.notify_all();
    };
  }
  bool wait_for(int count, std::chrono::milliseconds limit = 5s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return done_ >= count; });
  }
  int done() {
    const std::lock_guard lock(mutex_);
    return done_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int done_ = 0;
};

ObjectRef pvc(std::string name) {
  return ObjectRef{ObjectKind::persistent_volume_claim, "team-a", std::move(name)};
}

struct Fixture {
  explicit Fixture(LookupTuning tuning = {})
      : lookup([this] { return std::make_unique<ScriptedFetcher>(script); },
               {ObjectKind::persistent_volume_claim, ObjectKind::cluster_instancetype}, tuning,
               [this] { return clock.now(); }) {}
  Script script;
  TestClock clock;
  LiveLookup lookup;
};

TEST(LiveLookup, FoundAndAbsentAnswersAreRememberedUntilTheyExpireOrTheWatchSeesTheObject) {
  LookupTuning tuning;
  tuning.remember = 5s;
  Fixture fixture(tuning);
  EXPECT_EQ(fixture.lookup.recall(pvc("disk")).state, Recalled::State::unknown);
  Waiter waiter;
  fixture.lookup.resolve({pvc("disk"), pvc("missing-disk")}, Clock::now() + 5s, waiter.callback());
  ASSERT_TRUE(waiter.wait_for(1));
  const Recalled found = fixture.lookup.recall(pvc("disk"));
  ASSERT_EQ(found.state, Recalled::State::found);
  EXPECT_EQ(testing::dump(found.object->value), R"({"metadata":{"name":"disk"}})");
  EXPECT_EQ(fixture.lookup.recall(pvc("missing-disk")).state, Recalled::State::absent);
  // Another namespace is another object.
  EXPECT_EQ(fixture.lookup.recall(ObjectRef{ObjectKind::persistent_volume_claim, "team-b", "disk"}).state,
            Recalled::State::unknown);

  // Asked again while remembered: no GET, done at once.
  fixture.lookup.resolve({pvc("disk")}, Clock::now() + 5s, waiter.callback());
  EXPECT_EQ(waiter.done(), 2);
  EXPECT_EQ(fixture.script.gets().size(), 2U);

  fixture.lookup.forget(ObjectKind::persistent_volume_claim, "team-a", "disk");
  EXPECT_EQ(fixture.lookup.recall(pvc("disk")).state, Recalled::State::unknown);
  fixture.clock.advance(6s);
  EXPECT_EQ(fixture.lookup.recall(pvc("missing-disk")).state, Recalled::State::unknown);

  const LookupStats stats = fixture.lookup.stats();
  EXPECT_EQ(stats.found, 1U);
  EXPECT_EQ(stats.absent, 1U);
  EXPECT_EQ(stats.failed, 0U);
}

TEST(LiveLookup, KindsNotLookedUpAreUnavailableWithoutAGet) {
  Fixture fixture;
  const ObjectRef kubevirt{ObjectKind::kubevirt, "kubevirt", "kubevirt"};
  EXPECT_FALSE(fixture.lookup.looks_up(ObjectKind::kubevirt));
  EXPECT_EQ(fixture.lookup.recall(kubevirt).state, Recalled::State::unavailable);
  Waiter waiter;
  fixture.lookup.resolve({kubevirt}, Clock::now() + 5s, waiter.callback());
  EXPECT_EQ(waiter.done(), 1);
  EXPECT_TRUE(fixture.script.gets().empty());
}

TEST(LiveLookup, AdmissionsWaitingForTheSameObjectShareOneGet) {
  Fixture fixture;
  fixture.script.hold();
  Waiter waiter;
  for (int i = 0; i < 10; ++i) {
    fixture.lookup.resolve({pvc("disk")}, Clock::now() + 10s, waiter.callback());
  }
  ASSERT_TRUE(fixture.script.wait_for_gets(1));
  EXPECT_EQ(waiter.done(), 0);
  fixture.script.release();
  ASSERT_TRUE(waiter.wait_for(10));
  EXPECT_EQ(fixture.script.gets().size(), 1U);
  EXPECT_EQ(fixture.lookup.stats().coalesced, 9U);
}

TEST(LiveLookup, AHangingGetEndsTheWaitAtTheDeadlineAndStopCancelsIt) {
  Fixture fixture;
  fixture.script.hold();
  Waiter waiter;
  const auto started = Clock::now();
  fixture.lookup.resolve({pvc("disk")}, started + 200ms, waiter.callback());
  ASSERT_TRUE(waiter.wait_for(1, 5s));
  const auto waited = Clock::now() - started;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 3s);
  // Still unanswered: the next admission asks again and joins the GET in flight.
  EXPECT_EQ(fixture.lookup.recall(pvc("disk")).state, Recalled::State::unknown);
  EXPECT_EQ(fixture.lookup.stats().in_flight, 1U);
  fixture.lookup.resolve({pvc("disk")}, Clock::now() + 10s, waiter.callback());
  fixture.lookup.stop();  // cancels the GET; the second waiter is answered
  EXPECT_EQ(waiter.done(), 2);
  EXPECT_EQ(fixture.script.gets().size(), 1U);
  // After stop() nothing is asked and nobody waits.
  fixture.lookup.resolve({pvc("other")}, Clock::now() + 10s, waiter.callback());
  EXPECT_EQ(waiter.done(), 3);
}

TEST(LiveLookup, TheBreakerOpensAfterFailuresInARowProbesAfterItsPauseAndClosesOnSuccess) {
  LookupTuning tuning;
  tuning.workers = 1;
  tuning.breaker_failures = 3;
  tuning.breaker_open = 2s;
  tuning.breaker_open_max = 5s;
  tuning.remember_failed = 1s;
  Fixture fixture(tuning);
  Waiter waiter;
  for (int i = 0; i < 3; ++i) {
    fixture.lookup.resolve({pvc("broken-" + std::to_string(i))}, Clock::now() + 5s, waiter.callback());
    ASSERT_TRUE(waiter.wait_for(i + 1));
  }
  EXPECT_EQ(fixture.script.gets().size(), 3U);
  LookupStats stats = fixture.lookup.stats();
  EXPECT_TRUE(stats.breaker_open);
  EXPECT_EQ(stats.breaker_trips, 1U);
  EXPECT_EQ(stats.failed, 3U);

  // Open: a miss is unavailable at once, and asking sends nothing.
  EXPECT_EQ(fixture.lookup.recall(pvc("disk")).state, Recalled::State::unavailable);
  fixture.lookup.resolve({pvc("disk")}, Clock::now() + 5s, waiter.callback());
  EXPECT_EQ(waiter.done(), 4);
  EXPECT_EQ(fixture.script.gets().size(), 3U);

  // After the pause one GET probes; it fails: open again, for twice as long.
  fixture.clock.advance(2100ms);
  EXPECT_EQ(fixture.lookup.recall(pvc("broken-probe")).state, Recalled::State::unknown);
  fixture.lookup.resolve({pvc("broken-probe")}, Clock::now() + 5s, waiter.callback());
  ASSERT_TRUE(waiter.wait_for(5));
  EXPECT_EQ(fixture.script.gets().size(), 4U);
  fixture.clock.advance(2100ms);
  EXPECT_EQ(fixture.lookup.recall(pvc("disk")).state, Recalled::State::unavailable);
  EXPECT_EQ(fixture.lookup.stats().breaker_trips, 1U);  // one trip, extended

  // The API is back: the next probe succeeds and closes the breaker.
  fixture.clock.advance(2000ms);
  fixture.lookup.resolve({pvc("disk")}, Clock::now() + 5s, waiter.callback());
  ASSERT_TRUE(waiter.wait_for(6));
  EXPECT_EQ(fixture.lookup.recall(pvc("disk")).state, Recalled::State::found);
  EXPECT_FALSE(fixture.lookup.stats().breaker_open);
  EXPECT_EQ(fixture.lookup.recall(pvc("other")).state, Recalled::State::unknown);
}

// The only worker busy with a held GET of `first`: what is asked next waits in the queue.
void occupy_the_worker(Fixture& fixture, Waiter& waiter, const std::string& first) {
  fixture.script.hold();
  fixture.lookup.resolve({pvc(first)}, Clock::now() + 10s, waiter.callback());
  ASSERT_TRUE(fixture.script.wait_for_gets(1));
}

TEST(LiveLookup, WhatWaitsInTheQueueIsAnsweredAtOnceWhenTheBreakerOpens) {
  LookupTuning tuning;
  tuning.workers = 1;
  tuning.breaker_failures = 1;
  Fixture fixture(tuning);
  Waiter waiter;
  occupy_the_worker(fixture, waiter, "broken");
  fixture.lookup.resolve({pvc("a"), pvc("b")}, Clock::now() + 10s, waiter.callback());
  EXPECT_EQ(fixture.lookup.stats().queued, 2U);
  fixture.script.release();
  ASSERT_TRUE(waiter.wait_for(2));
  EXPECT_EQ(fixture.script.gets().size(), 1U);
  EXPECT_EQ(fixture.lookup.stats().shed, 2U);
  EXPECT_EQ(fixture.lookup.recall(pvc("a")).state, Recalled::State::unavailable);
}

TEST(LiveLookup, TheQueueIsBounded) {
  LookupTuning tuning;
  tuning.workers = 1;
  tuning.max_queued = 2;
  Fixture fixture(tuning);
  Waiter waiter;
  occupy_the_worker(fixture, waiter, "first");
  fixture.lookup.resolve({pvc("a"), pvc("b"), pvc("c"), pvc("d")}, Clock::now() + 10s, waiter.callback());
  const LookupStats stats = fixture.lookup.stats();
  EXPECT_EQ(stats.queued, 2U);
  EXPECT_EQ(stats.shed, 2U);
  fixture.script.release();
  ASSERT_TRUE(waiter.wait_for(2));
  EXPECT_EQ(fixture.script.gets().size(), 3U);
}

}  // namespace
}  // namespace vmgate::kube
