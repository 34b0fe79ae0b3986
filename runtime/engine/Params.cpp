// Parameter storage and initialisation.
#include "runtime/engine/Params.h"

#include "runtime/engine/Gemm.h"
#include "runtime/support/Random.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>

namespace foldc::rt {

int ParamStore::add(std::string name, std::vector<int64_t> shape, InitSpec init, bool sparseRows,
                    ParamTraining training) {
  if (find(name) >= 0)
    throw std::invalid_argument("parameter '" + name + "' is declared twice");
  Param p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.init = init;
  p.training = training;
  int64_t n = 1;
  for (int64_t d : p.shape)
    n *= d;
  p.value.assign(size_t(n), 0.0f);
  p.sparseRows = sparseRows;
  if (sparseRows)
    p.rowTouched.assign(size_t(p.rows()), 0);
  addGradient(p);
  params_.push_back(std::move(p));
  return int(params_.size() - 1);
}

namespace {

/// Floats in a cache line: every gradient starts on one, so that how Eigen
/// splits a loop into aligned packets (and so the rounding of its sums) does
/// not depend on where the allocator put the block.
constexpr size_t kLineFloats = 64 / sizeof(float);

size_t wholeLines(size_t floats) { return (floats + kLineFloats - 1) / kLineFloats * kLineFloats; }

} // namespace

void ParamStore::addGradient(Param &p) {
  size_t n = p.value.size();
  if (p.sparseRows) {
    sparseGradients_.emplace_back(n, 0.0f); // the others' blocks do not move
    p.grad = std::span<float>(sparseGradients_.back().data(), n);
    return;
  }
  size_t at = denseGradients_.size(), end = at + wholeLines(n);
  if (end > denseGradients_.capacity()) {
    // The block moves: the dense gradients declared so far follow it, at
    // their offsets. Doubling keeps declaring N parameters linear.
    std::vector<size_t> offsets;
    for (const Param &q : params_)
      offsets.push_back(q.sparseRows ? 0 : size_t(q.grad.data() - denseGradients_.data()));
    denseGradients_.reserve(std::max(end, 2 * denseGradients_.capacity()));
    for (size_t i = 0; i < params_.size(); ++i)
      if (!params_[i].sparseRows)
        params_[i].grad =
            std::span<float>(denseGradients_.data() + offsets[i], params_[i].grad.size());
  }
  denseGradients_.resize(end, 0.0f);
  p.grad = std::span<float>(denseGradients_.data() + at, n);
}

int ParamStore::find(const std::string &name) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].name == name)
      return int(i);
  return -1;
}

void ParamStore::initialize(uint64_t seed) {
  for (Param &p : params_) {
    std::mt19937_64 gen(mix64(seed ^ std::hash<std::string>{}(p.name)));
    const InitSpec &init = p.init;
    auto fillUniform = [&](double lo, double hi) {
      std::uniform_real_distribution<double> dist(lo, hi);
      for (float &v : p.value)
        v = float(dist(gen));
    };
    switch (init.kind) {
    case InitKind::Zeros:
      std::fill(p.value.begin(), p.value.end(), 0.0f);
      break;
    case InitKind::Ones:
      std::fill(p.value.begin(), p.value.end(), 1.0f);
      break;
    case InitKind::Constant:
      std::fill(p.value.begin(), p.value.end(), float(init.a));
      break;
    case InitKind::Uniform:
      fillUniform(init.a, init.b);
      break;
    case InitKind::Normal: {
      std::normal_distribution<double> dist(0.0, init.a);
      for (float &v : p.value)
        v = float(dist(gen));
      break;
    }
    case InitKind::Glorot: {
      double fanOut = double(p.rowWidth());
      double fanIn = double(p.size()) / fanOut;
      double limit = std::sqrt(6.0 / (fanIn + fanOut));
      fillUniform(-limit, limit);
      break;
    }
    }
  }
}

void ParamStore::deferWeightGradients() {
  for (Param &p : params_) {
    p.deferred.active = true;
    p.deferred.xRuns.clear(); // a pass that threw left rows behind
    p.deferred.dyStarts.clear();
    p.deferred.xCopies.clear();
    p.deferred.dy.clear();
  }
}

void ParamStore::flushDeferredGradients() {
  std::vector<const float *> xRows, dyRows;
  for (Param &p : params_) {
    Param::DeferredProduct &d = p.deferred;
    d.active = false;
    if (d.xRuns.empty())
      continue;
    xRows.clear();
    dyRows.clear();
    for (size_t i = 0; i < d.xRuns.size(); ++i) {
      const Param::DeferredProduct::XRun &x = d.xRuns[i];
      for (int64_t r = 0; r < x.rows; ++r) {
        xRows.push_back(x.kept ? x.kept + r * d.in : d.xCopies.data() + (x.copiedFrom + r) * d.in);
        dyRows.push_back(d.dy.data() + d.dyStarts[i] + r * d.out);
      }
    }
    gemmPointedRows(d.in, d.out, int64_t(xRows.size()), xRows.data(), dyRows.data(), p.grad.data(),
                    d.out);
    d.xRuns.clear(); // the buffers keep their capacity: the next pass reuses it
    d.dyStarts.clear();
    d.xCopies.clear();
    d.dy.clear();
  }
}

void Param::zeroGradient() {
  if (!sparseRows) {
    std::fill(grad.begin(), grad.end(), 0.0f);
    return;
  }
  int64_t w = rowWidth();
  for (int32_t r : touchedRows)
    std::fill(grad.begin() + r * w, grad.begin() + (r + 1) * w, 0.0f);
  forgetTouchedRows();
}

void ParamStore::zeroGrads() {
  for (Param &p : params_)
    p.zeroGradient();
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

} // namespace foldc::rt
