// Dynamic batching: batches up to the largest size, bounded waits, one bad
// example failing alone, a full queue refusing, closing draining.
#include "runtime/driver/BatchQueue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>

namespace foldc::rt {
namespace {

using namespace std::chrono_literals;

BatchQueue::Item number(int n) { return std::make_shared<const int>(n); }
int valueOf(const BatchQueue::Item &item) { return *static_cast<const int *>(item.get()); }

/// Doubles every number; a negative one makes the whole batch throw.
std::vector<nlohmann::json> doubled(std::span<const BatchQueue::Item> items) {
  std::vector<nlohmann::json> out;
  for (const BatchQueue::Item &item : items) {
    if (valueOf(item) < 0)
      throw std::runtime_error("negative: " + std::to_string(valueOf(item)));
    out.push_back(2 * valueOf(item));
  }
  return out;
}

TEST(BatchQueue, ConcurrentRequestsShareBatchesOfAtMostTheLargestSize) {
  std::mutex mutex;
  std::vector<size_t> sizes;
  BatchQueue queue(doubled, {4, 200ms, 100}, [&](size_t n) {
    std::lock_guard lock(mutex);
    sizes.push_back(n);
  });
  std::vector<std::future<std::vector<Outcome>>> pending;
  for (int i = 0; i < 10; ++i)
    pending.push_back(*queue.submit({number(i)}));
  for (int i = 0; i < 10; ++i) {
    std::vector<Outcome> o = pending[size_t(i)].get();
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(*o[0].output, 2 * i);
  }
  std::lock_guard lock(mutex);
  EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), size_t(0)), 10u);
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), 4u);
  EXPECT_EQ(sizes.front(), 4u) << "ten queued within the wait fill the first batch";
}

TEST(BatchQueue, ALoneRequestWaitsAtMostTheLongestWait) {
  BatchQueue queue(doubled, {32, 20ms, 100});
  auto begin = std::chrono::steady_clock::now();
  std::vector<Outcome> o = queue.submit({number(21)})->get();
  EXPECT_EQ(*o[0].output, 42);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 5s) << "answered, not stuck";
}

TEST(BatchQueue, ARequestOfSeveralExamplesIsAnsweredInOrder) {
  BatchQueue queue(doubled, {2, 1ms, 100});
  std::vector<Outcome> o =
      queue.submit({number(1), number(2), number(3), number(4), number(5)})->get();
  ASSERT_EQ(o.size(), 5u);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(*o[size_t(i)].output, 2 * (i + 1));
}

TEST(BatchQueue, ABadExampleFailsAloneAndTheOthersGetTheirAnswers) {
  std::atomic<int> batches = 0;
  BatchQueue queue(doubled, {8, 200ms, 100}, [&](size_t) { ++batches; });
  auto good = queue.submit({number(1)});
  auto bad = queue.submit({number(-7)});
  auto other = queue.submit({number(3), number(4)});
  EXPECT_EQ(*good->get()[0].output, 2);
  std::vector<Outcome> failed = bad->get();
  EXPECT_FALSE(failed[0].output);
  EXPECT_EQ(failed[0].error, "negative: -7");
  std::vector<Outcome> o = other->get();
  EXPECT_EQ(*o[0].output, 6);
  EXPECT_EQ(*o[1].output, 8);
  EXPECT_EQ(batches.load(), 1) << "all four were one batch";
}

TEST(BatchQueue, AFullQueueRefusesAndAClosedOneToo) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  BatchQueue queue(
      [&](std::span<const BatchQueue::Item> items) {
        released.wait(); // holds the batching thread until the test lets go
        return doubled(items);
      },
      {1, 0ms, 2});
  auto first = queue.submit({number(1)}); // taken by the batching thread, which then waits
  std::this_thread::sleep_for(50ms);
  auto second = queue.submit({number(2), number(3)});
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(queue.submit({number(4)})) << "two waiting already";
  release.set_value();
  EXPECT_EQ(*first->get()[0].output, 2);
  EXPECT_EQ(*second->get()[1].output, 6);
  queue.close();
  EXPECT_FALSE(queue.submit({number(5)}));
}

TEST(BatchQueue, DoneIsCalledOnceOnTheBatchingThreadAndNeverWhenRefused) {
  BatchQueue queue(doubled, {4, 1ms, 2});
  std::promise<std::pair<std::vector<Outcome>, std::thread::id>> answered;
  std::atomic<int> calls = 0;
  ASSERT_TRUE(queue.submit({number(3), number(4)}, [&](std::vector<Outcome> outcomes) {
    ++calls;
    answered.set_value({std::move(outcomes), std::this_thread::get_id()});
  }));
  auto [outcomes, thread] = answered.get_future().get();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(*outcomes[0].output, 6);
  EXPECT_EQ(*outcomes[1].output, 8);
  EXPECT_NE(thread, std::this_thread::get_id()) << "the serving threads never wait on a batch";
  bool refusedCalled = false;
  EXPECT_FALSE(queue.submit({number(1), number(2), number(3)}, [&](std::vector<Outcome>) {
    refusedCalled = true;
  })) << "three examples never fit a queue of two";
  queue.close();
  EXPECT_FALSE(refusedCalled);
  EXPECT_EQ(calls.load(), 1);
}

TEST(BatchQueue, ClosingStillRunsWhatIsQueued) {
  std::optional<std::future<std::vector<Outcome>>> pending;
  {
    BatchQueue queue(doubled, {4, 1s, 100});
    pending = queue.submit({number(5)});
  } // the destructor closes: the waiting batch runs at once
  EXPECT_EQ(*pending->get()[0].output, 10);
}

} // namespace
} // namespace foldc::rt
