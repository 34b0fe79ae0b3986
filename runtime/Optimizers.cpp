// Optimizer steps.
#include "runtime/Optimizers.h"

#include <cmath>

namespace foldc::rt {

void Optimizer::step(ParamStore &params) {
  float scale = 1.0f;
  if (clipNorm_ > 0) {
    double sumSquares = 0;
    for (int id = 0; id < params.count(); ++id)
      for (float g : params.at(id).grad)
        sumSquares += double(g) * g;
    double norm = std::sqrt(sumSquares);
    if (norm > clipNorm_)
      scale = float(clipNorm_ / norm);
  }
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
  }
  params.zeroGrads();
}

void Sgd::update(int, Param &p, size_t offset, size_t count, float gradScale) {
  for (size_t k = offset; k < offset + count; ++k)
    p.value[k] -= float(lr_) * gradScale * p.grad[k];
}

void Adagrad::beginStep(ParamStore &params) {
  for (int id = int(acc_.size()); id < params.count(); ++id)
    acc_.emplace_back(params.at(id).value.size(), float(initial_));
}

void Adagrad::update(int id, Param &p, size_t offset, size_t count, float gradScale) {
  std::vector<float> &acc = acc_[size_t(id)];
  for (size_t k = offset; k < offset + count; ++k) {
    float g = gradScale * p.grad[k];
    acc[k] += g * g;
    p.value[k] -= float(lr_) * g / std::sqrt(acc[k]);
  }
}

void Adam::beginStep(ParamStore &params) {
  ++step_;
  for (int id = int(m_.size()); id < params.count(); ++id) {
    m_.emplace_back(params.at(id).value.size(), 0.0f);
    v_.emplace_back(params.at(id).value.size(), 0.0f);
  }
}

void Adam::update(int id, Param &p, size_t offset, size_t count, float gradScale) {
  std::vector<float> &m = m_[size_t(id)], &v = v_[size_t(id)];
  double c1 = 1.0 - std::pow(beta1_, double(step_));
  double c2 = 1.0 - std::pow(beta2_, double(step_));
  for (size_t k = offset; k < offset + count; ++k) {
    double g = double(gradScale) * p.grad[k];
    m[k] = float(beta1_ * m[k] + (1 - beta1_) * g);
    v[k] = float(beta2_ * v[k] + (1 - beta2_) * g * g);
    double mHat = m[k] / c1, vHat = v[k] / c2;
    p.value[k] -= float(lr_ * mHat / (std::sqrt(vHat) + eps_));
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
