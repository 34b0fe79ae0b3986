// The lowering behind BatchingAnalysis.h: one walk over the typed program
// that builds the kernels and the unfolding steps. Private to passes/; its
// members are defined by node family in BatchingAnalysis.cpp (functions,
// steps, kernels), LowerExprs.cpp, LowerLayers.cpp and LowerCombinators.cpp.
#pragma once

#include "passes/batching/BatchPlan.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace foldc::lowering {

/// A new host expression node (see HostExpr).
HostExprRef hostExpr(HostExpr::Kind kind, std::string text, TypeRef type,
                     std::vector<HostExprRef> operands = {});

/// What lowering knows about a value.
struct AVal {
  enum class Kind { Host, Local, Handle, Tuple, Block, None } kind = Kind::None;
  std::string text; ///< Host: source text; Handle: its name in the steps
  TypeRef type;
  int kernel = -1, value = -1; ///< Local: value `value` of kernel `kernel`
  int stage = 0;               ///< Local, Handle
  std::vector<AVal> elements;  ///< Tuple
  std::shared_ptr<const BlockValue> block;
  bool constant = false; ///< Host: a literal or const, folded into the kernel
  HostExprRef expr;      ///< Host: how unfolding computes it

  bool isTensorLike() const { return kind == Kind::Local || kind == Kind::Handle; }
  static AVal host(std::string text, TypeRef type, HostExprRef expr) {
    AVal v;
    v.kind = Kind::Host;
    v.text = std::move(text);
    v.type = std::move(type);
    v.expr = std::move(expr);
    return v;
  }
  /// A host value named `name` (a parameter, binder, loop element...).
  static AVal named(const std::string &name, const TypeRef &type) {
    return host(name, type, hostExpr(HostExpr::Kind::Name, name, type));
  }
  /// A host value code generation does not handle yet, shown as its source.
  static AVal unsupported(const std::string &source, const TypeRef &type) {
    return host(source, type, hostExpr(HostExpr::Kind::Unsupported, source, type));
  }
  static AVal constantValue(std::string text, TypeRef type) {
    AVal v = host(text, type, hostExpr(HostExpr::Kind::Literal, text, type));
    v.constant = true;
    return v;
  }
  static AVal field(const AVal &base, const std::string &field, const TypeRef &type) {
    return host(base.text + "." + field, type,
                hostExpr(HostExpr::Kind::Field, field, type, {base.expr}));
  }
  static AVal handle(std::string text, TypeRef type, int stage) {
    AVal v;
    v.kind = Kind::Handle;
    v.text = std::move(text);
    v.type = std::move(type);
    v.stage = stage;
    return v;
  }
};

/// An unfolding context: a body, an arm or a block applied by a combinator.
/// Its open kernels are indexed by stage. A kernel is instantiated (its step
/// placed) when a later step first uses one of its values, which also closes
/// it: later work at that stage goes into a new kernel, so every kernel's
/// inputs exist where it is instantiated. The rest are placed at the end.
struct Context {
  Context(std::string n, std::vector<UnfoldStep> *into) : name(std::move(n)), steps(into) {}
  std::string name;
  std::map<int, int> kernelAtStage;
  std::vector<UnfoldStep> *steps;
  int kernelsMade = 0;
  std::vector<int> pending; ///< created, not yet instantiated, in creation order
};

class Lowering {
public:
  explicit Lowering(const TypedProgram &program) : program_(program) {}

  BatchPlan run();

private:
  /// Kernels with the same code and parameters are one batching key.
  void mergeIdenticalKernels();

  // ------------------------------------------------------------ inlining
  bool inlinable(const FunctionDecl &fn);

  /// A parameter of `fn` that takes a block: inlining substitutes the block given.
  bool isBlockParam(const FunctionDecl &fn, const void *binding) const;

  static void forEachChild(const Expr &e, const std::function<void(const Expr &)> &f);

  // ------------------------------------------------------------ functions
  void lowerFunction(const FunctionDecl &fn);

  /// A value that arrives from a structural step; tuples arrive element-wise.
  AVal handleFor(const std::string &name, const TypeRef &type, int stage);

  static UnfoldStep makeStep(UnfoldStep::Kind kind, std::string text, std::string name = "",
                             std::vector<StepValue> values = {});

  /// The context's kernels are placed, then `return value`.
  void returnStep(const AVal &v, Context &ctx);

  void lowerStmt(const Stmt &s, Context &ctx);

  void markResult(const AVal &v, const std::string &role, Context &ctx);

  void bind(const Pattern &p, const AVal &v);

  AVal element(const AVal &v, size_t i);

  /// What a step reads for `v`: a handle, a kernel result (its kernel is
  /// placed first), a host value or a tuple of these.
  StepValue valueOf(const AVal &v);

  /// How the printed plan names a value.
  std::string textOf(const StepValue &v) const;

  /// A local value used outside its kernel becomes one of the kernel's
  /// results, and the kernel is instantiated before that use.
  void materialize(const AVal &v);

  // ------------------------------------------------------------ kernels
  KernelPlan &kernelAt(Context &ctx, int stage, SourceRange range);

  /// Places the instance step of kernel `id` (if not placed yet) and closes it.
  void instantiate(int id);

  /// The end of a context: its remaining kernels are instantiated in order.
  void finish(Context &ctx);

  /// The operand naming `v` inside kernel `k`: an op result, an argument
  /// (added the first time) when it comes from outside, a host input or a constant.
  PlanOperand operandIn(KernelPlan &k, const AVal &v);

  static int indexOf(std::vector<HostInput> &inputs, const AVal &v);

  /// Adds an operation over tensor operands (host operands become host inputs).
  AVal emit(Context &ctx, const std::string &name, const std::vector<AVal> &operands, TypeRef type,
            double flops, SourceRange range, std::string attribute = "");

  /// An op of `k` computing exactly what `op` does (same operation, operands
  /// and attribute), or -1: written twice in the source, computed once.
  /// Dropout is never shared: each use draws its own mask.
  static int sameOp(const KernelPlan &k, const PlanOp &op);

  static int64_t width(const TypeRef &t);

  // ------------------------------------------------------------ expressions
  AVal eval(const Expr &e, Context &ctx);

  static AVal tuple(std::vector<AVal> elements);

  AVal blockValue(const TypeRef &type);

  AVal evalName(const NameExpr &name, const TypeRef &type);

  std::string ownerOf(const ParamDecl *param);

  /// A parameter used as an operand: `linear x, leaf_cell.W`.
  bool isParam(const Expr &e, std::string &name);

  AVal evalBinary(const BinaryExpr &b, const TypeRef &type, Context &ctx);

  AVal evalIndexOrSlice(const Expr &e, const TypeRef &type, Context &ctx);

  /// `lo:hi` of a tensor slice, or the index, with constants folded.
  std::string boundsOf(const Expr &e, const TypeRef &base);

  /// A Structural step `name(values)`, shown as `shown` when given.
  UnfoldStep structuralStep(const std::string &name, const std::vector<AVal> &args, Context &,
                            const std::string &shown = "");

  /// Places a step of the unfolding that yields a value (a call, a
  /// combinator...), naming its value with a new handle.
  AVal structural(Context &ctx, UnfoldStep s, const TypeRef &type, int inputStage);

  int maxStage(const std::vector<AVal> &values);

  AVal evalCall(const CallExpr &call, const TypeRef &type, Context &ctx);

  /// Spreads one tuple argument over several parameters, or packs several into one.
  std::vector<AVal> adapt(std::vector<AVal> args, size_t arity);

  AVal apply(const std::shared_ptr<const BlockValue> &block, std::vector<AVal> args,
             const TypeRef &type, const Expr &site, Context &ctx);

  AVal layer(const LayerDecl &decl, std::vector<AVal> args, const Expr &site, Context &ctx);

  // Recurrent cells are lowered to primitive operations, so they fuse with
  // what surrounds them and get their gradients from the primitives'.
  AVal linearOf(const AVal &x, const std::string &param, int64_t in, int64_t out, Context &ctx,
                SourceRange at);
  AVal sliceOf(const AVal &x, int64_t lo, int64_t hi, Context &ctx, SourceRange at);
  AVal elementwise(const std::string &op, std::vector<AVal> xs, int64_t h, Context &ctx,
                   SourceRange at);

  /// lstm (brief §6): g = x@W + h@U + b; i, f, o, u from its quarters;
  /// c' = i*u + f*c; h' = o*tanh(c'); gives (h', (h', c')).
  AVal lstmCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x, const AVal &state,
                Context &ctx, SourceRange at);

  /// gru (docs/language.md): z, r from x@W + s@U + b; n = tanh(x@W + b +
  /// (r*s)@U) on the last third; s' = n + z*(s - n) = (1-z)*n + z*s; gives (s', s').
  AVal gruCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x, const AVal &s,
               Context &ctx, SourceRange at);

  /// A kernel of one operation over tensor arguments `args` (and host
  /// inputs), which a Sequence step instantiates in its loops.
  int helperKernel(const std::string &name, SourceRange at, const std::string &op,
                   std::vector<TypeRef> args, const TypeRef &type,
                   std::vector<HostInput> hosts = {});

  /// The kernels of `name` across a sequence of `element`s (see UnfoldStep::helpers).
  /// sum, max, min: [combine neighbours, zeros for an empty sequence].
  std::vector<int> sequenceKernels(const std::string &name, const TypeRef &element,
                                   const std::string &context, SourceRange at);

  AVal builtin(const std::string &name, std::vector<AVal> args, const TypeRef &type,
               const Expr &site, Context &ctx);

  /// Arguments of a call computed at unfold time; a list of handles is a
  /// host vector there too.
  static std::vector<HostExprRef> hostOperands(const std::vector<AVal> &args);

  AVal combinator(const std::string &name, std::vector<AVal> args, const TypeRef &type,
                  const Expr &site, Context &ctx);

  /// One arm of a match or branch of an if: its own context, whose value is
  /// given out as `result`.
  UnfoldStep lowerBranch(const std::string &label, const std::string &binder,
                         const std::string &contextName, const Expr &body,
                         const std::string &result);

  /// The value of a match or if. Its stage only groups work: correctness
  /// comes from placing kernels where their values are first used.
  AVal branchResult(const std::string &result, const TypeRef &type);

  AVal evalMatch(const MatchExpr &m, const TypeRef &type, Context &ctx);

  AVal evalIf(const IfExpr &e, const TypeRef &type, Context &ctx);

  const TypedProgram &program_;
  BatchPlan plan_;
  std::map<const FunctionDecl *, bool> inlinable_;
  std::map<const void *, AVal> env_;
  std::map<int, Context *> owner_; ///< kernels not instantiated yet -> their context
  std::vector<std::string> fusing_;
  int handles_ = 0, loops_ = 0;
};

} // namespace foldc::lowering
