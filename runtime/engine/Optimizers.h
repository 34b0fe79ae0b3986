// Optimizers: SGD, Adagrad, Adam (and AdamW), RMSprop, with optional
// global-norm clipping and weight decay.
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

/// How an optimizer decays the weights (`--weight-decay`).
struct WeightDecay {
  double rate = 0;
  /// false: L2, `rate * w` added to every gradient (the objective gains
  /// `rate / 2 * |w|^2`); true: decoupled (Loshchilov & Hutter's AdamW), the
  /// weights shrink by `lr * rate * w` beside the optimizer's own step.
  bool decoupled = false;
};

/// Applies the accumulated gradients to the parameters and zeroes them, in
/// one pass over each parameter (in float, vectorised: an optimizer step costs
/// a few memory passes). Parameters with sparse rows (embeddings) update only
/// the touched rows, and only those rows decay (as lazy updates do).
///
/// Parameters that are not trainable (`trainable: false`) keep their values
/// to the bit and do not count towards the clipping norm; each parameter's
/// learning rate is the optimizer's times its `lr_scale:`.
class Optimizer {
public:
  Optimizer(double lr, double clipNorm, WeightDecay decay)
      : lr_(lr), clipNorm_(clipNorm), decay_(decay) {}
  virtual ~Optimizer() = default;
  void step(ParamStore &params);

  /// The learning rate of the next steps (a schedule sets it before each).
  void setLearningRate(double lr) { lr_ = lr; }
  double learningRate() const { return lr_; }

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
  /// What one step applies to one parameter: the gradient to use is
  /// `gradientScale * g + l2 * w`, the learning rate `rate`.
  struct StepFactors {
    float gradientScale = 1, l2 = 0;
    double rate = 0; ///< in double, so that Adam folds its corrections in before rounding
  };
  /// Declares a slot (in a subclass constructor) for state() and restore().
  void addSlot(Slot &slot) { slots_.push_back(&slot); }
  long steps() const { return steps_; }

  /// Updates `count` floats of parameter `id` starting at `offset`, and
  /// zeroes those gradients.
  virtual void update(int id, Param &param, size_t offset, size_t count,
                      const StepFactors &factors) = 0;
  /// Once a step, after the slots are sized, before the updates: constants.
  virtual void beginStep(ParamStore &) {}

private:
  /// 1, or what brings the global L2 norm of the trainable parameters'
  /// gradients down to clipNorm_.
  float gradientScale(const ParamStore &params) const;
  /// Gives every slot a vector for every parameter of `params`.
  void growSlots(const ParamStore &params);
  /// Updates `count` floats of `param` from `offset`, decaying them first
  /// when the decay is decoupled.
  void updateRange(int id, Param &param, size_t offset, size_t count, const StepFactors &factors);

  std::vector<Slot *> slots_;
  long steps_ = 0;

  double lr_;
  double clipNorm_; ///< 0: no clipping; else scale gradients to this global L2 norm at most
  WeightDecay decay_;
};

/// Plain `p -= lr * g`: no momentum, no decay.
class Sgd : public Optimizer {
public:
  explicit Sgd(double lr, double clipNorm = 0, WeightDecay decay = {})
      : Optimizer(lr, clipNorm, decay) {}

protected:
  void update(int id, Param &param, size_t offset, size_t count,
              const StepFactors &factors) override;
};

/// Adagrad (Duchi et al. 2011) with TensorFlow's defaults: accumulators start
/// at 0.1; `p -= lr * g / sqrt(acc)` after `acc += g^2`.
class Adagrad : public Optimizer {
public:
  explicit Adagrad(double lr, double initialAccumulator = 0.1, double clipNorm = 0,
                   WeightDecay decay = {})
      : Optimizer(lr, clipNorm, decay), acc_{"acc", float(initialAccumulator), {}} {
    addSlot(acc_);
  }

protected:
  void update(int id, Param &param, size_t offset, size_t count,
              const StepFactors &factors) override;

private:
  Slot acc_;
};

/// Adam (Kingma & Ba 2015) with the paper's defaults: beta1 0.9, beta2 0.999,
/// epsilon 1e-8, bias-corrected. Sparse rows update lazily (only touched rows).
/// The bias corrections are folded into a step size and an epsilon once a
/// step (the paper's "more efficient order" of section 2). With a decoupled
/// WeightDecay it is AdamW (Loshchilov & Hutter 2019, as PyTorch's AdamW:
/// `w -= lr * decay * w`, then the Adam step).
class Adam : public Optimizer {
public:
  explicit Adam(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
                double clipNorm = 0, WeightDecay decay = {})
      : Optimizer(lr, clipNorm, decay), beta1_(beta1), beta2_(beta2), eps_(eps) {
    addSlot(m_);
    addSlot(v_);
  }

protected:
  void beginStep(ParamStore &params) override;
  void update(int id, Param &param, size_t offset, size_t count,
              const StepFactors &factors) override;

private:
  double beta1_, beta2_, eps_;
  /// This step's bias corrections: the step size is lr * sqrtC2_ / c1_.
  double c1_ = 1, sqrtC2_ = 1;
  float correctedEps_ = 0;
  Slot m_{"m", 0, {}}, v_{"v", 0, {}};
};

/// RMSprop (Tieleman & Hinton 2012) with PyTorch's defaults: `v = alpha * v +
/// (1 - alpha) * g^2` from 0, `p -= lr * g / (sqrt(v) + eps)`, alpha 0.99,
/// eps 1e-8. Sparse rows update lazily (only touched rows).
class RmsProp : public Optimizer {
public:
  explicit RmsProp(double lr = 1e-2, double alpha = 0.99, double eps = 1e-8, double clipNorm = 0,
                   WeightDecay decay = {})
      : Optimizer(lr, clipNorm, decay), alpha_(alpha), eps_(eps) {
    addSlot(v_);
  }

protected:
  void update(int id, Param &param, size_t offset, size_t count,
              const StepFactors &factors) override;

private:
  double alpha_, eps_;
  Slot v_{"v", 0, {}};
};

/// The optimizers a driver offers, one row each (optimizerKinds()): the
/// `--optimizer` name, the learning rate and weight decay it starts from
/// when none is given, and how to make one (the decay is the kind's own:
/// L2, or decoupled for adamw).
struct OptimizerKind {
  std::string_view name;
  double defaultLearningRate;
  double defaultWeightDecay;
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
