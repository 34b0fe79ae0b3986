// Optimizer steps.
#include "runtime/engine/Optimizers.h"

#include <cmath>
#include <stdexcept>

namespace foldc::rt {

float Optimizer::gradientScale(const ParamStore &params) const {
  if (clipNorm_ <= 0)
    return 1.0f;
  double sumSquares = 0;
  for (int id = 0; id < params.count(); ++id)
    if (params.at(id).training.trainable)
      for (float g : params.at(id).grad)
        sumSquares += double(g) * g;
  double norm = std::sqrt(sumSquares);
  return norm > clipNorm_ ? float(clipNorm_ / norm) : 1.0f;
}

void Optimizer::growSlots(const ParamStore &params) {
  for (Slot *slot : slots_)
    for (int id = int(slot->values.size()); id < params.count(); ++id)
      slot->values.emplace_back(params.at(id).value.size(), slot->initial);
}

OptimizerStateView Optimizer::state(const ParamStore &params) {
  growSlots(params);
  OptimizerStateView state;
  state.steps = steps_;
  for (const Slot *slot : slots_)
    for (int id = 0; id < params.count(); ++id)
      state.slots.emplace_back(slot->name + "/" + params.at(id).name, &slot->values[size_t(id)]);
  return state;
}

void Optimizer::restore(const ParamStore &params, OptimizerState state) {
  for (Slot *slot : slots_) {
    slot->values.clear();
    for (int id = 0; id < params.count(); ++id) {
      std::string key = slot->name + "/" + params.at(id).name;
      auto it = state.slots.find(key);
      if (it == state.slots.end())
        throw std::runtime_error("optimizer state: no slot '" + key + "'");
      if (it->second.size() != params.at(id).value.size())
        throw std::runtime_error("optimizer state: slot '" + key + "' has " +
                                 std::to_string(it->second.size()) + " values, expected " +
                                 std::to_string(params.at(id).value.size()));
      slot->values.push_back(std::move(it->second));
      state.slots.erase(it);
    }
  }
  if (!state.slots.empty())
    throw std::runtime_error("optimizer state: unexpected slot '" + state.slots.begin()->first +
                             "' (another optimizer's?)");
  steps_ = long(state.steps);
}

void Optimizer::step(ParamStore &params) {
  float scale = gradientScale(params);
  ++steps_;
  growSlots(params);
  beginStep(params);
  for (int id = 0; id < params.count(); ++id) {
    Param &p = params.at(id);
    if (!p.training.trainable) {
      p.zeroGradient();
      continue;
    }
    StepFactors factors{scale, decay_.decoupled ? 0.0f : float(decay_.rate),
                        lr_ * double(p.training.learningRateScale)};
    if (!p.sparseRows) {
      updateRange(id, p, 0, p.value.size(), factors);
      continue;
    }
    size_t width = size_t(p.rowWidth());
    for (int32_t r : p.touchedRows)
      updateRange(id, p, size_t(r) * width, width, factors);
    p.forgetTouchedRows();
  }
}

void Optimizer::updateRange(int id, Param &p, size_t offset, size_t count,
                            const StepFactors &factors) {
  if (decay_.decoupled && decay_.rate > 0) {
    const float keep = float(1.0 - factors.rate * decay_.rate);
    float *__restrict w = p.value.data() + offset;
    for (size_t k = 0; k < count; ++k)
      w[k] *= keep;
  }
  update(id, p, offset, count, factors);
}

// The loops below are written for the vectoriser: restrict-qualified
// pointers, float arithmetic, and this file is compiled with -fno-math-errno
// so that sqrt becomes a vector instruction.

void Sgd::update(int, Param &p, size_t offset, size_t count, const StepFactors &f) {
  float *__restrict w = p.value.data() + offset;
  float *__restrict g = p.grad.data() + offset;
  const float rate = float(f.rate), scale = f.gradientScale, decay = f.l2;
  for (size_t k = 0; k < count; ++k) {
    w[k] -= rate * (scale * g[k] + decay * w[k]);
    g[k] = 0.0f;
  }
}

void Adagrad::update(int id, Param &p, size_t offset, size_t count, const StepFactors &f) {
  float *__restrict w = p.value.data() + offset;
  float *__restrict g = p.grad.data() + offset;
  float *__restrict acc = acc_.values[size_t(id)].data() + offset;
  const float rate = float(f.rate), scale = f.gradientScale, decay = f.l2;
  for (size_t k = 0; k < count; ++k) {
    float gk = scale * g[k] + decay * w[k];
    g[k] = 0.0f;
    acc[k] += gk * gk;
    w[k] -= rate * gk / std::sqrt(acc[k]);
  }
}

void Adam::beginStep(ParamStore &) {
  // lr * (m / c1) / (sqrt(v / c2) + eps) == (lr * sqrt(c2) / c1) * m / (sqrt(v) + eps * sqrt(c2)).
  c1_ = 1.0 - std::pow(beta1_, double(steps()));
  double c2 = 1.0 - std::pow(beta2_, double(steps()));
  sqrtC2_ = std::sqrt(c2);
  correctedEps_ = float(eps_ * sqrtC2_);
}

void Adam::update(int id, Param &p, size_t offset, size_t count, const StepFactors &f) {
  float *__restrict w = p.value.data() + offset;
  float *__restrict g = p.grad.data() + offset;
  float *__restrict m = m_.values[size_t(id)].data() + offset;
  float *__restrict v = v_.values[size_t(id)].data() + offset;
  const float b1 = float(beta1_), b2 = float(beta2_), a = float(f.rate * sqrtC2_ / c1_);
  const float e = correctedEps_;
  const float scale = f.gradientScale, decay = f.l2;
  for (size_t k = 0; k < count; ++k) {
    float gk = scale * g[k] + decay * w[k];
    g[k] = 0.0f;
    m[k] = b1 * m[k] + (1.0f - b1) * gk;
    v[k] = b2 * v[k] + (1.0f - b2) * gk * gk;
    w[k] -= a * m[k] / (std::sqrt(v[k]) + e);
  }
}

void RmsProp::update(int id, Param &p, size_t offset, size_t count, const StepFactors &f) {
  float *__restrict w = p.value.data() + offset;
  float *__restrict g = p.grad.data() + offset;
  float *__restrict v = v_.values[size_t(id)].data() + offset;
  const float rate = float(f.rate), alpha = float(alpha_), eps = float(eps_);
  const float scale = f.gradientScale, decay = f.l2;
  for (size_t k = 0; k < count; ++k) {
    float gk = scale * g[k] + decay * w[k];
    g[k] = 0.0f;
    v[k] = alpha * v[k] + (1.0f - alpha) * gk * gk;
    w[k] -= rate * gk / (std::sqrt(v[k]) + eps);
  }
}

namespace {

constexpr OptimizerKind kOptimizers[] = {
    {"sgd", 0.1, 0,
     [](double lr, double clip, double decay) -> std::unique_ptr<Optimizer> {
       return std::make_unique<Sgd>(lr, clip, WeightDecay{decay});
     }},
    {"adagrad", 0.05, 0,
     [](double lr, double clip, double decay) -> std::unique_ptr<Optimizer> {
       return std::make_unique<Adagrad>(lr, 0.1, clip, WeightDecay{decay});
     }},
    {"adam", 1e-3, 0,
     [](double lr, double clip, double decay) -> std::unique_ptr<Optimizer> {
       return std::make_unique<Adam>(lr, 0.9, 0.999, 1e-8, clip, WeightDecay{decay});
     }},
    // PyTorch's AdamW defaults: decoupled decay 0.01.
    {"adamw", 1e-3, 0.01,
     [](double lr, double clip, double decay) -> std::unique_ptr<Optimizer> {
       return std::make_unique<Adam>(lr, 0.9, 0.999, 1e-8, clip, WeightDecay{decay, true});
     }},
    {"rmsprop", 1e-2, 0,
     [](double lr, double clip, double decay) -> std::unique_ptr<Optimizer> {
       return std::make_unique<RmsProp>(lr, 0.99, 1e-8, clip, WeightDecay{decay});
     }},
};

} // namespace

std::span<const OptimizerKind> optimizerKinds() { return kOptimizers; }

const OptimizerKind *findOptimizer(std::string_view name) {
  for (const OptimizerKind &kind : kOptimizers)
    if (kind.name == name)
      return &kind;
  return nullptr;
}

std::unique_ptr<Optimizer> makeOptimizer(const std::string &name, double lr, double clipNorm,
                                         double weightDecay) {
  const OptimizerKind *kind = findOptimizer(name);
  return kind ? kind->make(lr, clipNorm, weightDecay) : nullptr;
}

} // namespace foldc::rt
