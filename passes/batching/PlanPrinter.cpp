// Printing a batch plan for `foldc --emit=plan`.
#include "passes/batching/BatchPlan.h"

namespace foldc {

namespace {

std::string operandText(const KernelPlan &k, const PlanOperand &o) {
  switch (o.kind) {
  case PlanOperand::Kind::Op: return "%" + std::to_string(o.index);
  case PlanOperand::Kind::Argument: return "%a" + std::to_string(o.index);
  case PlanOperand::Kind::Host: return "host " + k.hostInputs[size_t(o.index)].source;
  case PlanOperand::Kind::Constant: return o.constant;
  }
  return "?";
}

void printSteps(const std::vector<UnfoldStep> &steps, int depth, std::ostream &out) {
  for (const UnfoldStep &s : steps) {
    out << std::string(size_t(2 * depth), ' ') << s.text << '\n';
    printSteps(s.children, depth + 1, out);
  }
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
    out << "  params:";
    for (const std::string &p : k.params)
      out << ' ' << p;
    out << '\n';
  }
  for (size_t i = 0; i < k.ops.size(); ++i) {
    const PlanOp &op = k.ops[i];
    // Tensors after the name; parameters, ranges, host values and constants in brackets.
    out << "  %" << i << " = " << op.name;
    std::string tensors, others = op.attribute;
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
  for (const auto &[value, role] : k.results)
    out << "  result %" << value << ": " << role << '\n';
  out << "  flops: " << k.flops() << '\n';
}

} // namespace

void printPlan(const BatchPlan &plan, std::ostream &out) {
  for (const KernelPlan &k : plan.kernels)
    printKernel(plan, k, out);
  for (const std::string &name : plan.inlined)
    out << "inlined def " << name << '\n';
  for (const FunctionPlan &f : plan.functions) {
    out << (f.function->isModel() ? "model " : "def ") << f.function->name << '\n';
    printSteps(f.steps, 1, out);
  }
}

} // namespace foldc
