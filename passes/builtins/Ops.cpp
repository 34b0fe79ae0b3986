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

} // namespace

const OpInfo &opInfo(OpKind kind) { return kOps[static_cast<int>(kind)]; }

std::optional<OpKind> opNamed(std::string_view name) {
  for (const OpInfo &op : kOps)
    if (op.name == name)
      return op.kind;
  return std::nullopt;
}

bool hasNoGradient(OpKind kind) {
  if (kind == OpKind::StopGradient)
    return true;
  switch (opInfo(kind).family) {
  case OpFamily::Compare:
  case OpFamily::Argmax:
  case OpFamily::TopKIndices:
  case OpFamily::OneHot:
  case OpFamily::Fill:
  case OpFamily::FromHost:
    return true;
  default:
    return false;
  }
}

} // namespace foldc
