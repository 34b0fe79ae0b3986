// Printing a batch plan for `foldc --emit=plan`.
#include "passes/batching/BatchPlan.h"

#include <set>
#include <sstream>

namespace foldc {

namespace {

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string operandText(const KernelPlan &k, const PlanOperand &o) {
  switch (o.kind) {
  case PlanOperand::Kind::Op:
    return "%" + std::to_string(o.index);
  case PlanOperand::Kind::Argument:
    return "%a" + std::to_string(o.index);
  case PlanOperand::Kind::Host:
    return "host " + k.hostInputs[size_t(o.index)].source;
  case PlanOperand::Kind::Constant:
    return number(o.constant);
  }
  return "?";
}

/// The attribute of `op` as printed: a parameter, a range, an axis (when not
/// the last) or a rate.
std::string attributeText(const BatchPlan &plan, const PlanOp &op) {
  switch (opInfo(op.kind).attr) {
  case OpAttr::None:
    return "";
  case OpAttr::Param: {
    std::string key = op.attrs.param >= 0 ? plan.params[size_t(op.attrs.param)].key : "?";
    if (op.attrs.hi > 0) // a block of columns: x @ W[:, lo:hi]
      key += "[:, " + std::to_string(op.attrs.lo) + ":" + std::to_string(op.attrs.hi) + "]";
    return key;
  }
  case OpAttr::Range:
    return std::to_string(op.attrs.lo) + ":" + std::to_string(op.attrs.hi) +
           (op.attrs.axis >= 0 ? " axis " + std::to_string(op.attrs.axis) : "");
  case OpAttr::Axis:
    return op.attrs.axis >= 0 ? "axis " + std::to_string(op.attrs.axis) : "";
  case OpAttr::Rate:
    return "rate " + number(op.attrs.rate);
  }
  return "";
}

void printSteps(const std::vector<UnfoldStep> &steps, int depth, std::ostream &out) {
  for (const UnfoldStep &s : steps) {
    out << std::string(size_t(2 * depth), ' ') << s.text << '\n';
    printSteps(s.children, depth + 1, out);
  }
}

std::string roleText(const BatchPlan &plan, const KernelResult &r) {
  return roleText(plan, r.role, r.metric);
}

void printKernel(const BatchPlan &plan, const KernelPlan &k, std::ostream &out) {
  out << "kernel " << k.name << " <" << k.range.begin.line << ':' << k.range.begin.column << ">";
  if (k.sameAs >= 0) {
    out << " = " << plan.kernels[size_t(k.sameAs)].name << " (same code and parameters)\n";
    return;
  }
  out << '\n';
  if (!k.fuses.empty()) {
    out << "  fuses:";
    for (const std::string &f : k.fuses)
      out << ' ' << f;
    out << '\n';
  }
  for (size_t i = 0; i < k.args.size(); ++i)
    out << "  arg %a" << i << ": " << toString(k.args[i]) << " = " << k.argSources[i] << '\n';
  for (const HostInput &h : k.hostInputs)
    out << "  host " << h.source << ": " << toString(h.type) << '\n';
  if (!k.params.empty()) {
    std::set<std::string>
        keys; // by name, so the listing reads the same whatever the order of declarations
    for (int p : k.params)
      keys.insert(plan.params[size_t(p)].key);
    out << "  params:";
    for (const std::string &key : keys)
      out << ' ' << key;
    out << '\n';
  }
  for (size_t i = 0; i < k.ops.size(); ++i) {
    const PlanOp &op = k.ops[i];
    // Tensors after the name; attributes, host values and constants in brackets.
    out << "  %" << i << " = " << opInfo(op.kind).name;
    std::string tensors, others = attributeText(plan, op);
    for (const PlanOperand &o : op.operands) {
      std::string &list = o.isTensor() ? tensors : others;
      list += (list.empty() ? "" : ", ") + operandText(k, o);
    }
    if (!tensors.empty())
      out << ' ' << tensors;
    if (!others.empty())
      out << " [" << others << ']';
    out << " : " << toString(op.type) << '\n';
  }
  for (const KernelResult &r : k.results)
    out << "  result %" << r.op << ": " << roleText(plan, r) << '\n';
  out << "  flops: " << k.flops() << '\n';
}

} // namespace

void printPlan(const BatchPlan &plan, std::ostream &out) {
  for (const KernelPlan &k : plan.kernels)
    printKernel(plan, k, out);
  for (const std::string &name : plan.inlined)
    out << "inlined def " << name << '\n';
  for (const FunctionPlan &f : plan.functions) {
    out << (f.isModel ? "model " : "def ") << f.name << '\n';
    printSteps(f.steps, 1, out);
  }
}

} // namespace foldc
