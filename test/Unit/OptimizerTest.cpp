// Optimizer steps against values computed by hand.
#include "runtime/engine/Optimizers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

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
  Sgd(0.1, /*clipNorm=*/0, WeightDecay{0.25}).step(p); // g + 0.25 * w = 1
  EXPECT_FLOAT_EQ(p.at(0).value[0], 1.9f);
  ParamStore q = oneParam(2.0f, 0.5f);
  Adagrad(0.1, 0.1, /*clipNorm=*/0, WeightDecay{0.25}).step(q); // acc = 0.1 + 1
  EXPECT_NEAR(q.at(0).value[0], 2.0 - 0.1 / std::sqrt(1.1), 1e-6);
}

TEST(Optimizer, WeightDecayFollowsClippingAndSparseRows) {
  ParamStore p;
  p.add("E", {2, 2}, {InitKind::Ones}, /*sparseRows=*/true);
  p.initialize(0);
  p.at(0).touchRow(1);
  std::ranges::copy(std::vector<float>{0.0f, 0.0f, 30.0f, 40.0f},
                    p.at(0).grad.begin()); // norm 50, clipped to 5
  Sgd(1.0, /*clipNorm=*/5.0, WeightDecay{0.5}).step(p);
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
  EXPECT_EQ(names, (std::vector<std::string>{"sgd", "adagrad", "adam", "adamw", "rmsprop"}));
  EXPECT_EQ(findOptimizer("adamax"), nullptr);
  EXPECT_EQ(makeOptimizer("adamax", 0.1), nullptr);
  EXPECT_DOUBLE_EQ(findOptimizer("adagrad")->defaultLearningRate, 0.05);
  EXPECT_DOUBLE_EQ(findOptimizer("adamw")->defaultWeightDecay, 0.01);
  EXPECT_DOUBLE_EQ(findOptimizer("adam")->defaultWeightDecay, 0.0);
}

/// A dense and a sparse parameter, the second frozen or with a learning-rate
/// scale, every gradient 1 (the sparse table's row 1 touched).
ParamStore twoParams(ParamTraining second) {
  ParamStore p;
  p.add("a", {3}, {InitKind::Constant, 1.0});
  p.add("E", {2, 3}, {InitKind::Uniform, -1, 1}, /*sparseRows=*/true, second);
  p.initialize(4);
  std::ranges::fill(p.at(0).grad, 1.0f);
  p.at(1).touchRow(1);
  std::fill_n(p.at(1).grad.begin() + 3, 3, 1.0f);
  return p;
}

TEST(Optimizer, FrozenParametersKeepTheirValuesToTheBit) {
  for (const OptimizerKind &kind : optimizerKinds()) {
    SCOPED_TRACE(std::string(kind.name));
    ParamStore p = twoParams({/*trainable=*/false, 1.0f});
    ParamStore dense;
    dense.add("W", {2}, {InitKind::Constant, 0.5}, false, {false, 1.0f});
    dense.initialize(0);
    std::ranges::fill(dense.at(0).grad, 3.0f);
    std::vector<float> before = p.at(1).value;
    auto optimizer = kind.make(0.5, /*clipNorm=*/1.0, /*weightDecay=*/0.1);
    for (int step = 0; step < 3; ++step) {
      optimizer->step(p);
      optimizer->step(dense);
    }
    EXPECT_EQ(std::memcmp(p.at(1).value.data(), before.data(), before.size() * sizeof(float)), 0);
    EXPECT_EQ(dense.at(0).value, std::vector<float>(2, 0.5f));
    EXPECT_TRUE(std::ranges::all_of(p.at(1).grad, [](float g) { return g == 0.0f; }))
        << "a frozen parameter's gradients are zeroed by the step";
    EXPECT_TRUE(p.at(1).touchedRows.empty());
    EXPECT_NE(p.at(0).value[0], 1.0f) << "the trainable parameter moves";
  }
}

TEST(Optimizer, FrozenGradientsDoNotCountTowardsTheClippingNorm) {
  ParamStore p;
  p.add("a", {1}, {InitKind::Zeros});
  p.add("frozen", {1}, {InitKind::Zeros}, false, {false, 1.0f});
  p.initialize(0);
  p.at(0).grad[0] = 3.0f;
  p.at(1).grad[0] = 4.0f; // would make the norm 5
  Sgd(1.0, /*clipNorm=*/3.0).step(p);
  EXPECT_FLOAT_EQ(p.at(0).value[0], -3.0f) << "norm 3: not clipped";
}

TEST(Optimizer, LearningRateScaleMultipliesTheRateOfItsParameter) {
  ParamStore p = twoParams({true, 0.25f});
  float row = p.at(1).value[3];
  Sgd(0.2).step(p);
  EXPECT_FLOAT_EQ(p.at(0).value[0], 1.0f - 0.2f);
  EXPECT_FLOAT_EQ(p.at(1).value[3], row - 0.25f * 0.2f);
}

TEST(Optimizer, SetLearningRateChangesTheNextSteps) {
  ParamStore p = oneParam(1.0f, 1.0f);
  Sgd opt(0.1);
  opt.setLearningRate(0.5);
  opt.step(p);
  EXPECT_FLOAT_EQ(p.at(0).value[0], 0.5f);
  EXPECT_DOUBLE_EQ(opt.learningRate(), 0.5);
}

/// AdamW as PyTorch's torch.optim.AdamW computes it (in double): decay the
/// weights by lr * decay, then the bias-corrected Adam step.
std::vector<double> referenceAdamW(std::vector<double> w,
                                   const std::vector<std::vector<double>> &grads, double lr,
                                   double decay) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<double> m(w.size()), v(w.size());
  for (size_t t = 1; t <= grads.size(); ++t)
    for (size_t k = 0; k < w.size(); ++k) {
      double g = grads[t - 1][k];
      w[k] *= 1 - lr * decay;
      m[k] = b1 * m[k] + (1 - b1) * g;
      v[k] = b2 * v[k] + (1 - b2) * g * g;
      double mHat = m[k] / (1 - std::pow(b1, double(t)));
      double vHat = v[k] / (1 - std::pow(b2, double(t)));
      w[k] -= lr * mHat / (std::sqrt(vHat) + eps);
    }
  return w;
}

TEST(Optimizer, AdamWEqualsTheReferenceAndDiffersFromL2) {
  const std::vector<std::vector<double>> grads = {
      {0.5, -1.0, 0.0}, {0.25, 2.0, -0.5}, {-1.0, 0.1, 0.3}};
  const std::vector<double> start = {1.0, -2.0, 0.5};
  ParamStore p, l2;
  for (ParamStore *store : {&p, &l2}) {
    store->add("w", {3}, {InitKind::Zeros});
    std::ranges::transform(start, store->at(0).value.begin(), [](double x) { return float(x); });
  }
  auto adamw = makeOptimizer("adamw", 0.1, 0, 0.2);
  Adam adamL2(0.1, 0.9, 0.999, 1e-8, 0, WeightDecay{0.2});
  for (const std::vector<double> &g : grads) {
    std::ranges::transform(g, p.at(0).grad.begin(), [](double x) { return float(x); });
    std::ranges::transform(g, l2.at(0).grad.begin(), [](double x) { return float(x); });
    adamw->step(p);
    adamL2.step(l2);
  }
  std::vector<double> expected = referenceAdamW(start, grads, 0.1, 0.2);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(p.at(0).value[k], expected[k], 5e-6) << k; // float against double
    EXPECT_GT(std::abs(l2.at(0).value[k] - expected[k]), 1e-4) << "L2 is another update: " << k;
  }
}

} // namespace
} // namespace foldc::rt
