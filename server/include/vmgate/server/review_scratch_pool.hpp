#pragma once
// The review scratches (webhook::ReviewScratch) of vmgate serve, shared by its connections. A
// review runs from start to end on one thread, so no more scratches are in use at once than the
// server has threads; and the one returned last, whose arena and body copy are the likeliest to
// be in the cache, is lent first. Kept per connection instead, 64 connections spread their
// reviews over 64 arenas of 64 KiB, more than a core's L2 cache holds, and each review started
// on cold memory.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "vmgate/server/admission_review.hpp"

namespace vmgate::serve {

class ReviewScratchPool {
 public:
  /// A scratch body's capacity above this is freed when the scratch comes back: a rare 8 MiB
  /// review does not keep 8 MiB for the server's life.
  static constexpr std::size_t large_body_bytes = std::size_t{64} * 1024;

  /// One scratch, the lease's alone until it ends; then back to the pool.
  class Lease {
   public:
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();

    webhook::ReviewScratch& operator*() const { return *scratch_; }

   private:
    friend class ReviewScratchPool;
    Lease(ReviewScratchPool& pool, std::unique_ptr<webhook::ReviewScratch> scratch)
        : pool_(&pool), scratch_(std::move(scratch)) {}

    ReviewScratchPool* pool_;
    std::unique_ptr<webhook::ReviewScratch> scratch_;
  };

  ReviewScratchPool() = default;
  ReviewScratchPool(const ReviewScratchPool&) = delete;
  ReviewScratchPool& operator=(const ReviewScratchPool&) = delete;

  /// The scratch returned last, or a new one when every scratch is lent. Thread-safe.
  [[nodiscard]] Lease lend();
  /// How many scratches wait in the pool. Thread-safe.
  [[nodiscard]] std::size_t idle() const;

 private:
  void give_back(std::unique_ptr<webhook::ReviewScratch> scratch) noexcept;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<webhook::ReviewScratch>> idle_;
  std::size_t created_ = 0;  // every scratch lent or idle; idle_ has room for all of them
};

}  // namespace vmgate::serve
