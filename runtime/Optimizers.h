// Optimizers: SGD, Adagrad and Adam, with optional global-norm clipping.
#pragma once

#include "runtime/Params.h"

#include <memory>
#include <string>
#include <vector>

namespace foldc::rt {

/// Applies the accumulated gradients to the parameters, then zeroes them.
/// Parameters with sparse rows (embeddings) update only the touched rows.
class Optimizer {
public:
  explicit Optimizer(double clipNorm = 0) : clipNorm_(clipNorm) {}
  virtual ~Optimizer() = default;
  void step(ParamStore &params);

protected:
  /// Updates `count` floats of parameter `id` starting at `offset`.
  virtual void update(int id, Param &param, size_t offset, size_t count, float gradScale) = 0;
  virtual void beginStep(ParamStore &) {}

private:
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
  std::vector<std::vector<float>> m_, v_;
};

/// "sgd", "adagrad" or "adam" with learning rate `lr`; null for other names.
std::unique_ptr<Optimizer> makeOptimizer(const std::string &name, double lr, double clipNorm = 0);

} // namespace foldc::rt
