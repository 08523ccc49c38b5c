#include "vmgate/controller/controller_throttle.hpp"

#include <algorithm>

namespace vmgate::controller {

namespace {

constexpr std::chrono::minutes idle_key{10};

}  // namespace

WriteThrottle::WriteThrottle(Limits limits) : limits_(limits) {
  global_.tokens = limits_.global_burst;
}

bool WriteThrottle::take(Bucket& bucket, double burst, double per_second, Clock::time_point now) {
  if (bucket.refilled != Clock::time_point{} && now > bucket.refilled) {
    const double seconds = std::chrono::duration<double>(now - bucket.refilled).count();
    bucket.tokens = std::min(burst, bucket.tokens + seconds * per_second);
  }
  bucket.refilled = std::max(bucket.refilled, now);
  if (bucket.tokens < 1) {
    return false;
  }
  bucket.tokens -= 1;
  return true;
}

void WriteThrottle::forget_idle(Clock::time_point now) {
  if (now - last_sweep_ < idle_key) {
    return;
  }
  last_sweep_ = now;
  std::erase_if(keys_, [now](const auto& entry) {
    return now - entry.second.last_seen > idle_key && now >= entry.second.retry_after;
  });
}

WriteThrottle::Verdict WriteThrottle::admit(const std::string& key, Clock::time_point now) {
  forget_idle(now);
  auto [found, added] = keys_.try_emplace(key);
  KeyState& state = found->second;
  if (added) {
    state.bucket.tokens = limits_.key_burst;
    state.bucket.refilled = now;
  }
  state.last_seen = now;
  if (now < state.retry_after) {
    return Verdict::backing_off;
  }
  // The key's budget first: a key out of it does not spend the shared one.
  Bucket trial = state.bucket;
  if (!take(trial, limits_.key_burst, limits_.key_per_second, now)) {
    state.bucket = trial;
    return Verdict::key_budget;
  }
  if (!take(global_, limits_.global_burst, limits_.global_per_second, now)) {
    return Verdict::global_budget;
  }
  state.bucket = trial;
  return Verdict::write;
}

void WriteThrottle::succeeded(const std::string& key) {
  if (const auto found = keys_.find(key); found != keys_.end()) {
    found->second.failures = 0;
    found->second.retry_after = Clock::time_point{};
  }
}

void WriteThrottle::failed(const std::string& key, Clock::time_point now) {
  KeyState& state = keys_[key];
  if (state.bucket.refilled == Clock::time_point{}) {
    state.bucket.tokens = limits_.key_burst;
    state.bucket.refilled = now;
  }
  state.last_seen = now;
  auto backoff = limits_.initial_backoff;
  for (unsigned i = 0; i < state.failures && backoff < limits_.max_backoff; ++i) {
    backoff *= 2;
  }
  state.failures = std::min(state.failures + 1, 64U);
  state.retry_after = now + std::min(backoff, limits_.max_backoff);
}

WriteThrottle::Clock::time_point WriteThrottle::retry_after(const std::string& key) const {
  const auto found = keys_.find(key);
  return found == keys_.end() ? Clock::time_point{} : found->second.retry_after;
}

}  // namespace vmgate::controller
