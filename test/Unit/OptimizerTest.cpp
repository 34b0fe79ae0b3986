// Optimizer steps against values computed by hand.
#include "runtime/engine/Optimizers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace foldc::rt {
namespace {

ParamStore oneParam(float value, float grad) {
  ParamStore p;
  p.add("w", {1}, {InitKind::Constant, value});
  p.initialize(0);
  p.at(0).grad[0] = grad;
  return p;
}

TEST(Optimizer, SgdIsPlainGradientStep) {
  ParamStore p = oneParam(1.0f, 0.5f);
  Sgd(0.1).step(p);
  EXPECT_FLOAT_EQ(p.at(0).value[0], 0.95f);
  EXPECT_EQ(p.at(0).grad[0], 0.0f) << "a step zeroes the gradients";
}

TEST(Optimizer, AdagradAccumulatesSquares) {
  ParamStore p = oneParam(1.0f, 0.5f);
  Adagrad opt(0.1);
  opt.step(p); // acc = 0.1 + 0.25
  EXPECT_NEAR(p.at(0).value[0], 1.0 - 0.1 * 0.5 / std::sqrt(0.35), 1e-6);
  p.at(0).grad[0] = -1.0f; // acc = 1.35
  float before = p.at(0).value[0];
  opt.step(p);
  EXPECT_NEAR(p.at(0).value[0], before + 0.1 / std::sqrt(1.35), 1e-6);
}

TEST(Optimizer, AdamBiasCorrectedSteps) {
  ParamStore p = oneParam(1.0f, 0.5f);
  Adam opt(0.01);
  opt.step(p); // m = 0.05, v = 0.00025; mhat = 0.5, vhat = 0.25: step lr * 0.5 / 0.5
  EXPECT_NEAR(p.at(0).value[0], 1.0 - 0.01 * 0.5 / (0.5 + 1e-8), 1e-7);
  p.at(0).grad[0] = 0.25f;
  float before = p.at(0).value[0];
  opt.step(p);
  double m = 0.9 * 0.05 + 0.1 * 0.25, v = 0.999 * 0.00025 + 0.001 * 0.0625;
  double mHat = m / (1 - 0.81), vHat = v / (1 - 0.999 * 0.999);
  EXPECT_NEAR(p.at(0).value[0], before - 0.01 * mHat / (std::sqrt(vHat) + 1e-8), 1e-7);
}

TEST(Optimizer, GlobalNormClipping) {
  ParamStore p;
  p.add("a", {2}, {InitKind::Zeros});
  p.initialize(0);
  std::ranges::copy(std::vector<float>{3.0f, 4.0f}, p.at(0).grad.begin()); // norm 5
  Sgd(1.0, /*clipNorm=*/1.0).step(p);
  EXPECT_FLOAT_EQ(p.at(0).value[0], -0.6f);
  EXPECT_FLOAT_EQ(p.at(0).value[1], -0.8f);
}

TEST(Optimizer, SparseRowsUpdateOnlyTouchedRows) {
  ParamStore p;
  p.add("E", {3, 2}, {InitKind::Ones}, /*sparseRows=*/true);
  p.initialize(0);
  Adam opt(0.1);
  p.at(0).touchRow(1);
  p.at(0).grad[2] = 1.0f;
  opt.step(p);
  EXPECT_FLOAT_EQ(p.at(0).value[0], 1.0f);
  EXPECT_LT(p.at(0).value[2], 1.0f);
  EXPECT_FLOAT_EQ(p.at(0).value[3], 1.0f) << "row 1's other element had zero gradient";
  float row1 = p.at(0).value[2];
  p.at(0).touchRow(0);
  p.at(0).grad[0] = 1.0f;
  opt.step(p); // row 1 untouched: lazy Adam leaves it, though its moments are non-zero
  EXPECT_FLOAT_EQ(p.at(0).value[2], row1);
  EXPECT_TRUE(p.at(0).touchedRows.empty());
}

TEST(Optimizer, WeightDecayAddsTheL2Gradient) {
  ParamStore p = oneParam(2.0f, 0.5f);
  Sgd(0.1, /*clipNorm=*/0, /*weightDecay=*/0.25).step(p); // g + 0.25 * w = 1
  EXPECT_FLOAT_EQ(p.at(0).value[0], 1.9f);
  ParamStore q = oneParam(2.0f, 0.5f);
  Adagrad(0.1, 0.1, /*clipNorm=*/0, /*weightDecay=*/0.25).step(q); // acc = 0.1 + 1
  EXPECT_NEAR(q.at(0).value[0], 2.0 - 0.1 / std::sqrt(1.1), 1e-6);
}

TEST(Optimizer, WeightDecayFollowsClippingAndSparseRows) {
  ParamStore p;
  p.add("E", {2, 2}, {InitKind::Ones}, /*sparseRows=*/true);
  p.initialize(0);
  p.at(0).touchRow(1);
  std::ranges::copy(std::vector<float>{0.0f, 0.0f, 30.0f, 40.0f},
                    p.at(0).grad.begin()); // norm 50, clipped to 5
  Sgd(1.0, /*clipNorm=*/5.0, /*weightDecay=*/0.5).step(p);
  EXPECT_FLOAT_EQ(p.at(0).value[0], 1.0f) << "an untouched row is not decayed";
  EXPECT_FLOAT_EQ(p.at(0).value[2], 1.0f - (3.0f + 0.5f));
  EXPECT_FLOAT_EQ(p.at(0).value[3], 1.0f - (4.0f + 0.5f));
}

TEST(Optimizer, RmsPropDividesByTheRunningRootMeanSquare) {
  ParamStore p = oneParam(1.0f, 0.5f);
  RmsProp opt(0.01);
  opt.step(p); // v = 0.01 * 0.25
  double v = 0.01 * 0.25;
  EXPECT_NEAR(p.at(0).value[0], 1.0 - 0.01 * 0.5 / (std::sqrt(v) + 1e-8), 1e-6);
  p.at(0).grad[0] = -0.25f;
  float before = p.at(0).value[0];
  opt.step(p);
  v = 0.99 * v + 0.01 * 0.0625;
  EXPECT_NEAR(p.at(0).value[0], before + 0.01 * 0.25 / (std::sqrt(v) + 1e-8), 1e-6);
}

TEST(Optimizer, TheTableMakesEveryOptimizerByName) {
  std::vector<std::string> names;
  for (const OptimizerKind &kind : optimizerKinds()) {
    names.emplace_back(kind.name);
    EXPECT_NE(makeOptimizer(std::string(kind.name), kind.defaultLearningRate), nullptr);
    EXPECT_EQ(findOptimizer(kind.name), &kind);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"sgd", "adagrad", "adam", "rmsprop"}));
  EXPECT_EQ(findOptimizer("adamw"), nullptr);
  EXPECT_EQ(makeOptimizer("adamw", 0.1), nullptr);
  EXPECT_DOUBLE_EQ(findOptimizer("adagrad")->defaultLearningRate, 0.05);
}

} // namespace
} // namespace foldc::rt
