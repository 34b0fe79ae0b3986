// Printing a batch plan for `foldc --emit=plan`.
#include "passes/BatchPlan.h"

namespace foldc {

namespace {

std::string operandText(int operand) {
  return PlanOp::isArgument(operand) ? "%a" + std::to_string(PlanOp::argumentIndex(operand))
                                     : "%" + std::to_string(operand);
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
  for (const std::string &h : k.hostInputs)
    out << "  host " << h << '\n';
  if (!k.params.empty()) {
    out << "  params:";
    for (const std::string &p : k.params)
      out << ' ' << p;
    out << '\n';
  }
  for (size_t i = 0; i < k.ops.size(); ++i) {
    const PlanOp &op = k.ops[i];
    out << "  %" << i << " = " << op.name;
    for (size_t j = 0; j < op.operands.size(); ++j)
      out << (j ? ", " : " ") << operandText(op.operands[j]);
    if (!op.attribute.empty())
      out << (op.operands.empty() ? " " : " ") << '[' << op.attribute << ']';
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
