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

AxisSplit axisSplit(const TypeRef &tensor, int axis) {
  const std::vector<int64_t> &shape = tensor->shape;
  int rank = int(shape.size());
  if (axis < 0)
    axis = rank - 1;
  if (rank == 0)
    return {1, 1, 1};
  if (axis >= rank)
    return {1, 0, 1};
  AxisSplit split;
  for (int d = 0; d < rank; ++d)
    (d < axis ? split.outer : d == axis ? split.n : split.inner) *= shape[size_t(d)];
  return split;
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
  switch (op) {
  case HostOp::Add:
    return "+";
  case HostOp::Sub:
    return "-";
  case HostOp::Mul:
    return "*";
  case HostOp::Div:
    return "/";
  case HostOp::Eq:
    return "==";
  case HostOp::Ne:
    return "!=";
  case HostOp::Lt:
    return "<";
  case HostOp::Le:
    return "<=";
  case HostOp::Gt:
    return ">";
  case HostOp::Ge:
    return ">=";
  case HostOp::And:
    return "&&";
  case HostOp::Or:
    return "||";
  }
  return "?";
}

std::string roleText(const BatchPlan &plan, ResultRole role, int metric) {
  switch (role) {
  case ResultRole::Value:
    return "value";
  case ResultRole::Loss:
    return "loss";
  case ResultRole::Output:
    return "output";
  case ResultRole::Metric:
    return "metric " + plan.metrics[size_t(metric)];
  }
  return "";
}

std::string_view listOpName(ListOp op) {
  switch (op) {
  case ListOp::List:
    return "list";
  case ListOp::Length:
    return "length";
  case ListOp::Nth:
    return "nth";
  case ListOp::Zip:
    return "zip";
  case ListOp::Ngrams:
    return "ngrams";
  case ListOp::Reverse:
    return "reverse";
  case ListOp::Index:
    return "index";
  case ListOp::Slice:
    return "slice";
  case ListOp::Concat:
    return "concat";
  case ListOp::Range:
    return "range";
  case ListOp::Gather:
    return "gather";
  }
  return "?";
}

std::string_view sequenceKindName(SequenceKind kind) {
  switch (kind) {
  case SequenceKind::Sum:
    return "sum";
  case SequenceKind::Mean:
    return "mean";
  case SequenceKind::Max:
    return "max";
  case SequenceKind::Min:
    return "min";
  case SequenceKind::Softmax:
    return "softmax";
  }
  return "?";
}

size_t helperKernelCount(SequenceKind kind) {
  switch (kind) {
  case SequenceKind::Sum:
    return 2; // add, zeros
  case SequenceKind::Mean:
    return 3; // add, zeros, scale
  case SequenceKind::Max:
    return 2; // maximum, zeros
  case SequenceKind::Min:
    return 2; // minimum, zeros
  case SequenceKind::Softmax:
    return 4; // exp, add, zeros, divide
  }
  return 0;
}

size_t loopLocalCount(CombinatorKind kind) {
  switch (kind) {
  case CombinatorKind::Map:
    return 1; // the element
  case CombinatorKind::Loop:
    return 1; // the state
  case CombinatorKind::ZipWith:
    return 2; // the two elements
  case CombinatorKind::Fold:
  case CombinatorKind::Rnn:
    return 2; // the state, the element
  case CombinatorKind::Reduce:
    return 2; // the two values combined
  case CombinatorKind::Beam:
    return 2; // the state, the last token
  }
  return 0;
}

} // namespace foldc

namespace foldc {

static bool waits(const UnfoldStep &step, const BatchPlan &plan) {
  if (step.kind == UnfoldStep::Kind::Read ||
      (step.kind == UnfoldStep::Kind::Combinator && step.combinator == CombinatorKind::Beam))
    return true;
  if (step.kind == UnfoldStep::Kind::Call && plan.functions[size_t(step.function)].suspends)
    return true;
  for (const UnfoldStep &child : step.children)
    if (waits(child, plan))
      return true;
  return false;
}

void markSuspendingFunctions(BatchPlan &plan) {
  // A fixpoint over the call graph: a caller of a waiting function waits.
  for (bool changed = true; changed;) {
    changed = false;
    for (FunctionPlan &f : plan.functions) {
      if (f.suspends)
        continue;
      for (const UnfoldStep &s : f.steps)
        if (waits(s, plan)) {
          f.suspends = changed = true;
          break;
        }
    }
  }
}

} // namespace foldc
