#pragma once
// Live lookups of cluster objects the watch cache does not hold yet. One `kubectl apply -f` often
// creates an instancetype, a preference or a volume together with the VM naming it, and the VM
// can reach the webhook before the watch event of the object does: admission then asks the API
// for the object itself. Nothing here blocks the caller: an admission that misses an object
// records the miss, asks for it with resolve() and is run again when the answers are in (or its
// deadline passed), so that a slow or frozen API server delays only the admissions that need
// an object it has not delivered, never the others, /readyz or /metrics.
//
// - Workers: a few threads, each with its own connection, take the keys from one queue; a GET
//   has its own deadline (LookupTuning::get_deadline).
// - One request per key: admissions asking for a key already in flight wait for that GET.
// - Answers are remembered for `remember` (found or not, the watch catches up meanwhile); the
//   informers call forget() when they see the object, so a deleted object is not recalled.
// - A breaker: after `breaker_failures` failed GETs in a row (transport errors, timeouts, 5xx,
//   429) no GET is sent for `breaker_open` (doubling while the API keeps failing, up to
//   `breaker_open_max`); meanwhile every miss is answered at once as unavailable, read as absent
//   (as KubeVirt reads a failed GET of an optional object). After the pause one GET probes.
// - Bounded: at most `max_queued` keys wait for a worker; more are answered unavailable at once.
// Thread-safety: every member function from any thread. Callbacks run on a worker or the timer
// thread, or inline in resolve() when nothing is left to ask; they must not block.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/kube/cached_object.hpp"

namespace vmgate::kube {

/// One object to look up.
struct ObjectRef {
  admission::ObjectKind kind = admission::ObjectKind::instancetype;
  std::string namespace_name;  // empty for cluster-scoped kinds
  std::string name;
};

/// What one GET found.
struct FetchAnswer {
  enum class Outcome {
    found,   // 200: `object`
    absent,  // 404
    failed,  // transport error, timeout, 5xx, 429, anything unexpected: `problem` says what
  };
  Outcome outcome = Outcome::failed;
  CachedObjectPtr object;
  std::string problem;
};

/// Sends the GETs of one worker (a connection of its own). The cache's own uses the API client;
/// tests give scripted ones.
class ObjectFetcher {
 public:
  virtual ~ObjectFetcher() = default;
  virtual FetchAnswer get(const ObjectRef& ref, std::chrono::milliseconds deadline) = 0;
  /// Interrupts the GET in progress and every later one (stop()). Thread-safe.
  virtual void cancel() = 0;
};
using FetcherFactory = std::function<std::unique_ptr<ObjectFetcher>()>;

struct LookupTuning {
  std::size_t workers = 4;
  std::chrono::milliseconds get_deadline{2000};
  std::chrono::milliseconds remember{5000};  // found or absent answers
  std::chrono::milliseconds remember_failed{1000};
  std::size_t max_queued = 256;
  std::size_t max_remembered = 10000;
  unsigned breaker_failures = 3;
  std::chrono::milliseconds breaker_open{2000};
  std::chrono::milliseconds breaker_open_max{30000};
};

/// Counters for /metrics.
struct LookupStats {
  std::uint64_t found = 0;      // GETs that found the object
  std::uint64_t absent = 0;     // GETs answered 404
  std::uint64_t failed = 0;     // GETs that failed
  std::uint64_t shed = 0;       // misses answered unavailable without a GET (breaker open, queue full)
  std::uint64_t coalesced = 0;  // misses that joined a GET already in flight
  std::uint64_t recalled = 0;   // misses answered from a remembered answer
  std::uint64_t breaker_trips = 0;
  bool breaker_open = false;
  std::size_t queued = 0;
  std::size_t in_flight = 0;
};

/// A remembered answer.
struct Recalled {
  enum class State {
    unknown,      // never asked, or forgotten: resolve() it
    found,        // `object`
    absent,       // the API said 404 recently
    unavailable,  // the API cannot be asked now (breaker open) or failed recently: read as absent
  };
  State state = State::unknown;
  CachedObjectPtr object;
};

class LiveLookup {
 public:
  using Clock = std::chrono::steady_clock;

  /// `kinds`: the kinds that may be looked up (others are always unavailable). `now` is injected
  /// for the tests of remembering and the breaker; deadlines are waited in real time.
  LiveLookup(FetcherFactory fetchers, std::vector<admission::ObjectKind> kinds, LookupTuning tuning = {},
             std::function<Clock::time_point()> now = Clock::now);
  LiveLookup(const LiveLookup&) = delete;
  LiveLookup& operator=(const LiveLookup&) = delete;
  ~LiveLookup();  // stops

  [[nodiscard]] bool looks_up(admission::ObjectKind kind) const;

  /// The remembered answer for `ref`, at once. Counts a recall when it is one.
  [[nodiscard]] Recalled recall(const ObjectRef& ref);

  /// Looks up each of `refs` not answered yet (sharing GETs in flight) and calls `done` once:
  /// when every one is answered, or at `deadline`, whichever comes first (inline when nothing
  /// needs asking). Afterwards recall() gives the answers that came in time.
  void resolve(std::vector<ObjectRef> refs, Clock::time_point deadline, std::function<void()> done);

  /// The watch saw the object (added, changed or deleted): its remembered answer is dropped.
  void forget(admission::ObjectKind kind, std::string_view namespace_name, std::string_view name);

  [[nodiscard]] LookupStats stats() const;

  /// Cancels the GETs in flight, answers every waiting resolve() (its `done` runs) and joins
  /// the threads; later resolve() calls complete inline. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::kube
