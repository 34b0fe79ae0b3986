// The interface between the engine and a batched kernel (generated or hand-written).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace foldc::rt {

class ParamStore;

/// What a kernel needs besides its rows: parameters, mode and randomness.
struct ExecContext {
  ParamStore *params = nullptr;
  bool training = false; ///< dropout is active only when training
  uint64_t seed = 0;     ///< dropout seed of this step
};

/// What a kernel's forward keeps for its backward (its intermediate values),
/// held by the executor between the two passes of a training step.
struct SavedValues {
  virtual ~SavedValues() = default;
};

/// The arguments of one batched forward call. Every tensor argument and
/// result is a row-major matrix of `rows` rows (one per instance) and the
/// width given by the kernel's signature.
struct ForwardCall {
  int rows = 0;
  std::span<const float *const> args;     ///< rows x argWidths[i]
  std::span<float *const> outs;           ///< rows x outWidths[j]
  const int32_t *hostInts = nullptr;      ///< rows x hostInts (word ids, labels)
  const float *hostFloats = nullptr;      ///< rows x hostFloats (lifted numbers)
  const uint64_t *instanceKeys = nullptr; ///< rows: identity for dropout masks
  ExecContext *ctx = nullptr;
  /// A variadic kernel's arguments per row: args[0] holds them all, row
  /// after row (sum of argCounts rows of argWidths[0]); so do argGrads[0].
  const int32_t *argCounts = nullptr;
  /// When set, forward leaves its intermediate values here and backward
  /// reads them; when null, backward recomputes them from the arguments.
  std::unique_ptr<SavedValues> *saved = nullptr;
};

/// The host data of a batch's rows: rows x hostInts, rows x hostFloats, and
/// one dropout identity per row.
struct HostRows {
  const int32_t *ints = nullptr;
  const float *floats = nullptr;
  const uint64_t *instanceKeys = nullptr;
};

/// The forward call of `rows` rows (every caller makes its call here, so a
/// new field of ForwardCall is filled in one place).
inline ForwardCall forwardCall(int rows, std::span<const float *const> args,
                               std::span<float *const> outs, HostRows host = {},
                               ExecContext *ctx = nullptr, const int32_t *argCounts = nullptr) {
  ForwardCall call;
  call.rows = rows;
  call.args = args;
  call.outs = outs;
  call.hostInts = host.ints;
  call.hostFloats = host.floats;
  call.instanceKeys = host.instanceKeys;
  call.ctx = ctx;
  call.argCounts = argCounts;
  return call;
}

/// Where a kernel's forward computes its values (of type V): kept in `call`
/// when it asks for them, else `local`.
template <class V> V &valuesToKeep(const ForwardCall &call, V &local) {
  if (!call.saved)
    return local;
  *call.saved = std::make_unique<V>();
  return static_cast<V &>(**call.saved);
}

/// The values the forward of `call` kept, or null (then backward recomputes).
template <class V> const V *keptValues(const ForwardCall &call) {
  return call.saved && *call.saved ? static_cast<const V *>(call.saved->get()) : nullptr;
}

/// The arguments of one batched backward call: the forward call's data plus
/// gradients. `argGrads` arrive zeroed; the kernel writes d(objective)/d(arg)
/// there (the engine scatters and accumulates them) and accumulates parameter
/// gradients in the ParamStore.
struct BackwardCall : ForwardCall {
  std::span<const float *const> outGrads; ///< rows x outWidths[j]
  std::span<float *const> argGrads;       ///< rows x argWidths[i]
};

/// A batchable unit of tensor computation. One Kernel object is one batching
/// key: all instances of it, whichever example or call site they come from,
/// may run in one call.
class Kernel {
public:
  struct Signature {
    std::string name;
    std::vector<int> argWidths; ///< floats per row of each tensor argument
    std::vector<int> outWidths; ///< floats per row of each result
    int hostInts = 0;           ///< host integers per instance
    int hostFloats = 0;         ///< host floats per instance
    double flops = 0;           ///< forward FLOPs per instance (for reports)
    /// Each instance takes any number of arguments, all of argWidths[0]
    /// (a segment sum): see ForwardCall::argCounts.
    bool variadic = false;
  };

  explicit Kernel(Signature signature) : signature_(std::move(signature)) {}
  virtual ~Kernel() = default;
  const Signature &signature() const { return signature_; }

  virtual void forward(const ForwardCall &call) const = 0;
  virtual void backward(const BackwardCall &call) const = 0;

private:
  Signature signature_;
};

} // namespace foldc::rt
