// Optimizers: SGD, Adagrad and Adam, with optional global-norm clipping.
#pragma once

#include "runtime/Params.h"

#include <memory>
#include <string>
#include <vector>

namespace foldc::rt {

/// Applies the accumulated gradients to the parameters and zeroes them, in
/// one pass over each parameter (in float, vectorised: an optimizer step costs
/// a few memory passes). Parameters with sparse rows (embeddings) update only
/// the touched rows.
class Optimizer {
public:
  explicit Optimizer(double clipNorm = 0) : clipNorm_(clipNorm) {}
  virtual ~Optimizer() = default;
  void step(ParamStore &params);

protected:
  /// Updates `count` floats of parameter `id` starting at `offset` from
  /// gradScale times their gradients, and zeroes those gradients.
  virtual void update(int id, Param &param, size_t offset, size_t count, float gradScale) = 0;
  /// Once a step, before the updates: state sizes, per-step constants.
  virtual void beginStep(ParamStore &) {}

private:
  /// 1, or what brings the global L2 norm of the gradients down to clipNorm_.
  float gradientScale(const ParamStore &params) const;

  double clipNorm_; ///< 0: no clipping; else scale gradients to this global L2 norm at most
};

/// Plain `p -= lr * g`: no momentum, no decay.
class Sgd : public Optimizer {
public:
  explicit Sgd(double lr, double clipNorm = 0) : Optimizer(clipNorm), lr_(lr) {}

protected:
  void update(int id, Param &param, size_t offset, size_t count, float gradScale) override;

private:
  double lr_;
};

/// Adagrad (Duchi et al. 2011) with TensorFlow's defaults: accumulators start
/// at 0.1; `p -= lr * g / sqrt(acc)` after `acc += g^2`.
class Adagrad : public Optimizer {
public:
  explicit Adagrad(double lr, double initialAccumulator = 0.1, double clipNorm = 0)
      : Optimizer(clipNorm), lr_(lr), initial_(initialAccumulator) {}

protected:
  void beginStep(ParamStore &params) override;
  void update(int id, Param &param, size_t offset, size_t count, float gradScale) override;

private:
  double lr_, initial_;
  std::vector<std::vector<float>> acc_;
};

/// Adam (Kingma & Ba 2015) with the paper's defaults: beta1 0.9, beta2 0.999,
/// epsilon 1e-8, bias-corrected. Sparse rows update lazily (only touched rows).
/// The bias corrections are folded into a step size and an epsilon once a
/// step (the paper's "more efficient order" of section 2).
class Adam : public Optimizer {
public:
  explicit Adam(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
                double clipNorm = 0)
      : Optimizer(clipNorm), lr_(lr), beta1_(beta1), beta2_(beta2), eps_(eps) {}

protected:
  void beginStep(ParamStore &params) override;
  void update(int id, Param &param, size_t offset, size_t count, float gradScale) override;

private:
  double lr_, beta1_, beta2_, eps_;
  long step_ = 0;
  float stepSize_ = 0, correctedEps_ = 0; ///< this step's, from the bias corrections
  std::vector<std::vector<float>> m_, v_;
};

/// "sgd", "adagrad" or "adam" with learning rate `lr`; null for other names.
std::unique_ptr<Optimizer> makeOptimizer(const std::string &name, double lr, double clipNorm = 0);

} // namespace foldc::rt
