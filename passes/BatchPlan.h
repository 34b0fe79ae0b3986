// The batch plan: the kernels (fused regions of tensor computation) and the
// host-side unfolding steps of every def and of the model.
#pragma once

#include "passes/TypedProgram.h"

#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace foldc {

/// One primitive operation inside a kernel. An operand is the result of an
/// earlier op (its index, >= 0) or a kernel argument (argument(i) < 0).
struct PlanOp {
  static int argument(int i) { return -(i + 1); }
  static bool isArgument(int operand) { return operand < 0; }
  static int argumentIndex(int operand) { return -operand - 1; }

  std::string name;              ///< linear, bias_add, add, sigmoid, slice, gather, xent, ...
  std::vector<int> operands;
  std::string attribute;         ///< a parameter name, a slice range, a host input
  TypeRef type;                  ///< of the result
  double flops = 0;
};

/// A fused region: everything it computes runs in one batched call per depth.
struct KernelPlan {
  int id = 0;
  std::string name;                   ///< CONTEXT.N, e.g. tree_lstm.1
  std::vector<std::string> fuses;     ///< defs and layers inlined into it, in order
  SourceRange range;                  ///< the first operation
  std::vector<TypeRef> args;          ///< tensor arguments (values 0..n-1)
  std::vector<std::string> argSources;
  std::vector<std::string> hostInputs; ///< host values read per instance (word ids, labels)
  std::vector<PlanOp> ops;
  std::set<std::string> params;
  /// Op results the kernel gives out, with what they are for ("value",
  /// "loss", "metric NAME", "output").
  std::vector<std::pair<int, std::string>> results;
  /// Another kernel with the same code and parameters (its id), or -1:
  /// instances of both batch together under that kernel.
  int sameAs = -1;

  double flops() const;
  /// What makes two kernels one batching key: operations, parameters,
  /// argument types and the number of host inputs (not their sources).
  std::string identity() const;
};

/// A host-side unfolding step, with nested steps (match arms, loop bodies).
struct UnfoldStep {
  std::string text;
  std::vector<UnfoldStep> children;
};

struct FunctionPlan {
  const FunctionDecl *function = nullptr;
  std::vector<UnfoldStep> steps;
};

struct BatchPlan {
  std::vector<KernelPlan> kernels;
  std::vector<FunctionPlan> functions; ///< the defs not inlined, and the model
  std::vector<std::string> inlined;    ///< defs fused into their callers
};

/// `foldc --emit=plan`: the kernels, then each function's unfolding steps.
void printPlan(const BatchPlan &plan, std::ostream &out);

} // namespace foldc
