// Initialisers: reproducible from a seed, within their ranges.
#include "runtime/engine/Params.h"

#include <gtest/gtest.h>

#include <cmath>

namespace foldc::rt {
namespace {

TEST(Params, InitialisationIsReproducibleAndPerName) {
  ParamStore a, b;
  a.add("W", {4, 5}, {InitKind::Glorot});
  b.add("extra", {3}, {InitKind::Normal, 1.0});
  b.add("W", {4, 5}, {InitKind::Glorot});
  a.initialize(42);
  b.initialize(42);
  EXPECT_EQ(a.at(0).value, b.at(1).value) << "another param does not shift W's draws";
  ParamStore c;
  c.add("W", {4, 5}, {InitKind::Glorot});
  c.initialize(43);
  EXPECT_NE(a.at(0).value, c.at(0).value);
}

TEST(Params, InitialiserRanges) {
  ParamStore p;
  p.add("g", {30, 20}, {InitKind::Glorot});
  p.add("u", {1000}, {InitKind::Uniform, -0.05, 0.05});
  p.add("z", {3}, {InitKind::Zeros});
  p.add("o", {3}, {InitKind::Ones});
  p.add("c", {3}, {InitKind::Constant, 0.5});
  p.add("n", {10000}, {InitKind::Normal, 0.1});
  p.initialize(1);
  float limit = std::sqrt(6.0f / 50.0f);
  for (float v : p.at(0).value)
    EXPECT_LE(std::abs(v), limit);
  for (float v : p.at(1).value) {
    EXPECT_GE(v, -0.05f);
    EXPECT_LE(v, 0.05f);
  }
  EXPECT_EQ(p.at(2).value, std::vector<float>(3, 0.0f));
  EXPECT_EQ(p.at(3).value, std::vector<float>(3, 1.0f));
  EXPECT_EQ(p.at(4).value, std::vector<float>(3, 0.5f));
  double sumSquares = 0;
  for (float v : p.at(5).value)
    sumSquares += double(v) * v;
  EXPECT_NEAR(std::sqrt(sumSquares / 10000), 0.1, 0.005);
}

TEST(Params, DenseGradientsAreOneBlockInDeclarationOrder) {
  ParamStore p;
  p.add("W", {2, 3}, {});
  p.add("E", {10, 4}, {}, /*sparseRows=*/true);
  p.at(0).grad[5] = 7.0f; // kept when the block grows and moves
  const float *table = p.at(1).grad.data();
  p.add("b", {3}, {});
  std::span<float> dense = p.denseGradients();
  ASSERT_EQ(dense.size(), 16u + 16u) << "W and b, each on whole 64-byte lines; not E's rows";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dense.data()) % 64, 0u);
  EXPECT_EQ(p.at(0).grad.data(), dense.data());
  EXPECT_EQ(p.at(2).grad.data(), dense.data() + 16);
  EXPECT_EQ(dense[5], 7.0f);
  EXPECT_EQ(p.at(1).grad.size(), 40u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p.at(1).grad.data()) % 64, 0u);
  for (int k = 0; k < 8; ++k) // the dense block grows (and moves) a few times
    p.add("V" + std::to_string(k), {100}, {});
  EXPECT_EQ(p.at(1).grad.data(), table) << "a table's gradient is never moved or copied";
  EXPECT_EQ(p.at(0).grad[5], 7.0f);
  EXPECT_EQ(p.at(10).grad.data(), p.denseGradients().data() + 16 + 16 + 7 * 112);
  ParamStore moved = std::move(p);
  EXPECT_EQ(moved.at(0).grad.data(), moved.denseGradients().data())
      << "moving the store keeps its parameters' gradients in its block";
}

TEST(Params, DuplicateNamesAreRejected) {
  ParamStore p;
  p.add("W", {2}, {});
  EXPECT_THROW(p.add("W", {3}, {}), std::invalid_argument);
  EXPECT_EQ(p.find("W"), 0);
  EXPECT_EQ(p.find("V"), -1);
}

} // namespace
} // namespace foldc::rt
