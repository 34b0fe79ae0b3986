// Drawing a batch plan for Graphviz: `foldc --emit=dot`.
#include "passes/batching/BatchPlan.h"

#include <set>
#include <sstream>

namespace foldc {

namespace {

/// `text` inside a double-quoted DOT string.
std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// A kernel's box: its name, what it fuses, its parameters and its size; a
/// kernel that shares another's batching key points at it instead.
void drawKernel(const BatchPlan &plan, const KernelPlan &k, std::ostream &out) {
  std::string label = k.name + "\\n";
  if (k.sameAs >= 0) {
    label += "same key as " + plan.kernels[size_t(k.sameAs)].name;
  } else {
    label += std::to_string(k.ops.size()) + " ops, " + std::to_string(int64_t(k.flops())) +
             " FLOPs per instance";
    if (!k.fuses.empty()) {
      label += "\\nfuses:";
      for (const std::string &f : k.fuses)
        label += " " + escaped(f);
    }
    std::set<std::string> keys;
    for (int p : k.params)
      keys.insert(plan.params[size_t(p)].key);
    if (!keys.empty()) {
      label += "\\nparams:";
      for (const std::string &key : keys)
        label += " " + escaped(key);
    }
  }
  out << "  k" << k.id << " [shape=box, style=\"rounded,filled\", fillcolor="
      << (k.helper ? "lightgrey" : "lightblue") << ", label=\"" << label << "\"];\n";
  if (k.sameAs >= 0)
    out << "  k" << k.id << " -> k" << k.sameAs << " [style=dotted, label=\"batched with\"];\n";
}

/// The unfolding steps of one function, as a tree under `parent`; instances
/// point at their kernels and calls at the function they unfold.
class StepDrawer {
public:
  explicit StepDrawer(std::ostream &out) : out_(out) {}

  void draw(const std::vector<UnfoldStep> &steps, const std::string &parent) {
    for (const UnfoldStep &s : steps) {
      std::string id = parent + "_" + std::to_string(next_++);
      out_ << "    " << id << " [shape=plaintext, label=\"" << escaped(s.text) << "\"];\n";
      out_ << "    " << parent << " -> " << id << ";\n";
      if ((s.kind == UnfoldStep::Kind::Instance || s.kind == UnfoldStep::Kind::Segment) &&
          s.kernel >= 0)
        kernelEdges_ << "  " << id << " -> k" << s.kernel << " [style=dashed, color=blue];\n";
      if (s.kind == UnfoldStep::Kind::Sequence)
        for (int h : s.helpers)
          kernelEdges_ << "  " << id << " -> k" << h << " [style=dashed, color=grey];\n";
      if (s.kind == UnfoldStep::Kind::Call && s.function >= 0)
        kernelEdges_ << "  " << id << " -> f" << s.function << " [color=darkgreen];\n";
      draw(s.children, id);
    }
  }

  /// The edges that leave the functions' clusters, drawn after them.
  std::string crossEdges() const { return kernelEdges_.str(); }

private:
  std::ostream &out_;
  int next_ = 0;
  std::ostringstream kernelEdges_;
};

} // namespace

void printPlanDot(const BatchPlan &plan, std::ostream &out) {
  out << "// The batch plan of " << plan.fileName << " (foldc --emit=dot): `dot -Tpng`.\n"
      << "// Blue boxes are kernels, one batched call per depth for each batching key;\n"
      << "// each def and the model is a cluster of its unfolding steps.\n";
  out << "digraph \"" << escaped(plan.modelName) << "\" {\n"
      << "  rankdir=LR;\n  ordering=out;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  StepDrawer steps(out);
  for (size_t i = 0; i < plan.functions.size(); ++i) {
    const FunctionPlan &f = plan.functions[i];
    std::string id = "f" + std::to_string(i);
    out << "  subgraph cluster_" << id << " {\n    label=\"" << (f.isModel ? "model " : "def ")
        << escaped(f.name) << "\";\n";
    out << "    " << id << " [shape=ellipse, style=filled, fillcolor=palegreen, label=\""
        << escaped(f.name) << "\"];\n";
    steps.draw(f.steps, id);
    out << "  }\n";
  }
  for (const KernelPlan &k : plan.kernels)
    drawKernel(plan, k, out);
  out << steps.crossEdges() << "}\n";
}

} // namespace foldc
