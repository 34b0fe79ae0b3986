// Optimizer steps.
#include "runtime/Optimizers.h"

#include <cmath>

namespace foldc::rt {

float Optimizer::gradientScale(const ParamStore &params) const {
  if (clipNorm_ <= 0)
    return 1.0f;
  double sumSquares = 0;
  for (int id = 0; id < params.count(); ++id)
    for (float g : params.at(id).grad)
      sumSquares += double(g) * g;
  double norm = std::sqrt(sumSquares);
  return norm > clipNorm_ ? float(clipNorm_ / norm) : 1.0f;
}

void Optimizer::step(ParamStore &params) {
  float scale = gradientScale(params);
  beginStep(params);
  for (int id = 0; id < params.count(); ++id) {
    Param &p = params.at(id);
    if (!p.sparseRows) {
      update(id, p, 0, p.value.size(), scale);
      continue;
    }
    size_t width = size_t(p.rowWidth());
    for (int32_t r : p.touchedRows)
      update(id, p, size_t(r) * width, width, scale);
    p.forgetTouchedRows();
  }
}

// The loops below are written for the vectoriser: restrict-qualified
// pointers, float arithmetic, and this file is compiled with -fno-math-errno
// so that sqrt becomes a vector instruction.

void Sgd::update(int, Param &p, size_t offset, size_t count, float gradScale) {
  float *__restrict w = p.value.data() + offset;
  float *__restrict g = p.grad.data() + offset;
  const float rate = float(lr_) * gradScale;
  for (size_t k = 0; k < count; ++k) {
    w[k] -= rate * g[k];
    g[k] = 0.0f;
  }
}

void Adagrad::beginStep(ParamStore &params) {
  for (int id = int(acc_.size()); id < params.count(); ++id)
    acc_.emplace_back(params.at(id).value.size(), float(initial_));
}

void Adagrad::update(int id, Param &p, size_t offset, size_t count, float gradScale) {
  float *__restrict w = p.value.data() + offset;
  float *__restrict g = p.grad.data() + offset;
  float *__restrict acc = acc_[size_t(id)].data() + offset;
  const float rate = float(lr_);
  for (size_t k = 0; k < count; ++k) {
    float gk = gradScale * g[k];
    g[k] = 0.0f;
    acc[k] += gk * gk;
    w[k] -= rate * gk / std::sqrt(acc[k]);
  }
}

void Adam::beginStep(ParamStore &params) {
  ++step_;
  for (int id = int(m_.size()); id < params.count(); ++id) {
    m_.emplace_back(params.at(id).value.size(), 0.0f);
    v_.emplace_back(params.at(id).value.size(), 0.0f);
  }
  // lr * (m / c1) / (sqrt(v / c2) + eps) == stepSize * m / (sqrt(v) + eps * sqrt(c2)).
  double c1 = 1.0 - std::pow(beta1_, double(step_));
  double c2 = 1.0 - std::pow(beta2_, double(step_));
  stepSize_ = float(lr_ * std::sqrt(c2) / c1);
  correctedEps_ = float(eps_ * std::sqrt(c2));
}

void Adam::update(int id, Param &p, size_t offset, size_t count, float gradScale) {
  float *__restrict w = p.value.data() + offset;
  float *__restrict g = p.grad.data() + offset;
  float *__restrict m = m_[size_t(id)].data() + offset;
  float *__restrict v = v_[size_t(id)].data() + offset;
  const float b1 = float(beta1_), b2 = float(beta2_), a = stepSize_, e = correctedEps_;
  for (size_t k = 0; k < count; ++k) {
    float gk = gradScale * g[k];
    g[k] = 0.0f;
    m[k] = b1 * m[k] + (1.0f - b1) * gk;
    v[k] = b2 * v[k] + (1.0f - b2) * gk * gk;
    w[k] -= a * m[k] / (std::sqrt(v[k]) + e);
  }
}

std::unique_ptr<Optimizer> makeOptimizer(const std::string &name, double lr, double clipNorm) {
  if (name == "sgd")
    return std::make_unique<Sgd>(lr, clipNorm);
  if (name == "adagrad")
    return std::make_unique<Adagrad>(lr, 0.1, clipNorm);
  if (name == "adam")
    return std::make_unique<Adam>(lr, 0.9, 0.999, 1e-8, clipNorm);
  return nullptr;
}

} // namespace foldc::rt
