// What kernels and plans compute about themselves: FLOPs, batching keys, widths.
#include "passes/batching/BatchPlan.h"

#include <stdexcept>

namespace foldc {

int64_t widthOf(const TypeRef &tensor) {
  int64_t n = 1;
  for (int64_t d : tensor->shape)
    n *= d;
  return n;
}

double KernelPlan::flops() const {
  double total = 0;
  for (const PlanOp &op : ops)
    total += op.flops;
  return total;
}

KernelKey KernelPlan::key() const {
  KernelKey key;
  for (const TypeRef &a : args)
    key.args.push_back(a->shape);
  // Host sources differ per call site; their types and widths do not.
  for (const HostInput &h : hostInputs)
    key.hostInputs.push_back({h.isInt(), h.width});
  for (const PlanOp &op : ops)
    key.ops.push_back({op.kind, op.operands, op.attrs, op.type->element, op.type->shape});
  key.results = results;
  return key;
}

int KernelPlan::valueResult(int op) const {
  for (size_t j = 0; j < results.size(); ++j)
    if (results[j].op == op && results[j].role == ResultRole::Value)
      return int(j);
  return -1;
}

const PlanDataType &BatchPlan::dataType(const Type &type) const {
  for (const PlanDataType &d : dataTypes)
    if (d.decl == type.data)
      return d;
  throw std::logic_error("internal: a data type outside the plan");
}

std::string_view spelling(HostOp op) {
  static constexpr std::string_view ops[] = {"+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">="};
  return ops[int(op)];
}

std::string_view listOpName(ListOp op) {
  static constexpr std::string_view names[] = {"list", "length", "nth", "zip",
                                                "ngrams", "index", "slice"};
  return names[int(op)];
}

} // namespace foldc
