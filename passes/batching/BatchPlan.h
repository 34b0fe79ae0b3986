// The batch plan: the kernels (fused regions of tensor computation) and the
// host-side unfolding steps of every def and of the model.
#pragma once

#include "passes/sema/TypedProgram.h"

#include <memory>
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

/// A host value as unfolding computes it: what code generation translates.
struct HostExpr;
using HostExprRef = std::shared_ptr<const HostExpr>;
struct HostExpr {
  enum class Kind {
    Name,        ///< a parameter, match binder, loop element or step result: `text`
    Field,       ///< field `text` of operands[0]
    Literal,     ///< a literal or folded const, as written
    List,        ///< a list of operands
    Binary,      ///< operands[0] `text` operands[1] (host arithmetic, comparisons)
    Call,        ///< builtin `text` (length, nth, zip, ngrams) of operands
    HostCall,    ///< the imported C++ function `text` (qualified name) of operands
    Unsupported, ///< not generated yet: `text` is the source
  };
  Kind kind = Kind::Unsupported;
  std::string text;
  TypeRef type;
  std::vector<HostExprRef> operands;
};

/// A host value each instance of a kernel reads, and its type.
struct HostInput {
  std::string source;
  TypeRef type;
  HostExprRef expr;
};

/// A value an unfolding step reads or gives: a handle (a name the steps give
/// a value: `%3`, `%3.x`, a parameter; `.0` suffixes select tuple elements),
/// a kernel instance's result, a host value, or a tuple of these.
struct StepValue {
  enum class Kind { Handle, KernelResult, Host, Tuple };
  Kind kind = Kind::Handle;
  std::string name;         ///< Handle
  int kernel = -1, op = -1; ///< KernelResult: the kernel and the op whose result it is
  HostExprRef host;         ///< Host
  std::vector<StepValue> elements; ///< Tuple
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
  std::vector<StepValue> argValues;   ///< what each argument is, for code generation
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
  enum class Kind {
    Instance,   ///< records an instance of `kernel`
    Call,       ///< target = def `name`(values)
    Combinator, ///< target = combinator `name` over values; children: the body
    Yield,      ///< the body's value for one element: values[0]
    Sequence,   ///< target = builtin `name` across a list (sum, mean, softmax): values[0]
    Structural, ///< target = `name` (list, index, slice, length, nth, zip, ngrams) of values
    Match,      ///< on host values[0]; children: Arms
    Arm,        ///< constructor `name` ("_": default) binding `binder`
    If,         ///< on host values[0]; children: Arms "then" and "else"
    Assign,     ///< target = values[0] (an arm's value)
    Return,     ///< values[0]
    Role,       ///< `name` is loss, output or "metric NAME" of values[0]
  };
  Kind kind = Kind::Structural;
  std::string text;   ///< for people: `foldc --emit=plan`
  std::string name;
  std::string target; ///< the handle this step defines
  std::string binder; ///< Arm
  TypeRef type;       ///< of target
  int kernel = -1;    ///< Instance
  /// Sequence: the kernels its loops instantiate: sum [add, zeros]; max, min
  /// [maximum or minimum, zeros]; mean [add, zeros, divide by n]; softmax
  /// [exp, add, zeros, divide].
  std::vector<int> helpers;
  std::vector<StepValue> values;
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
