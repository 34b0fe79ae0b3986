// The batch plan: the kernels (fused regions of tensor computation) and the
// host-side unfolding steps of every def and of the model.
#pragma once

#include "passes/TypedProgram.h"

#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace foldc {

/// What an operation reads: the result of an earlier op of the kernel, a
/// kernel argument (a tensor from outside), a host input of the instance
/// (word id, label, lifted number), or a constant folded into the code.
struct PlanOperand {
  enum class Kind { Op, Argument, Host, Constant };
  Kind kind = Kind::Op;
  int index = 0;        ///< Op: op index; Argument: argument index; Host: host input index
  std::string constant; ///< Constant: as written (after const folding)
  bool isTensor() const { return kind == Kind::Op || kind == Kind::Argument; }
};

/// One primitive operation inside a kernel.
struct PlanOp {
  std::string name;                  ///< linear, bias_add, add, sigmoid, slice, gather, xent, ...
  std::vector<PlanOperand> operands; ///< in the order of the source expression
  std::string attribute;             ///< a parameter name or a slice range
  TypeRef type;                      ///< of the result
  double flops = 0;
};

/// A host value each instance of a kernel reads, and its type.
struct HostInput {
  std::string source;
  TypeRef type;
};

/// A fused region: everything it computes runs in one batched call per depth.
struct KernelPlan {
  int id = 0;
  std::string name;                   ///< CONTEXT.N, e.g. tree_lstm.1
  std::vector<std::string> fuses;     ///< defs and layers inlined into it, in order
  SourceRange range;                  ///< the first operation
  std::vector<TypeRef> args;          ///< tensor arguments (values 0..n-1)
  std::vector<std::string> argSources;
  std::vector<HostInput> hostInputs; ///< host values read per instance (word ids, labels)
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
