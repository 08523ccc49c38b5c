#pragma once
// How much the VM controller may write, so that one object can neither make it write without end
// nor starve the others (docs/security.md). Every action is about one VM/VMI name (its key:
// "namespace/name"; a launcher pod counts for its VMI):
// - after a failed write, nothing about that key is written for a backoff that doubles with each
//   failure in a row (1 s up to 5 min, KubeVirt's start-failure ceiling), and a success resets it;
//   the rest of a pass's actions for the key wait too (a pod that could not be created is not
//   reported as scheduled, which would fail and recreate the VMI at once);
// - each key has its own budget, 20 writes at once and then one every 2 s (30 a minute): a VM
//   whose VMI fails and is recreated again and again, each write succeeding, is slowed to that;
// - all keys together: 200 writes at once, then 100 a second.
// A write that is not admitted is skipped: the planner plans it again on a later pass. Pure: the
// time is given. Thread-safety: none (the executor's thread).
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace vmgate::controller {

class WriteThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  struct Limits {
    std::chrono::milliseconds initial_backoff{1000};
    std::chrono::milliseconds max_backoff{300000};
    double key_burst = 20;
    double key_per_second = 0.5;
    double global_burst = 200;
    double global_per_second = 100;
  };

  enum class Verdict {
    write,
    backing_off,  // the key failed recently
    key_budget,   // the key wrote too much lately
    global_budget,
  };

  WriteThrottle() : WriteThrottle(Limits{}) {}
  explicit WriteThrottle(Limits limits);

  /// May a write about `key` go at `now`? Counts it against both budgets when it may.
  Verdict admit(const std::string& key, Clock::time_point now);
  /// The write went through: the key's backoff ends.
  void succeeded(const std::string& key);
  /// The write failed: the key backs off, for twice as long as after its previous failure.
  void failed(const std::string& key, Clock::time_point now);
  /// When the key may write again after its last failure (the epoch when it may now).
  [[nodiscard]] Clock::time_point retry_after(const std::string& key) const;
  /// Keys remembered (a key idle for 10 minutes with no backoff is forgotten).
  [[nodiscard]] std::size_t keys() const { return keys_.size(); }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled{};
  };
  struct KeyState {
    Bucket bucket;
    unsigned failures = 0;
    Clock::time_point retry_after{};
    Clock::time_point last_seen{};
  };

  static bool take(Bucket& bucket, double burst, double per_second, Clock::time_point now);
  void forget_idle(Clock::time_point now);

  Limits limits_;
  Bucket global_;
  std::unordered_map<std::string, KeyState> keys_;
  Clock::time_point last_sweep_{};
};

}  // namespace vmgate::controller
