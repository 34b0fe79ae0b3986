// The op table of Ops.def as data.
#include "passes/builtins/Ops.h"

#include <iterator>

namespace foldc {

namespace {

constexpr OpInfo kOps[] = {
#define FOLDC_OP(Kind, Name, Family, Attr, Flops)                                                  \
  {OpKind::Kind, Name, OpFamily::Family, OpAttr::Attr, FlopRule::Flops, #Kind},
#include "passes/builtins/Ops.def"
};

/// Per family (in enum order), whether a gradient flows through its ops.
constexpr bool kFamilyGradientFlows[] = {
#define FOLDC_FAMILY(Family, Gradient) FOLDC_GRADIENT_##Gradient,
#define FOLDC_GRADIENT_Flows true
#define FOLDC_GRADIENT_None false
#include "passes/builtins/Ops.def"
#undef FOLDC_GRADIENT_Flows
#undef FOLDC_GRADIENT_None
};

} // namespace

const OpInfo &opInfo(OpKind kind) { return kOps[static_cast<int>(kind)]; }

std::optional<OpKind> opNamed(std::string_view name) {
  for (const OpInfo &op : kOps)
    if (op.name == name)
      return op.kind;
  return std::nullopt;
}

bool hasNoGradient(OpKind kind) {
  // stop_gradient is the one op of a gradient-taking family that stops it.
  return kind == OpKind::StopGradient ||
         !kFamilyGradientFlows[static_cast<int>(opInfo(kind).family)];
}

} // namespace foldc
