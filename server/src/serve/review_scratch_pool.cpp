#include "vmgate/server/review_scratch_pool.hpp"

#include <string>
#include <utility>

namespace vmgate::serve {

ReviewScratchPool::Lease::~Lease() {
  if (scratch_) {
    pool_->give_back(std::move(scratch_));
  }
}

ReviewScratchPool::Lease ReviewScratchPool::lend() {
  {
    const std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<webhook::ReviewScratch> scratch = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(scratch));
    }
    // Room for it to come back, made now: give_back runs in a destructor and must not allocate.
    idle_.reserve(created_ + 1);
    ++created_;
  }
  return Lease(*this, std::make_unique<webhook::ReviewScratch>());
}

std::size_t ReviewScratchPool::idle() const {
  const std::lock_guard lock(mutex_);
  return idle_.size();
}

void ReviewScratchPool::give_back(std::unique_ptr<webhook::ReviewScratch> scratch) noexcept {
  if (scratch->body().capacity() > large_body_bytes) {
    std::string().swap(scratch->body());
  }
  const std::lock_guard lock(mutex_);
  idle_.push_back(std::move(scratch));  // within the capacity lend() reserved
}

}  // namespace vmgate::serve
