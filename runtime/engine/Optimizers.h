// Optimizers: SGD, Adagrad and Adam, with optional global-norm clipping.
#pragma once

#include "runtime/engine/Params.h"

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace foldc::rt {

/// What a training checkpoint keeps of an optimizer: its per-weight slots
/// (Adagrad's accumulators, Adam's moments) named `SLOT/PARAM`, and the
/// number of steps taken.
struct OptimizerState {
  std::map<std::string, std::vector<float>> slots;
  int64_t steps = 0;
};
/// An optimizer's state as it is, for writing: its slots in place, no copies.
struct OptimizerStateView {
  std::vector<std::pair<std::string, const std::vector<float> *>> slots;
  int64_t steps = 0;
};

/// Applies the accumulated gradients to the parameters and zeroes them, in
/// one pass over each parameter (in float, vectorised: an optimizer step costs
/// a few memory passes). Parameters with sparse rows (embeddings) update only
/// the touched rows.
///
/// Weight decay (L2) adds `weightDecay * w` to every gradient the step
/// applies, after clipping: the objective gains `weightDecay / 2 * |w|^2`
/// over the dense parameters and the embedding rows a batch touches (rows a
/// batch does not use are left alone, as sparse updates do).
class Optimizer {
public:
  explicit Optimizer(double clipNorm = 0, double weightDecay = 0)
      : clipNorm_(clipNorm), weightDecay_(weightDecay) {}
  virtual ~Optimizer() = default;
  void step(ParamStore &params);

  /// The state to checkpoint, as views of every slot of every parameter of
  /// `params` (valid until the next step).
  OptimizerStateView state(const ParamStore &params);
  /// Puts back a state() taken from the same kind of optimizer over the same
  /// parameters; throws std::runtime_error naming a missing, unexpected or
  /// mis-sized slot.
  void restore(const ParamStore &params, OptimizerState state);

protected:
  /// A per-weight state, one vector per parameter, created (filled with
  /// `initial`) when the optimizer first sees the parameter.
  struct Slot {
    std::string name;
    float initial = 0;
    std::vector<std::vector<float>> values;
  };
  /// Declares a slot (in a subclass constructor) for state() and restore().
  void addSlot(Slot &slot) { slots_.push_back(&slot); }
  long steps() const { return steps_; }

  /// Updates `count` floats of parameter `id` starting at `offset` from
  /// the gradients `scale * g + decay * w`, and zeroes those gradients.
  virtual void update(int id, Param &param, size_t offset, size_t count, float scale,
                      float decay) = 0;
  /// Once a step, after the slots are sized, before the updates: constants.
  virtual void beginStep(ParamStore &) {}

private:
  /// 1, or what brings the global L2 norm of the gradients down to clipNorm_.
  float gradientScale(const ParamStore &params) const;
  /// Gives every slot a vector for every parameter of `params`.
  void growSlots(const ParamStore &params);

  std::vector<Slot *> slots_;
  long steps_ = 0;

  double clipNorm_; ///< 0: no clipping; else scale gradients to this global L2 norm at most
  double weightDecay_;
};

/// Plain `p -= lr * g`: no momentum, no decay.
class Sgd : public Optimizer {
public:
  explicit Sgd(double lr, double clipNorm = 0, double weightDecay = 0)
      : Optimizer(clipNorm, weightDecay), lr_(lr) {}

protected:
  void update(int id, Param &param, size_t offset, size_t count, float scale, float decay) override;

private:
  double lr_;
};

/// Adagrad (Duchi et al. 2011) with TensorFlow's defaults: accumulators start
/// at 0.1; `p -= lr * g / sqrt(acc)` after `acc += g^2`.
class Adagrad : public Optimizer {
public:
  explicit Adagrad(double lr, double initialAccumulator = 0.1, double clipNorm = 0,
                   double weightDecay = 0)
      : Optimizer(clipNorm, weightDecay), lr_(lr), acc_{"acc", float(initialAccumulator), {}} {
    addSlot(acc_);
  }

protected:
  void update(int id, Param &param, size_t offset, size_t count, float scale, float decay) override;

private:
  double lr_;
  Slot acc_;
};

/// Adam (Kingma & Ba 2015) with the paper's defaults: beta1 0.9, beta2 0.999,
/// epsilon 1e-8, bias-corrected. Sparse rows update lazily (only touched rows).
/// The bias corrections are folded into a step size and an epsilon once a
/// step (the paper's "more efficient order" of section 2).
class Adam : public Optimizer {
public:
  explicit Adam(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
                double clipNorm = 0, double weightDecay = 0)
      : Optimizer(clipNorm, weightDecay), lr_(lr), beta1_(beta1), beta2_(beta2), eps_(eps) {
    addSlot(m_);
    addSlot(v_);
  }

protected:
  void beginStep(ParamStore &params) override;
  void update(int id, Param &param, size_t offset, size_t count, float scale, float decay) override;

private:
  double lr_, beta1_, beta2_, eps_;
  float stepSize_ = 0, correctedEps_ = 0; ///< this step's, from the bias corrections
  Slot m_{"m", 0, {}}, v_{"v", 0, {}};
};

/// RMSprop (Tieleman & Hinton 2012) with PyTorch's defaults: `v = alpha * v +
/// (1 - alpha) * g^2` from 0, `p -= lr * g / (sqrt(v) + eps)`, alpha 0.99,
/// eps 1e-8. Sparse rows update lazily (only touched rows).
class RmsProp : public Optimizer {
public:
  explicit RmsProp(double lr = 1e-2, double alpha = 0.99, double eps = 1e-8, double clipNorm = 0,
                   double weightDecay = 0)
      : Optimizer(clipNorm, weightDecay), lr_(lr), alpha_(alpha), eps_(eps) {
    addSlot(v_);
  }

protected:
  void update(int id, Param &param, size_t offset, size_t count, float scale, float decay) override;

private:
  double lr_, alpha_, eps_;
  Slot v_{"v", 0, {}};
};

/// The optimizers a driver offers, one row each (optimizerKinds()): the
/// `--optimizer` name, the learning rate it starts from when none is given,
/// and how to make one.
struct OptimizerKind {
  std::string_view name;
  double defaultLearningRate;
  std::unique_ptr<Optimizer> (*make)(double lr, double clipNorm, double weightDecay);
};
std::span<const OptimizerKind> optimizerKinds();
/// The row named `name`, or null.
const OptimizerKind *findOptimizer(std::string_view name);

/// The optimizer named `name` (a row of optimizerKinds()) with learning rate
/// `lr`; null for other names.
std::unique_ptr<Optimizer> makeOptimizer(const std::string &name, double lr, double clipNorm = 0,
                                         double weightDecay = 0);

} // namespace foldc::rt
