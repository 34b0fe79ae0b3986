// Test helpers: run one kernel on a random batch directly, and check its
// gradients against central finite differences.
#pragma once

#include "runtime/engine/Kernel.h"
#include "runtime/engine/Params.h"
#include "runtime/model/GradientCheck.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace foldc::rt::testing {

/// One batch of inputs for a kernel, with random values and output weights.
struct KernelHarness {
  const Kernel &kernel;
  ParamStore &params;
  int rows;
  std::vector<std::vector<float>> args, outs, weights;
  std::vector<int32_t> ints;
  std::vector<float> floats;
  std::vector<uint64_t> keys;
  ExecContext ctx;
  std::vector<const float *> argPtrs;
  std::vector<float *> outPtrs;

  KernelHarness(const Kernel &k, ParamStore &p, int n, uint64_t seed, bool training = false)
      : kernel(k), params(p), rows(n) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const Kernel::Signature &sig = k.signature();
    for (int w : sig.argWidths) {
      args.emplace_back(size_t(n * w));
      for (float &v : args.back())
        v = dist(rng);
    }
    for (int w : sig.outWidths) {
      outs.emplace_back(size_t(n * w));
      weights.emplace_back(size_t(n * w));
      for (float &v : weights.back())
        v = dist(rng);
    }
    floats.resize(size_t(n * sig.hostFloats));
    for (float &v : floats)
      v = dist(rng);
    for (int r = 0; r < n; ++r)
      keys.push_back(uint64_t(r) * 7919 + 1);
    ctx = ExecContext{&params, training, 42};
  }

  /// The call over this harness's buffers (pointer lists kept in members).
  ForwardCall call() {
    argPtrs.clear();
    outPtrs.clear();
    for (auto &x : args)
      argPtrs.push_back(x.data());
    for (auto &x : outs)
      outPtrs.push_back(x.data());
    return forwardCall(rows, argPtrs, outPtrs, HostRows{ints.data(), floats.data(), keys.data()},
                       &ctx);
  }

  /// sum(weights * outputs), in double.
  double objective() {
    kernel.forward(call());
    double sum = 0;
    for (size_t j = 0; j < outs.size(); ++j)
      for (size_t k = 0; k < outs[j].size(); ++k)
        sum += double(outs[j][k]) * weights[j][k];
    return sum;
  }

  /// Runs backward with d(objective)/d(out) = weights; returns the argument gradients.
  std::vector<std::vector<float>> backward() {
    objective();
    std::vector<const float *> og;
    std::vector<float *> ag;
    std::vector<std::vector<float>> grads;
    for (auto &x : args)
      grads.emplace_back(x.size(), 0.0f);
    for (auto &g : grads)
      ag.push_back(g.data());
    for (auto &w : weights)
      og.push_back(w.data());
    BackwardCall b;
    static_cast<ForwardCall &>(b) = call();
    b.outGrads = og;
    b.argGrads = ag;
    kernel.backward(b);
    return grads;
  }

  /// Compares analytic gradients of every argument and parameter element
  /// with central differences (step h), within `tolerance` relative to the
  /// larger of the two values (absolute below 1).
  void checkGradients(double h = 1e-2, double tolerance = 2e-2) {
    params.zeroGrads();
    std::vector<std::vector<float>> argGrads = backward();
    auto numeric = [&](float &x) { return centralDifference(x, h, [&] { return objective(); }); };
    auto expectNear = [&](double analytic, double fd, const std::string &what) {
      double scale = std::max({1.0, std::abs(analytic), std::abs(fd)});
      EXPECT_NEAR(analytic, fd, tolerance * scale) << what;
    };
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t k = 0; k < args[i].size(); ++k)
        expectNear(argGrads[i][k], numeric(args[i][k]),
                   "arg " + std::to_string(i) + " element " + std::to_string(k));
    for (int id = 0; id < params.count(); ++id) {
      Param &p = params.at(id);
      std::vector<float> analytic(p.grad.begin(), p.grad.end());
      for (size_t k = 0; k < p.value.size(); ++k)
        expectNear(analytic[k], numeric(p.value[k]), p.name + "[" + std::to_string(k) + "]");
    }
  }
};

} // namespace foldc::rt::testing
