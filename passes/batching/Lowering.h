// The lowering behind LowerToPlan.h: one walk over the typed program
// that builds the kernels and the unfolding steps. Private to
// passes/batching/; its members are defined by node family in
// LowerModule.cpp (module, functions, steps, kernels), LowerExprs.cpp,
// LowerLayers.cpp and LowerCombinators.cpp.
#pragma once

#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "passes/batching/BatchPlan.h"
#include "passes/sema/TypedProgram.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace foldc::lowering {

/// How many characters of an expression's source a plan shows. Lowering
/// names each host value by its source at every level of an expression, so
/// whole texts made a chain n deep cost n^2 (and their printing n^3).
inline constexpr size_t kShownSourceChars = 160;
/// The source of `e` as plans show it: cut after kShownSourceChars.
inline std::string sourceText(const Expr &e) { return toSource(e, kShownSourceChars); }
/// Whether two host values of these texts are the same value: the same
/// whole source (an abbreviated text is not enough).
inline bool sameSource(const std::string &a, const std::string &b) {
  return a.size() <= kShownSourceChars && a == b;
}

/// A new host expression node of `kind` (see HostExpr); fill the rest in place.
std::shared_ptr<HostExpr> hostExpr(HostExpr::Kind kind, TypeRef type,
                                   std::vector<HostExprRef> operands = {});

/// What lowering knows about a value of the source: a host value, a kernel
/// result (Local), a handle of unfolding, a parameter not read yet (Param), a
/// tuple or block of them, or none.
struct LoweredValue {
  enum class Kind { Host, Local, Handle, Param, Tuple, Block, None } kind = Kind::None;
  std::string text; ///< for people: the source, or the handle's name in the plan
  TypeRef type;
  int kernel = -1, value = -1;        ///< Local: value `value` of kernel `kernel`
  int stage = 0;                      ///< Local, Handle
  std::vector<LoweredValue> elements; ///< Tuple
  std::shared_ptr<const BlockValue> block;
  bool constant = false; ///< Host: a number known at compile time, folded into kernels
  double number = 0;     ///< its value
  HostExprRef expr;      ///< Host: how unfolding computes it
  foldc::Handle handle;  ///< Handle
  /// Param: the parameter's index in the plan, and where it was named. A
  /// parameter passed as a value (to an inlined def, in a tuple) stays
  /// unread until used: the right operand of a product or a sum reads it in
  /// place (`linear`, `bias_add`, one GEMM against the packed weight); any
  /// other use reads it (`read`, materialized).
  int param = -1;
  /// Param: the columns [columnsLo, columnsHi) of a matrix parameter, for a
  /// slice `W[:, a:b]` (columnsHi 0: all of them).
  int64_t columnsLo = 0, columnsHi = 0;
  /// Param chosen on the host (`if c { W1 } else { W2 }`; `param` is -1):
  /// the condition, then the parameter of each branch. A use of it is that
  /// use in each branch, so a product stays one GEMM per branch.
  std::shared_ptr<const std::vector<LoweredValue>> choice;
  SourceRange range;

  bool isTensorLike() const { return kind == Kind::Local || kind == Kind::Handle; }
  static LoweredValue host(std::string text, TypeRef type, HostExprRef expr) {
    LoweredValue v;
    v.kind = Kind::Host;
    v.text = std::move(text);
    v.type = std::move(type);
    v.expr = std::move(expr);
    return v;
  }
  /// A value already reported as an error: lowering goes on without it.
  static LoweredValue none(TypeRef type) {
    LoweredValue v;
    v.type = std::move(type);
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
  Lowering(const TypedProgram &program, DiagnosticEngine &diag) : program_(program), diag_(diag) {}

  BatchPlan run();

private:
  // ------------------------------------------------------------ module
  void collectDataTypes();
  void collectParams();
  int paramIndex(const std::string &key) const;
  int metricIndex(const std::string &name);
  /// The model's example and output types; what codegen cannot give a model is reported here.
  void checkModel(const FunctionDecl &model);

  /// Kernels with the same key are one batching key.
  void mergeIdenticalKernels();

  /// "not supported yet", located at the construct: tier 2 of the diagnostics.
  LoweredValue notSupported(SourceRange at, const std::string &what, const TypeRef &type);

  // ------------------------------------------------------------ inlining
  bool inlinable(const FunctionDecl &fn);
  /// Whether `fn` calls `target`, directly or through other defs.
  bool calls(const FunctionDecl &fn, const FunctionDecl &target,
             std::set<const FunctionDecl *> &seen) const;

  /// A parameter of `fn` that takes a block: inlining substitutes the block given.
  bool isBlockParam(const FunctionDecl &fn, const void *binding) const;

  static void forEachSubexpression(const Expr &e, const std::function<void(const Expr &)> &f);
  /// `f` of each top-level expression of `fn`'s body.
  static void forEachBodyExpression(const FunctionDecl &fn,
                                    const std::function<void(const Expr &)> &f);
  /// The expression a let, return, loss, output or metric statement computes.
  static const Expr *valueOf(const Stmt &s);

  // ------------------------------------------------------------ functions
  void lowerFunction(const FunctionDecl &fn);
  int functionIndex(const FunctionDecl &fn);

  /// A new local of the function being lowered. Step results are shown as
  /// `%N` (N counting them), loop variables as `shown`, the rest by name.
  int newLocal(PlanLocal::Kind kind, const TypeRef &type, const std::string &sourceName = "",
               const std::string &shown = "");
  const std::string &shown(int local) const { return function_->locals[size_t(local)].shown; }

  /// The value held in `handle`: tuples holding tensors arrive element-wise,
  /// host values as host expressions, tensors as handles.
  LoweredValue fromHandle(foldc::Handle handle, const std::string &text, const TypeRef &type,
                          int stage);

  static UnfoldStep makeStep(UnfoldStep::Kind kind, std::string text,
                             std::vector<StepValue> values = {});

  /// The context's kernels are placed, then `return value`.
  void returnStep(const LoweredValue &returned, SourceRange at, Context &ctx);
  /// `v` as a value of type `declared`: a host number where an f32 is
  /// declared (`-> f32 { ... return 0.0; }`, a metric) becomes a kernel value.
  LoweredValue asDeclared(const LoweredValue &v, const TypeRef &declared, SourceRange at,
                          Context &ctx);

  void lowerStmt(const Stmt &s, Context &ctx);

  void markResult(LoweredValue v, ResultRole role, int metric, Context &ctx, SourceRange at);

  void bind(const Pattern &p, const LoweredValue &v);

  LoweredValue element(const LoweredValue &v, size_t i);

  /// What a step reads for `v`: a handle, a kernel result (its kernel is
  /// placed first), a host value or a tuple of these.
  StepValue valueOf(const LoweredValue &v);

  /// A local value used outside its kernel becomes one of the kernel's
  /// results, and the kernel is instantiated before that use.
  void materialize(const LoweredValue &v);

  // ------------------------------------------------------------ kernels
  KernelPlan &kernelAt(Context &ctx, int stage, SourceRange range);

  /// Places the instance step of kernel `id` (if not placed yet) and closes it.
  void instantiate(int id);

  /// The end of a context: its remaining kernels are instantiated in order.
  void finish(Context &ctx);

  /// The operand naming `v` inside kernel `k`: an op result, an argument
  /// (added the first time) when it comes from outside, a host input or a constant.
  PlanOperand operandIn(KernelPlan &k, const LoweredValue &v);

  static int indexOf(std::vector<HostInput> &inputs, const LoweredValue &v);

  /// Adds an operation over tensor operands (host operands become host
  /// inputs, compile-time numbers constants).
  LoweredValue emit(Context &ctx, OpKind kind, const std::vector<LoweredValue> &operands,
                    TypeRef type, SourceRange range, OpAttrs attrs = {});
  /// An op reading parameter `key` (Gather, Linear, BiasAdd, Read).
  LoweredValue emitWithParam(Context &ctx, OpKind kind, const std::vector<LoweredValue> &operands,
                             TypeRef type, SourceRange range, const std::string &key);

  /// The index of `op` in `k`: of an op already there that computes
  /// exactly what `op` does (same operation, operands, attributes and type),
  /// or of `op` added. Written twice in the source, computed once; dropout is
  /// never shared (each use draws its own mask).
  int addOrReuseOp(KernelPlan &k, PlanOp op);

  // ------------------------------------------------------------ expressions
  /// The value of `e`, every parameter in it read (materialized).
  LoweredValue eval(const Expr &e, Context &ctx) { return materialized(evalLazy(e, ctx), ctx); }
  /// The value of `e`, a parameter left unread (LoweredValue::Kind::Param).
  LoweredValue evalLazy(const Expr &e, Context &ctx);
  /// `v` with every parameter in it read into `ctx`'s stage-0 kernel.
  LoweredValue materialized(const LoweredValue &v, Context &ctx);
  std::vector<LoweredValue> materialized(std::vector<LoweredValue> values, Context &ctx);

  static LoweredValue tuple(std::vector<LoweredValue> elements);

  LoweredValue blockValue(const TypeRef &type);

  LoweredValue constant(const std::string &text, const ConstValue &value, const TypeRef &type);
  LoweredValue literal(const Expr &e, const TypeRef &type);

  LoweredValue evalName(const NameExpr &name, const TypeRef &type);

  std::string ownerOf(const ParamDecl *param);

  /// A parameter named by `e`: its key (`W`, `cell.W`), or empty.
  std::string paramKey(const Expr &e);

  LoweredValue evalBinary(const BinaryExpr &b, const TypeRef &type, Context &ctx);

  LoweredValue evalIndexOrSlice(const Expr &e, const TypeRef &type, Context &ctx);

  /// [lo, hi) of a tensor slice, or of the index, with constants folded.
  /// The Slice ops of a tensor's subscripts (AxisRange: what sema found they select).
  LoweredValue sliceTensor(LoweredValue value, const std::vector<AxisRange> &ranges, Context &ctx,
                           SourceRange at);
  /// segment_sum/mean/max: a Segment step over a variadic helper kernel.
  LoweredValue segment(OpKind op, const std::vector<LoweredValue> &args, const TypeRef &type,
                       const Expr &site, Context &ctx);
  /// The axis a builtin call works along: its `axis:` as sema resolved it,
  /// or -1 for the last axis of `tensor` (written or not).
  int axisOfCall(const Expr &site, const TypeRef &tensor) const;
  /// OpAttrs::axis for axis `axis` of a tensor of rank `rank`: -1 for the
  /// last, so that ops on a vector's only axis print and key as before.
  static int planAxis(int axis, size_t rank) { return axis + 1 == int(rank) ? -1 : axis; }

  /// A Structural step computing `op` of `args`, shown as `shown` when given.
  UnfoldStep structuralStep(ListOp op, const std::vector<LoweredValue> &args,
                            const std::string &shown = "");

  /// Places a step of the unfolding that yields a value (a call, a
  /// combinator...), naming its value with a new local.
  LoweredValue structural(Context &ctx, UnfoldStep s, const TypeRef &type, int inputStage);

  int maxStage(const std::vector<LoweredValue> &values);

  LoweredValue evalCall(const CallExpr &call, const TypeRef &type, Context &ctx);

  /// Spreads one tuple argument over several parameters, or packs several into one.
  std::vector<LoweredValue> adapt(std::vector<LoweredValue> args, size_t arity);

  LoweredValue apply(const std::shared_ptr<const BlockValue> &block, std::vector<LoweredValue> args,
                     const TypeRef &type, const Expr &site, Context &ctx);

  /// The type of `base.field` (for accessor blocks applied inside a composition).
  TypeRef typeOfField(const TypeRef &base, const std::string &field) const;

  /// Whether `e` is a constant expression whose value is 0.
  bool isZeroConstant(const Expr &e) const;

  LoweredValue layer(const LayerDecl &decl, std::vector<LoweredValue> args, const Expr &site,
                     Context &ctx);

  /// A kernel of one operation over tensor arguments `args` (and host
  /// inputs), which a Sequence step's runtime loops instantiate.
  int helperKernel(const std::string &name, SourceRange at, OpKind op, std::vector<TypeRef> args,
                   const TypeRef &type, std::vector<HostInput> hosts = {});

  /// The kernels of `kind` across a sequence of `element`s (see UnfoldStep::helpers).
  std::vector<int> sequenceKernels(SequenceKind kind, const TypeRef &element,
                                   const std::string &context, SourceRange at);

  /// A call of a builtin: a kernel op, a step across a sequence, a list
  /// operation or a loop.
  LoweredValue builtin(Builtin builtin, std::vector<LoweredValue> args, const TypeRef &type,
                       const Expr &site, Context &ctx);
  LoweredValue tensorFunction(Builtin builtin, std::vector<LoweredValue> args, const TypeRef &type,
                              const Expr &site, Context &ctx);
  /// length, nth, zip, ngrams: on the host when the result is host data,
  /// otherwise a structural step.
  LoweredValue listOperation(ListOp op, Builtin builtin, std::vector<LoweredValue> args,
                             const TypeRef &type, Context &ctx);

  /// Arguments of a call computed at unfold time; a list of handles is a
  /// host vector there too.
  static std::vector<HostExprRef> hostOperands(const std::vector<LoweredValue> &args);

  /// The result type of a def or lambda given to loop or beam (errorType for other blocks).
  TypeRef stepResultType(const BlockValue &block) const;
  static std::string commaSeparatedTexts(const std::vector<StepValue> &values);

  /// map, zip_with, fold, rnn, reduce, loop, beam: an unfolding loop over the block's body.
  LoweredValue loop(CombinatorKind combinator, Builtin builtin, std::vector<LoweredValue> args,
                    const TypeRef &type, const Expr &site, Context &ctx);

  /// One arm of a match or branch of an if: its own context, whose value is
  /// given out as `result`.
  UnfoldStep lowerBranch(UnfoldStep arm, const std::string &contextName,
                         const std::function<LoweredValue(Context &)> &body, int result);
  /// `if cond { then(ctx) } else { otherwise(ctx) }`, its branches in contexts of their own.
  LoweredValue hostIf(const LoweredValue &cond, const std::string &text, const TypeRef &type,
                      SourceRange at, Context &ctx,
                      const std::function<LoweredValue(Context &)> &then,
                      const std::function<LoweredValue(Context &)> &otherwise);
  LoweredValue withParam(const BinaryExpr &b, const LoweredValue &lhs, const LoweredValue &param,
                         const TypeRef &type, Context &ctx);
  LoweredValue binary(const BinaryExpr &b, LoweredValue lhs, LoweredValue rhs, const TypeRef &type,
                      Context &ctx);
  /// The parameter `e` names without computing anything (a name, a tuple
  /// element, columns of one), if it names one.
  std::optional<LoweredValue> paramOf(const Expr &e, Context &ctx);
  /// `use` of a parameter value, in each branch of a host choice between parameters.
  LoweredValue useEach(const LoweredValue &param, const TypeRef &type, SourceRange at, Context &ctx,
                       const std::function<LoweredValue(const LoweredValue &, Context &)> &use);

  /// The value of a match or if. Its stage only groups work: correctness
  /// comes from placing kernels where their values are first used.
  LoweredValue branchResult(int result, const TypeRef &type);

  LoweredValue evalMatch(const MatchExpr &m, const TypeRef &type, Context &ctx);

  LoweredValue evalIf(const IfExpr &e, const TypeRef &type, Context &ctx);

  // ------------------------------------------------------------ decisions
  /// A computed scalar read as a host number (`int` for i32, `float` for
  /// f32) by a Read step, where unfolding waits for the executor.
  LoweredValue readScalar(const LoweredValue &v, const std::string &text, Context &ctx,
                          SourceRange at);
  /// A condition as a host bool: a computed scalar is read and tested for != 0.
  LoweredValue asCondition(const LoweredValue &v, const std::string &text, Context &ctx,
                           SourceRange at);

  const TypedProgram &program_;
  DiagnosticEngine &diag_;
  BatchPlan plan_;
  std::map<const FunctionDecl *, bool> inlinable_;
  std::map<const FunctionDecl *, int> functionIndex_;
  std::map<const void *, LoweredValue> env_;
  std::map<int, Context *> owner_; ///< kernels not instantiated yet -> their context
  std::vector<std::string> fusing_;
  /// Inside an instance of a prelude layer (fc, lstm, gru): where it is used.
  /// Its ops carry that range, not one in a file the user never wrote.
  std::optional<SourceRange> preludeUse_;
  /// What an op computes, but for its type: the ops of each kernel by it,
  /// for addOrReuseOp (scanning a kernel's ops made a chain of n cost n^2).
  struct OpKey {
    int kernel;
    OpKind kind;
    OpAttrs attrs;
    std::vector<PlanOperand> operands;
    auto operator<=>(const OpKey &) const = default;
  };
  std::map<OpKey, std::vector<int>> opsByKey_;
  FunctionPlan *function_ = nullptr; ///< the function being lowered
  int loops_ = 0;                    ///< combinators lowered in it, for context names
  SourceRange firstOutput_;
};

} // namespace foldc::lowering
