// The batch plan: the typed IR between lowering and code
// generation. It holds everything codegen reads (no AST, no TypedProgram):
// the data types, the parameters, the kernels (fused regions of tensor
// computation, one batched call per depth) and the host-side unfolding steps
// of every function. PlanVerifier.h checks it before any emitter sees it.
#pragma once

#include "frontend/SourceManager.h"
#include "passes/builtins/Builtins.h"
#include "passes/sema/Type.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace foldc {

// ------------------------------------------------------------------ module

/// A field of a data type or variant.
struct PlanField {
  std::string name;
  TypeRef type;
};

/// A `data` declaration: a record (one variant named like the type) or a union.
struct PlanDataType {
  const DataDecl *decl = nullptr; ///< the identity Type::data holds
  std::string name;
  bool isRecord = true;
  struct Variant {
    std::string name;
    std::vector<PlanField> fields;
  };
  std::vector<Variant> variants;
};

/// A trained parameter: a `param` (global, or `DEF.NAME` in a def) or a
/// layer's `LAYER.W`; `key` is its name in checkpoints.
struct PlanParam {
  std::string key;
  std::vector<int64_t> shape;
  Initializer init;
  bool sparseRows = false;      ///< an embedding table: only the rows used get gradients
  bool trainable = true;        ///< its layer's (or layer instance's) `trainable:`
  double learningRateScale = 1; ///< its layer's (or layer instance's) `lr_scale:`
};

/// An imported C++ header, included by generated code.
struct PlanImport {
  std::string header;
};

// ------------------------------------------------------------------ kernels

/// What an operation reads: the result of an earlier op of the kernel, a
/// kernel argument (a tensor from outside), a host input of the instance
/// (word id, label, lifted number), or a constant folded into the code.
struct PlanOperand {
  enum class Kind { Op, Argument, Host, Constant };
  Kind kind = Kind::Op;
  int index = 0;       ///< Op: op index; Argument: argument index; Host: host input index
  double constant = 0; ///< Constant
  bool isTensor() const { return kind == Kind::Op || kind == Kind::Argument; }
  auto operator<=>(const PlanOperand &) const = default;
};

/// An op's typed attribute (which one an op has: Ops.def's Attr column).
struct OpAttrs {
  int param = -1;         ///< Param: index in BatchPlan::params
  int64_t lo = 0, hi = 0; ///< Range: [lo, hi) of the operand's axis `axis`; Linear:
                          ///< the columns [lo, hi) of its parameter when hi > 0
  int axis = -1;          ///< Range, Axis: of the (first) operand; -1 the last
  double rate = 0;        ///< Rate: dropout's probability of dropping
  auto operator<=>(const OpAttrs &) const = default;
};

/// One primitive operation inside a kernel.
struct PlanOp {
  OpKind kind = OpKind::Add;
  std::vector<PlanOperand> operands; ///< in the order of the source expression
  OpAttrs attrs;
  TypeRef type; ///< of the result
  SourceRange range;
  double flops = 0;
};

/// What a kernel result is for.
enum class ResultRole { Value, Loss, Metric, Output };

struct KernelResult {
  int op = 0;
  ResultRole role = ResultRole::Value;
  int metric = -1; ///< Metric: index in BatchPlan::metrics
  auto operator<=>(const KernelResult &) const = default;
};

struct HostExpr;
using HostExprRef = std::shared_ptr<const HostExpr>;

/// A host value each instance of a kernel reads. `width` floats a row: a
/// list read by `vector` gives as many as its result has, others one.
struct HostInput {
  std::string source; ///< for people (`--emit=plan`)
  TypeRef type;
  HostExprRef expr;
  int width = 1;
  bool isInt() const { return type->kind == TypeKind::Int || type->kind == TypeKind::Bool; }
};

struct StepValue;

/// What makes two kernels one batching key: their typed ops, parameters,
/// argument and host input types, and results (not where their inputs come from).
struct KernelKey {
  struct Op {
    OpKind kind;
    std::vector<PlanOperand> operands;
    OpAttrs attrs;
    ElementType element;
    std::vector<int64_t> shape;
    auto operator<=>(const Op &) const = default;
  };
  std::vector<std::vector<int64_t>> args;
  std::vector<std::pair<bool, int>> hostInputs; ///< (integral, width)
  std::vector<Op> ops;
  std::vector<KernelResult> results;
  auto operator<=>(const KernelKey &) const = default;
};

/// A fused region: everything it computes runs in one batched call per depth.
struct KernelPlan {
  int id = 0;
  std::string name;                    ///< CONTEXT.N, e.g. tree_lstm.1
  std::vector<std::string> fuses;      ///< defs and layers inlined into it, in order
  SourceRange range;                   ///< the first operation
  std::vector<TypeRef> args;           ///< tensor arguments (values 0..n-1)
  std::vector<std::string> argSources; ///< for people
  std::vector<StepValue> argValues;    ///< what each argument is, for code generation
  std::vector<HostInput> hostInputs;   ///< host values read per instance (word ids, labels)
  std::vector<PlanOp> ops;
  std::set<int> params;              ///< indexes in BatchPlan::params
  std::vector<KernelResult> results; ///< op results the kernel gives out
  /// Another kernel with the same key (its id), or -1: instances of both
  /// batch together under that kernel.
  int sameAs = -1;
  /// Instantiated by the runtime's loops of a Sequence step, which gives its
  /// host inputs (no HostInput::expr), not by an Instance step.
  bool helper = false;

  double flops() const;
  KernelKey key() const;
  /// Index of the result giving op `op` with role Value, or -1.
  int valueResult(int op) const;
};

// ------------------------------------------------------------------ unfolding

/// A name the unfolding gives a value: a function parameter, a match
/// binder, the element or state a loop body receives, or a step's result.
/// Codegen names it through its naming layer.
struct PlanLocal {
  enum class Kind { Parameter, Binder, LoopVariable, StepResult };
  Kind kind = Kind::StepResult;
  std::string sourceName; ///< Parameter, Binder: as written
  TypeRef type;
  std::string shown; ///< for people: `t`, `%3`, `%3.x`
};

/// A local, or an element of a tuple held in one: `std::get<path...>`.
struct Handle {
  int local = -1;
  std::vector<int> path;
};

/// Builtins that unfolding computes on lists.
enum class ListOp { List, Length, Nth, Zip, Ngrams, Reverse, Index, Slice, Concat, Range, Gather };
/// Host arithmetic and comparisons.
enum class HostOp { Add, Sub, Mul, Div, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
std::string_view spelling(HostOp op);
std::string_view listOpName(ListOp op);
struct BatchPlan;
/// A result's role as the plan prints it: `value`, `loss`, `output`, `metric NAME`.
std::string roleText(const BatchPlan &plan, ResultRole role, int metric);

/// A host value as unfolding computes it.
struct HostExpr {
  enum class Kind {
    Local,    ///< handle
    Field,    ///< field `field` of operands[0]
    Element,  ///< element `integer` of the tuple operands[0]
    Literal,  ///< `literal`
    List,     ///< a list of operands
    Binary,   ///< operands[0] hostOp operands[1]
    Call,     ///< listOp of operands
    HostCall, ///< the imported C++ function `function` (qualified name) of operands
  };
  Kind kind = Kind::Literal;
  TypeRef type;
  Handle handle;
  std::string field;
  /// Literal: ints and bools in `integer`, floats in `number`, strings in `text`.
  int64_t integer = 0;
  double number = 0;
  std::string text;
  HostOp hostOp = HostOp::Add;
  ListOp listOp = ListOp::List;
  std::string function;
  std::vector<HostExprRef> operands;
};

/// A value an unfolding step reads or gives: a handle, a kernel instance's
/// result, a host value, or a tuple of these.
struct StepValue {
  enum class Kind { Handle, KernelResult, Host, Tuple };
  Kind kind = Kind::Handle;
  Handle handle;                   ///< Handle
  int kernel = -1, op = -1;        ///< KernelResult: the kernel and the op whose result it is
  HostExprRef host;                ///< Host
  std::vector<StepValue> elements; ///< Tuple
  TypeRef type;
  std::string text; ///< for people
};

/// Loop and Beam decide on computed values: their unfolding waits for them.
enum class CombinatorKind { Map, ZipWith, Fold, Rnn, Reduce, Loop, Beam };
enum class SequenceKind { Sum, Mean, Max, Min, Softmax };
/// The builtin's name: `sum`, ..., `softmax`.
std::string_view sequenceKindName(SequenceKind kind);
/// How many helper kernels a Sequence step of `kind` instantiates (sequenceKernels).
size_t helperKernelCount(SequenceKind kind);
/// How many locals the body of a Combinator step of `kind` binds each time.
size_t loopLocalCount(CombinatorKind kind);

/// A host-side unfolding step, with nested steps (match arms, loop bodies).
struct UnfoldStep {
  enum class Kind {
    Instance,   ///< records an instance of `kernel`
    Call,       ///< target = function `function`(values)
    Combinator, ///< target = `combinator` over values; `loopLocals` get each
                ///< element (and state); children: the body, ending in Yield
    Yield,      ///< the body's value for one element: values[0]
    Sequence,   ///< target = `sequence` across a list values[0], over `helpers`
    Segment,    ///< target = one instance of the variadic `kernel` per segment
                ///< [0, values[2]) of the list values[0], by the ids values[1]
    Structural, ///< target = `listOp` of values
    Match,      ///< on host values[0]; children: Arms; assigns target
    Arm,        ///< a variant (`variant`), Some/None, or the default; `binder` gets the payload
    If,         ///< on host values[0]; children: the Arms then and else
    Assign,     ///< target = values[0] (an arm's value)
    Return,     ///< values[0]
    Role,       ///< values[0] is a loss, the output or metric `metric`
    Read,       ///< target = the host number computed scalar values[0] holds:
                ///< unfolding waits until the executor has computed it
  };
  enum class ArmKind { Variant, Some, None, Default, Then, Else };

  Kind kind = Kind::Structural;
  std::string text; ///< for people: `foldc --emit=plan`
  SourceRange range;
  int target = -1;   ///< the local this step defines
  TypeRef type;      ///< of target
  int kernel = -1;   ///< Instance
  int function = -1; ///< Call: index in BatchPlan::functions
  CombinatorKind combinator = CombinatorKind::Map;
  /// Combinator: map x; zip_with x, y; fold state, x; rnn x, state; reduce
  /// a, b; loop state; beam state, token. Values: loop [init, max]; beam
  /// [init, start, end, width, max]; the others their list arguments.
  std::vector<int> loopLocals;
  SequenceKind sequence = SequenceKind::Sum;
  /// Sequence: the kernels its loops instantiate: sum [add, zeros]; max, min
  /// [maximum or minimum, zeros]; mean [add, zeros, divide by n]; softmax
  /// [exp, add, zeros, divide].
  std::vector<int> helpers;
  ListOp listOp = ListOp::List;
  ArmKind arm = ArmKind::Default;
  int variant = -1; ///< Arm of a union: the variant's index
  int binder = -1;  ///< Arm: the local bound to the payload, or -1
  ResultRole role = ResultRole::Value;
  int metric = -1; ///< Role Metric
  std::vector<StepValue> values;
  std::vector<UnfoldStep> children;
};

/// A def that is not inlined, or the model.
struct FunctionPlan {
  std::string name;
  bool isModel = false;
  SourceRange range;
  std::vector<int> params; ///< locals
  TypeRef result;          ///< defs
  std::vector<PlanLocal> locals;
  std::vector<UnfoldStep> steps;
  /// Its unfolding waits on computed values (a Read, a loop, a beam, or a
  /// call of such a function): a coroutine, run interleaved with execution.
  bool suspends = false;
};

/// Marks every function whose unfolding waits on computed values.
void markSuspendingFunctions(BatchPlan &plan);

struct BatchPlan {
  std::string fileName;  ///< the .fold file
  std::string modelName; ///< the model's, or the file's stem without one
  std::vector<PlanImport> imports;
  std::vector<PlanDataType> dataTypes;
  std::vector<PlanParam> params;
  std::vector<std::string> metrics;
  std::vector<KernelPlan> kernels;
  std::vector<FunctionPlan> functions; ///< the defs not inlined, and the model
  std::vector<std::string> inlined;    ///< defs fused into their callers
  int model = -1;                      ///< index in functions
  TypeRef exampleType, outputType;     ///< the model's

  const PlanDataType &dataType(const Type &type) const;
  const FunctionPlan *modelFunction() const {
    return model < 0 ? nullptr : &functions[size_t(model)];
  }
};

/// The number of floats of a tensor type.
int64_t widthOf(const TypeRef &tensor);

/// A tensor seen along one axis as [outer, n, inner]: outer the product of
/// the dimensions before it, n its own, inner the product of those after.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
  /// The last axis of a vector (or a scalar): a plain row.
  bool isRow() const { return outer == 1 && inner == 1; }
};
/// `tensor` along `axis` (-1: the last); n = 0 when it has no such axis.
AxisSplit axisSplit(const TypeRef &tensor, int axis);

/// `foldc --emit=plan`: the kernels, then each function's unfolding steps.
void printPlan(const BatchPlan &plan, std::ostream &out);
/// The plan as a Graphviz digraph: kernels (with their batching keys), and
/// each function's unfolding steps pointing at the kernels they instantiate.
void printPlanDot(const BatchPlan &plan, std::ostream &out);

} // namespace foldc
