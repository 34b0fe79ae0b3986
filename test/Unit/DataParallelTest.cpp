// The gradient exchange of data-parallel training, with ranks played by
// threads of this process (ThreadTeam), and the team's own collectives.
#include "runtime/parallel/DataParallel.h"
#include "runtime/parallel/ThreadTeam.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace foldc::rt {
namespace {

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

std::vector<float> gradientOf(const Param &p) { return {p.grad.begin(), p.grad.end()}; }

/// Runs `work(rank, comm)` on two threads, as two ranks.
void onTwoRanks(const std::function<void(int, Communicator &)> &work) {
  ThreadTeam team(2);
  team.run(1 << 20, [&](Communicator &comm) {
    work(comm.rank(), comm);
    return 0;
  });
}

TEST(GradientExchange, SumsDenseGradients) {
  ParamStore stores[2] = {model(), model()};
  std::ranges::copy(std::vector<float>{1, 2, 3, 4}, stores[0].at(0).grad.begin());
  std::ranges::copy(std::vector<float>{10, 20, 30, 40}, stores[1].at(0).grad.begin());
  onTwoRanks([&](int rank, Communicator &comm) {
    GradientExchange exchange;
    size_t floats = exchange.sum(stores[rank], comm);
    EXPECT_EQ(floats, 16u) << "W's 4 floats on a whole 64-byte line; no embedding row touched";
  });
  for (const ParamStore &p : stores)
    EXPECT_EQ(gradientOf(p.at(0)), (std::vector<float>{11, 22, 33, 44}));
}

TEST(GradientExchange, EmbeddingRowsAreTheUnionInRankOrder) {
  ParamStore stores[2] = {model(), model()};
  touch(stores[0], 2, 0.5f);
  touch(stores[0], 0, 1.0f);
  touch(stores[1], 1, 2.0f);
  touch(stores[1], 2, 4.0f);
  onTwoRanks([&](int rank, Communicator &comm) {
    GradientExchange exchange;
    EXPECT_EQ(exchange.sum(stores[rank], comm), 16u + 3u * 2u);
  });
  for (const ParamStore &p : stores) {
    // The same rows in the same order on both ranks: the optimizer updates alike.
    EXPECT_EQ(p.at(1).touchedRows, (std::vector<int32_t>{2, 0, 1}));
    EXPECT_EQ(gradientOf(p.at(1)), (std::vector<float>{1, 1, 2, 2, 4.5f, 4.5f, 0, 0}))
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

TEST(ThreadTeam, CollectivesSeeEveryMemberInRankOrder) {
  ThreadTeam team(3);
  std::vector<int32_t> gathered[3];
  std::vector<double> sums[3];
  std::vector<float> broadcast[3];
  int result = team.run(1 << 20, [&](Communicator &comm) {
    int r = comm.rank();
    EXPECT_EQ(comm.size(), 3);
    std::vector<int32_t> mine(size_t(r), int32_t(10 * r)); // rank r gives r numbers
    gathered[r] = comm.gather(mine);
    sums[r] = {double(r), 1.0};
    comm.sum(sums[r]);
    broadcast[r] = {float(r), float(-r)};
    comm.broadcast(broadcast[r]);
    comm.barrier();
    return 40 + r;
  });
  EXPECT_EQ(result, 40) << "member 0's result";
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(gathered[r], (std::vector<int32_t>{10, 20, 20}));
    EXPECT_EQ(sums[r], (std::vector<double>{3.0, 3.0}));
    EXPECT_EQ(broadcast[r], (std::vector<float>{0.0f, 0.0f}));
  }
}

TEST(ThreadTeam, AMembersErrorEndsTheOthersWaitAndIsRethrown) {
  ThreadTeam team(2);
  int collectivesAfter = 0;
  try {
    team.run(1 << 20, [&](Communicator &comm) {
      if (comm.rank() == 1)
        throw std::runtime_error("bad example in rank 1's share");
      std::vector<float> values{1.0f};
      comm.sum(values); // would wait forever for rank 1
      ++collectivesAfter;
      return 0;
    });
    FAIL() << "the error was not rethrown";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "bad example in rank 1's share");
  }
  EXPECT_EQ(collectivesAfter, 0);
  // The team runs again after a failure.
  EXPECT_EQ(team.run(1 << 20,
                     [](Communicator &comm) {
                       comm.barrier();
                       return 7;
                     }),
            7);
}

} // namespace
} // namespace foldc::rt
