// The operations of the batch plan's kernels, from the table in Ops.def.
#pragma once

#include <optional>
#include <string_view>

namespace foldc {

enum class OpKind {
#define FOLDC_OP(Kind, Name, Family, Attr, Flops) Kind,
#include "passes/builtins/Ops.def"
};

/// Ops of one family share a shape rule and a runtime primitive.
enum class OpFamily {
  Unary,
  Binary,
  Compare,
  Reduce,
  Gather,
  Linear,
  BiasAdd,
  Read,
  MatMul,
  Slice,
  Concat,
  Transpose, ///< [a, b] -> [b, a]
  Outer,     ///< [a], [b] -> [a, b]
  Reshape,   ///< the same numbers under another shape
  Dot,
  Softmax,
  LogSoftmax,
  Argmax,
  TopK,        ///< the k largest of the last axis, largest first (attrs hi = k)
  TopKIndices, ///< their positions (no gradient)
  OneHot,
  Xent,
  Mse,
  SigmoidXent,
  Dropout,
  Segment, ///< the sum/mean/max of a variadic kernel's arguments
  Fill,
  FromHost
};

/// The typed attribute an op carries (see OpAttrs in BatchPlan.h).
enum class OpAttr {
  None,
  Param, ///< the parameter it reads
  Range, ///< [lo, hi) of an axis (and the axis)
  Axis,  ///< the axis it works along
  Rate,  ///< dropout's rate
};

/// How an op's FLOP count follows from its widths.
enum class FlopRule { Zero, Width, TwiceWidth, MulAdd };

struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpFamily family;
  OpAttr attr;
  FlopRule flops;
  /// The enumerator's name: the runtime kind of Unary/Binary/Compare/Reduce ops.
  std::string_view kindName;
};

const OpInfo &opInfo(OpKind kind);
/// The op printed as `name`, if any.
std::optional<OpKind> opNamed(std::string_view name);
/// Ops that let no gradient through to their operands.
bool hasNoGradient(OpKind kind);

} // namespace foldc
