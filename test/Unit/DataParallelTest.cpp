// The gradient exchange of data-parallel training, with two ranks played by
// two threads of this process (their collectives through shared memory).
#include "runtime/DataParallel.h"

#include <gtest/gtest.h>

#include <barrier>
#include <functional>
#include <thread>

namespace foldc::rt {
namespace {

/// What two ThreadRanks share: a barrier and each rank's buffer of the
/// collective in progress.
struct Meeting {
  std::barrier<> all{2};
  const void *buffers[2] = {nullptr, nullptr};
  size_t sizes[2] = {0, 0};
};

/// A Communicator for rank `rank` of 2, meeting the other at `meeting`.
class ThreadRank final : public Communicator {
public:
  ThreadRank(Meeting &meeting, int rank) : m_(meeting), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  void sum(std::span<float> values) override { sumOf(values); }
  void sum(std::span<double> values) override { sumOf(values); }
  std::vector<int32_t> gather(std::span<const int32_t> mine) override {
    std::vector<int32_t> all;
    exchange(mine, [&](int r) {
      auto *theirs = static_cast<const int32_t *>(m_.buffers[r]);
      all.insert(all.end(), theirs, theirs + m_.sizes[r]);
    });
    return all;
  }
  void broadcast(std::span<float> values) override {
    std::vector<float> root;
    exchange(std::span<const float>(values), [&](int r) {
      if (r == 0)
        root.assign(static_cast<const float *>(m_.buffers[0]),
                    static_cast<const float *>(m_.buffers[0]) + m_.sizes[0]);
    });
    std::copy(root.begin(), root.end(), values.begin());
  }
  void barrier() override { m_.all.arrive_and_wait(); }
  [[noreturn]] void abort(int) override { std::abort(); }

private:
  /// Publishes `mine`, lets `read` see each rank's buffer in rank order once
  /// both are published, and returns when both have read.
  template <class T> void exchange(std::span<const T> mine, const std::function<void(int)> &read) {
    m_.buffers[rank_] = mine.data();
    m_.sizes[rank_] = mine.size();
    m_.all.arrive_and_wait();
    for (int r = 0; r < 2; ++r)
      read(r);
    m_.all.arrive_and_wait();
  }
  template <class T> void sumOf(std::span<T> values) {
    std::vector<T> total(values.size(), T(0));
    exchange(std::span<const T>(values), [&](int r) {
      for (size_t k = 0; k < values.size(); ++k)
        total[k] += static_cast<const T *>(m_.buffers[r])[k];
    });
    std::copy(total.begin(), total.end(), values.begin());
  }

  Meeting &m_;
  int rank_;
};

/// A dense 2x2 weight and a 4x2 embedding whose rows update when used.
ParamStore model() {
  ParamStore p;
  p.add("W", {2, 2}, {InitKind::Constant, 1.0});
  p.add("E", {4, 2}, {InitKind::Constant, 0.5}, true);
  p.initialize(0);
  return p;
}

/// Sets embedding row `row` of `p`'s gradient to (v, v) and marks it touched.
void touch(ParamStore &p, int32_t row, float v) {
  p.at(1).touchRow(row);
  p.at(1).grad[size_t(row) * 2] = p.at(1).grad[size_t(row) * 2 + 1] = v;
}

/// Runs `work(rank, comm)` on two threads, as two ranks.
void onTwoRanks(const std::function<void(int, Communicator &)> &work) {
  Meeting meeting;
  std::thread other([&] {
    ThreadRank comm(meeting, 1);
    work(1, comm);
  });
  ThreadRank comm(meeting, 0);
  work(0, comm);
  other.join();
}

TEST(GradientExchange, SumsDenseGradientsWeightedByShare) {
  ParamStore stores[2] = {model(), model()};
  stores[0].at(0).grad = {1, 2, 3, 4};
  stores[1].at(0).grad = {10, 20, 30, 40};
  onTwoRanks([&](int rank, Communicator &comm) {
    GradientExchange exchange;
    // Rank 0 ran 3 examples of a batch of 4, rank 1 one.
    size_t floats = exchange.sum(stores[rank], rank == 0 ? 0.75f : 0.25f, comm);
    EXPECT_EQ(floats, 4u) << "no embedding row was touched";
  });
  for (const ParamStore &p : stores)
    EXPECT_EQ(p.at(0).grad, (std::vector<float>{3.25f, 6.5f, 9.75f, 13.0f}));
}

TEST(GradientExchange, EmbeddingRowsAreTheUnionInRankOrder) {
  ParamStore stores[2] = {model(), model()};
  touch(stores[0], 2, 1.0f);
  touch(stores[0], 0, 2.0f);
  touch(stores[1], 1, 4.0f);
  touch(stores[1], 2, 8.0f);
  onTwoRanks([&](int rank, Communicator &comm) {
    GradientExchange exchange;
    EXPECT_EQ(exchange.sum(stores[rank], 0.5f, comm), 4u + 3u * 2u);
  });
  for (const ParamStore &p : stores) {
    // The same rows in the same order on both ranks: the optimizer updates alike.
    EXPECT_EQ(p.at(1).touchedRows, (std::vector<int32_t>{2, 0, 1}));
    EXPECT_EQ(p.at(1).grad, (std::vector<float>{1, 1, 2, 2, 4.5f, 4.5f, 0, 0}))
        << "row 3, touched by no rank, stays zero";
  }
}

TEST(DataParallel, BroadcastGivesRankZerosParameters) {
  ParamStore stores[2] = {model(), model()};
  stores[0].at(0).value[3] = 7.0f;
  stores[1].at(1).value[0] = -1.0f;
  bool agreedBefore[2], agreedAfter[2];
  onTwoRanks([&](int rank, Communicator &comm) {
    agreedBefore[rank] = paramsAgree(stores[rank], comm);
    broadcastParams(stores[rank], comm);
    agreedAfter[rank] = paramsAgree(stores[rank], comm);
  });
  EXPECT_FALSE(agreedBefore[0] || agreedBefore[1]);
  EXPECT_TRUE(agreedAfter[0] && agreedAfter[1]);
  EXPECT_EQ(stores[1].at(0).value[3], 7.0f);
  EXPECT_EQ(stores[1].at(1).value[0], 0.5f);
}

} // namespace
} // namespace foldc::rt
