#include "vmgate/server/review_scratch_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace vmgate::serve {
namespace {

TEST(ReviewScratchPool, LendsTheScratchReturnedLastFirst) {
  ReviewScratchPool pool;
  const webhook::ReviewScratch* first = nullptr;
  const webhook::ReviewScratch* second = nullptr;
  {
    const ReviewScratchPool::Lease a = pool.lend();
    const ReviewScratchPool::Lease b = pool.lend();
    first = &*a;
    second = &*b;
    EXPECT_NE(first, second);  // two reviews at once never share one
    EXPECT_EQ(pool.idle(), 0U);
  }  // b returns, then a
  EXPECT_EQ(pool.idle(), 2U);
  const ReviewScratchPool::Lease again = pool.lend();
  EXPECT_EQ(&*again, first);
  EXPECT_EQ(pool.idle(), 1U);
}

TEST(ReviewScratchPool, KeepsWhatTheLastReviewWrote) {
  ReviewScratchPool pool;
  {
    const ReviewScratchPool::Lease lease = pool.lend();
    (*lease).body().assign(3000, 'x');
  }
  const ReviewScratchPool::Lease lease = pool.lend();
  EXPECT_GE((*lease).body().capacity(), 3000U);  // a usual body's room is kept, not reallocated
}

TEST(ReviewScratchPool, FreesALargeBodyWhenItComesBack) {
  ReviewScratchPool pool;
  {
    const ReviewScratchPool::Lease lease = pool.lend();
    (*lease).body().assign(ReviewScratchPool::large_body_bytes + 1, 'x');
  }
  const ReviewScratchPool::Lease lease = pool.lend();
  EXPECT_LE((*lease).body().capacity(), ReviewScratchPool::large_body_bytes);
}

TEST(ReviewScratchPool, AMovedLeaseReturnsItsScratchOnce) {
  ReviewScratchPool pool;
  {
    ReviewScratchPool::Lease moved_from = pool.lend();
    const ReviewScratchPool::Lease holder = std::move(moved_from);
    EXPECT_EQ(pool.idle(), 0U);
  }
  EXPECT_EQ(pool.idle(), 1U);
}

TEST(ReviewScratchPool, ThreadsNeverShareAScratch) {
  ReviewScratchPool pool;
  constexpr int threads = 4;
  constexpr int rounds = 2000;
  std::atomic<int> shared{0};
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&pool, &shared, t] {
      const std::string mine = "thread-" + std::to_string(t);
      for (int round = 0; round < rounds; ++round) {
        const ReviewScratchPool::Lease lease = pool.lend();
        (*lease).body() = mine;
        std::this_thread::yield();
        if ((*lease).body() != mine) {
          shared.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& worker : workers) {
    worker.join();
  }
  EXPECT_EQ(shared.load(), 0);
  EXPECT_GE(pool.idle(), 1U);
  EXPECT_LE(pool.idle(), static_cast<std::size_t>(threads));  // no more than were in use at once
}

}  // namespace
}  // namespace vmgate::serve
