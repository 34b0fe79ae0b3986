// The operations of the batch plan's kernels, from the table in Ops.def.
#pragma once

#include <optional>
#include <string_view>

namespace foldc {

enum class OpKind {
#define FOLDC_OP(Kind, Name, Family, Attr, Flops) Kind,
#include "passes/builtins/Ops.def"
};

/// Ops of one family share a shape rule and a runtime primitive (Ops.def's
/// FOLDC_FAMILY rows).
enum class OpFamily {
#define FOLDC_FAMILY(Family, Gradient) Family,
#include "passes/builtins/Ops.def"
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

/// What an op's backward formula reads besides the gradient: its tensor
/// operands, its result. A kernel keeps from the forward pass only the
/// values some backward reads. Used for the Unary and Binary families,
/// whose primitives take a NotKept for what they do not read (the others
/// read what their backward calls are given).
struct BackwardReads {
  bool operands = true, result = true;
};
constexpr BackwardReads backwardReads(OpKind kind) {
  switch (kind) {
  case OpKind::Neg:
  case OpKind::StopGradient:
  case OpKind::Add:
  case OpKind::Sub:
    return {false, false};
  case OpKind::Tanh: // 1 - y^2, y (1 - y), y, 0.5 / y
  case OpKind::Sigmoid:
  case OpKind::Exp:
  case OpKind::Sqrt:
    return {false, true};
  case OpKind::ReLU:
  case OpKind::Softplus:
  case OpKind::Silu:
  case OpKind::Log:
  case OpKind::Abs:
  case OpKind::Square:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Maximum:
  case OpKind::Minimum:
    return {true, false};
  default: // Elu (x > 0 and y), and the other families
    return {true, true};
  }
}

} // namespace foldc
