// Live lookups (live_lookup.hpp): a queue, a few workers, one GET per key, remembered answers,
// a breaker and a deadline timer.
#include "vmgate/kube/live_lookup.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace vmgate::kube {

namespace {

using Clock = LiveLookup::Clock;

std::string key_of(const ObjectRef& ref) {
  std::string key(admission::kind_name(ref.kind));
  key.append("/");
  if (admission::is_namespaced(ref.kind)) {
    key.append(ref.namespace_name);
  }
  key.append("/").append(ref.name);
  return key;
}

// The admissions waiting for some keys: `done` runs once, when the last key is answered or at
// the deadline.
struct Batch {
  explicit Batch(std::function<void()> callback) : done(std::move(callback)) {}
  std::function<void()> done;
  std::size_t remaining = 0;  // guarded by Impl::mutex
  std::atomic<bool> fired{false};

  void fire() {
    if (!fired.exchange(true)) {
      std::function<void()> callback = std::move(done);
      callback();
    }
  }
};
using BatchPtr = std::shared_ptr<Batch>;

struct Remembered {
  Recalled::State state = Recalled::State::unknown;
  CachedObjectPtr object;
  Clock::time_point expires;
};

struct Pending {
  ObjectRef ref;
  std::vector<BatchPtr> waiters;
};

}  // namespace

struct LiveLookup::Impl {
  Impl(FetcherFactory factory, std::vector<admission::ObjectKind> looked_up, LookupTuning settings,
       std::function<Clock::time_point()> clock)
      : fetchers(std::move(factory)), kinds(std::move(looked_up)), tuning(settings), now(std::move(clock)) {}

  FetcherFactory fetchers;
  std::vector<admission::ObjectKind> kinds;
  LookupTuning tuning;
  std::function<Clock::time_point()> now;

  mutable std::mutex mutex;
  std::condition_variable work;   // workers: a key queued, or stopping
  std::condition_variable timer;  // the timer thread: an earlier deadline, or stopping
  bool stopping = false;
  std::deque<std::string> queue;
  std::unordered_map<std::string, Pending> pending;  // queued or in flight
  std::unordered_map<std::string, Remembered> remembered;
  std::multimap<Clock::time_point, std::weak_ptr<Batch>> deadlines;
  std::vector<ObjectFetcher*> live_fetchers;  // for stop()'s cancel
  std::vector<std::thread> threads;

  // The breaker.
  unsigned failures_in_a_row = 0;
  bool open = false;
  bool probing = false;
  Clock::time_point open_until;
  std::chrono::milliseconds open_period{0};

  LookupStats stats;

  // The threads start with the first lookup: `vmgate check --kubeconfig` lists and never asks.
  void start_threads() {
    if (!threads.empty()) {
      return;
    }
    for (std::size_t i = 0; i < std::max<std::size_t>(tuning.workers, 1); ++i) {
      threads.emplace_back([this] { run_worker(); });
    }
    threads.emplace_back([this] { run_timer(); });
  }

  bool breaker_blocks(Clock::time_point at) const { return open && (at < open_until || probing); }

  void remember(const std::string& key, Recalled::State state, CachedObjectPtr object, Clock::time_point at) {
    if (remembered.size() >= tuning.max_remembered) {
      std::erase_if(remembered, [at](const auto& entry) { return entry.second.expires <= at; });
      if (remembered.size() >= tuning.max_remembered) {
        remembered.clear();
      }
    }
    const auto lifetime = state == Recalled::State::unavailable ? tuning.remember_failed : tuning.remember;
    remembered[key] = Remembered{state, std::move(object), at + lifetime};
  }

  // The waiters whose last key this was; fired by the caller outside the lock.
  void answer(const std::string& key, std::vector<BatchPtr>& ready) {
    const auto found = pending.find(key);
    if (found == pending.end()) {
      return;
    }
    for (BatchPtr& waiter : found->second.waiters) {
      if (--waiter->remaining == 0) {
        ready.push_back(std::move(waiter));
      }
    }
    pending.erase(found);
  }

  // The breaker opened: what waits in the queue is answered unavailable at once.
  void shed_queue(Clock::time_point at, std::vector<BatchPtr>& ready) {
    while (!queue.empty()) {
      const std::string key = std::move(queue.front());
      queue.pop_front();
      ++stats.shed;
      remember(key, Recalled::State::unavailable, nullptr, at);
      answer(key, ready);
    }
  }

  void record(const std::string& key, const FetchAnswer& fetched, bool was_probe, std::vector<BatchPtr>& ready) {
    const Clock::time_point at = now();
    if (was_probe) {
      probing = false;
    }
    switch (fetched.outcome) {
      case FetchAnswer::Outcome::found:
      case FetchAnswer::Outcome::absent:
        fetched.outcome == FetchAnswer::Outcome::found ? ++stats.found : ++stats.absent;
        remember(key, fetched.outcome == FetchAnswer::Outcome::found ? Recalled::State::found : Recalled::State::absent,
                 fetched.object, at);
        failures_in_a_row = 0;
        open = false;
        open_period = std::chrono::milliseconds{0};
        break;
      case FetchAnswer::Outcome::failed:
        ++stats.failed;
        remember(key, Recalled::State::unavailable, nullptr, at);
        ++failures_in_a_row;
        if (was_probe || (!open && failures_in_a_row >= tuning.breaker_failures)) {
          open_period =
              open_period.count() == 0 ? tuning.breaker_open : std::min(open_period * 2, tuning.breaker_open_max);
          if (!open) {
            ++stats.breaker_trips;
          }
          open = true;
          open_until = at + open_period;
          shed_queue(at, ready);
        }
        break;
    }
    answer(key, ready);
  }

  void run_worker() {
    std::unique_ptr<ObjectFetcher> fetcher = fetchers();
    {
      const std::lock_guard lock(mutex);
      if (fetcher != nullptr) {
        live_fetchers.push_back(fetcher.get());
      }
      if (stopping && fetcher != nullptr) {
        fetcher->cancel();
      }
    }
    std::unique_lock lock(mutex);
    while (true) {
      work.wait(lock, [this] { return stopping || !queue.empty(); });
      if (stopping) {
        break;
      }
      const std::string key = std::move(queue.front());
      queue.pop_front();
      const Clock::time_point at = now();
      std::vector<BatchPtr> ready;
      if (breaker_blocks(at) || fetcher == nullptr) {
        ++stats.shed;
        remember(key, Recalled::State::unavailable, nullptr, at);
        answer(key, ready);
      } else {
        const bool probe = open;  // the pause is over: this GET tells whether the API is back
        probing = probe;
        const ObjectRef ref = pending.at(key).ref;
        ++stats.in_flight;
        lock.unlock();
        const FetchAnswer fetched = fetcher->get(ref, tuning.get_deadline);
        lock.lock();
        --stats.in_flight;
        record(key, fetched, probe, ready);
      }
      lock.unlock();
      for (const BatchPtr& batch : ready) {
        batch->fire();
      }
      lock.lock();
    }
    std::erase(live_fetchers, fetcher.get());
  }

  void run_timer() {
    std::unique_lock lock(mutex);
    while (!stopping) {
      if (deadlines.empty()) {
        timer.wait(lock);
        continue;
      }
      const Clock::time_point first = deadlines.begin()->first;
      if (Clock::now() < first) {
        timer.wait_until(lock, first);
        continue;
      }
      std::vector<BatchPtr> due;
      while (!deadlines.empty() && deadlines.begin()->first <= Clock::now()) {
        if (BatchPtr batch = deadlines.begin()->second.lock()) {
          due.push_back(std::move(batch));
        }
        deadlines.erase(deadlines.begin());
      }
      lock.unlock();
      for (const BatchPtr& batch : due) {
        batch->fire();
      }
      lock.lock();
    }
  }
};

LiveLookup::LiveLookup(FetcherFactory fetchers, std::vector<admission::ObjectKind> kinds, LookupTuning tuning,
                       std::function<Clock::time_point()> now)
    : impl_(std::make_unique<Impl>(std::move(fetchers), std::move(kinds), tuning, std::move(now))) {}

LiveLookup::~LiveLookup() {
  stop();
}

bool LiveLookup::looks_up(admission::ObjectKind kind) const {
  return std::find(impl_->kinds.begin(), impl_->kinds.end(), kind) != impl_->kinds.end();
}

Recalled LiveLookup::recall(const ObjectRef& ref) {
  if (!looks_up(ref.kind)) {
    return Recalled{Recalled::State::unavailable, nullptr};
  }
  const std::string key = key_of(ref);
  Impl& impl = *impl_;
  const std::lock_guard lock(impl.mutex);
  const Clock::time_point at = impl.now();
  if (const auto found = impl.remembered.find(key); found != impl.remembered.end()) {
    if (found->second.expires > at) {
      ++impl.stats.recalled;
      return Recalled{found->second.state, found->second.object};
    }
    impl.remembered.erase(found);
  }
  if (impl.breaker_blocks(at) || impl.stopping) {
    ++impl.stats.shed;
    return Recalled{Recalled::State::unavailable, nullptr};
  }
  return {};
}

void LiveLookup::resolve(std::vector<ObjectRef> refs, Clock::time_point deadline, std::function<void()> done) {
  Impl& impl = *impl_;
  auto batch = std::make_shared<Batch>(std::move(done));
  {
    const std::lock_guard lock(impl.mutex);
    const Clock::time_point at = impl.now();
    for (ObjectRef& ref : refs) {
      if (impl.stopping || !looks_up(ref.kind)) {
        continue;
      }
      std::string key = key_of(ref);
      if (const auto found = impl.remembered.find(key); found != impl.remembered.end() && found->second.expires > at) {
        continue;
      }
      if (const auto found = impl.pending.find(key); found != impl.pending.end()) {
        if (std::find(found->second.waiters.begin(), found->second.waiters.end(), batch) ==
            found->second.waiters.end()) {
          ++impl.stats.coalesced;
          found->second.waiters.push_back(batch);
          ++batch->remaining;
        }
        continue;
      }
      if (impl.breaker_blocks(at) || impl.queue.size() >= impl.tuning.max_queued) {
        ++impl.stats.shed;
        continue;
      }
      impl.start_threads();
      impl.pending.emplace(key, Pending{std::move(ref), {batch}});
      impl.queue.push_back(std::move(key));
      ++batch->remaining;
      impl.work.notify_one();
    }
    if (batch->remaining > 0) {
      const bool earliest = impl.deadlines.empty() || deadline < impl.deadlines.begin()->first;
      impl.deadlines.emplace(deadline, batch);
      if (earliest) {
        impl.timer.notify_one();
      }
      return;
    }
  }
  batch->fire();
}

void LiveLookup::forget(admission::ObjectKind kind, std::string_view namespace_name, std::string_view name) {
  const std::string key = key_of(ObjectRef{kind, std::string(namespace_name), std::string(name)});
  const std::lock_guard lock(impl_->mutex);
  impl_->remembered.erase(key);
}

LookupStats LiveLookup::stats() const {
  const std::lock_guard lock(impl_->mutex);
  LookupStats stats = impl_->stats;
  stats.breaker_open = impl_->open;
  stats.queued = impl_->queue.size();
  return stats;
}

void LiveLookup::stop() {
  Impl& impl = *impl_;
  std::vector<BatchPtr> waiting;
  {
    const std::lock_guard lock(impl.mutex);
    impl.stopping = true;
    for (auto& [key, pending] : impl.pending) {
      waiting.insert(waiting.end(), pending.waiters.begin(), pending.waiters.end());
    }
    impl.pending.clear();
    impl.queue.clear();
    impl.deadlines.clear();
    for (ObjectFetcher* fetcher : impl.live_fetchers) {
      fetcher->cancel();
    }
    impl.work.notify_all();
    impl.timer.notify_all();
  }
  for (std::thread& thread : impl.threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  impl.threads.clear();
  for (const BatchPtr& batch : waiting) {
    batch->fire();
  }
}

}  // namespace vmgate::kube
