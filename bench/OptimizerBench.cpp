// One optimizer step over the dense parameters of the dynet-benchmark treenn
// Tree-LSTM (embedding 128, hidden 128, 5 classes): time per step, per
// element, and the memory bandwidth that implies (an Adam step reads and
// writes the value, gradient and two moments: 28 bytes per element with the
// gradient cleared in the same pass).
#include "runtime/engine/Optimizers.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace {

using foldc::rt::ParamStore;

/// The dense parameters of treenn: the Tree-LSTM's gates and the classifier.
ParamStore treennDense() {
  const int64_t E = 128, H = 128, classes = 5;
  ParamStore p;
  p.add("W_iou", {E, 3 * H}, {foldc::rt::InitKind::Glorot});
  p.add("U_iou", {2 * H, 3 * H}, {foldc::rt::InitKind::Glorot});
  p.add("b_iou", {3 * H}, {foldc::rt::InitKind::Zeros});
  p.add("W_f", {E, H}, {foldc::rt::InitKind::Glorot});
  p.add("U_f", {2 * H, 2 * H}, {foldc::rt::InitKind::Glorot});
  p.add("b_f", {2 * H}, {foldc::rt::InitKind::Zeros});
  p.add("out.W", {H, classes}, {foldc::rt::InitKind::Glorot});
  p.add("out.b", {classes}, {foldc::rt::InitKind::Zeros});
  p.initialize(1);
  return p;
}

/// Seconds per call of `step` after the gradients are filled (the stand-in
/// for a backward pass), less the time of the fill alone.
template <class Step> double secondsPerStep(ParamStore &params, int steps, Step &&step) {
  auto timed = [&](bool stepping) {
    auto begin = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
      for (int id = 0; id < params.count(); ++id)
        std::ranges::fill(params.at(id).grad, 1e-3f);
      if (stepping)
        step();
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  timed(true); // state allocated, caches warm
  return (timed(true) - timed(false)) / steps;
}

/// The Adam step of the first round (runtime/engine/Optimizers.cpp until 2026-12-03):
/// per element in double with two divisions and a sqrt, the bias corrections
/// computed per parameter, the gradients cleared in a second pass. Kept here as the baseline of the
/// ratio.
struct ScalarDoubleAdam {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  long step = 0;
  std::vector<std::vector<float>> m, v;
  void operator()(ParamStore &params) {
    ++step;
    m.resize(size_t(params.count()));
    v.resize(size_t(params.count()));
    for (int id = 0; id < params.count(); ++id) {
      foldc::rt::Param &p = params.at(id);
      m[size_t(id)].resize(p.value.size());
      v[size_t(id)].resize(p.value.size());
      double c1 = 1.0 - std::pow(beta1, double(step)), c2 = 1.0 - std::pow(beta2, double(step));
      for (size_t k = 0; k < p.value.size(); ++k) {
        double g = p.grad[k];
        float &mk = m[size_t(id)][k], &vk = v[size_t(id)][k];
        mk = float(beta1 * mk + (1 - beta1) * g);
        vk = float(beta2 * vk + (1 - beta2) * g * g);
        p.value[k] -= float(lr * (mk / c1) / (std::sqrt(vk / c2) + eps));
      }
    }
    params.zeroGrads();
  }
};

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"optimizer_bench: one optimizer step over treenn's dense parameters"};
  int steps = 2000;
  app.add_option("--steps", steps, "steps timed per optimizer (default 2000)");
  CLI11_PARSE(app, argc, argv);
  ParamStore params = treennDense();
  size_t elements = 0;
  for (int id = 0; id < params.count(); ++id)
    elements += params.at(id).value.size();
  std::printf("%zu dense parameters (treenn: E 128, H 128); %d steps each\n", elements, steps);
  std::printf("%-16s %12s %10s %12s\n", "", "us/step", "ns/elem", "GB/s (eff.)");
  const std::pair<const char *, double> bytesPerElement[] = {
      {"sgd", 12}, {"adagrad", 20}, {"adam", 28}};
  auto report = [&](const char *name, double bytes, double seconds) {
    std::printf("%-16s %12.1f %10.3f %12.1f\n", name, seconds * 1e6,
                seconds * 1e9 / double(elements), bytes * double(elements) / seconds / 1e9);
  };
  double adam = 0;
  for (auto [name, bytes] : bytesPerElement) {
    std::cerr << "optimizer_bench: " << name << "\n";
    auto optimizer = foldc::rt::makeOptimizer(name, 1e-3);
    double seconds = secondsPerStep(params, steps, [&] { optimizer->step(params); });
    report(name, bytes, seconds);
    adam = seconds;
  }
  std::cerr << "optimizer_bench: the first round's scalar double Adam\n";
  ScalarDoubleAdam baseline;
  double old = secondsPerStep(params, steps, [&] { baseline(params); });
  report("adam (round 1)", 28, old);
  std::printf("adam speedup over round 1: %.1fx\n", old / adam);
  return 0;
}
