// The type checker's internal interface, shared by its three source files:
// TypeCheckDecls.cpp (declarations, statements), TypeCheckExprs.cpp
// (expressions, blocks) and TypeCheckBuiltins.cpp (builtins, combinators).
#pragma once

#include "passes/builtins/Builtins.h"
#include "passes/sema/TypeCheck.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace foldc {

class TypeChecker {
public:
  TypeChecker(TypedProgram &program, DiagnosticEngine &diag);
  void run();

  /// An argument as checked: its type, and its expression when it has one
  /// (combinators apply blocks to element types that have no expression).
  struct Arg {
    TypeRef type;
    const Expr *expr = nullptr;
    SourceRange range;
  };

private:
  // --- declarations and statements (TypeCheckDecls.cpp)
  TypeRef resolveType(const TypeExpr &type);
  TypeRef resolveTypeUncached(const TypeExpr &type);
  TypeRef fieldType(const FieldDecl &field);
  TypeRef signatureOf(const FunctionDecl &fn, SourceRange use);
  void checkFunction(const FunctionDecl &fn);
  void checkLayer(const LayerDecl &layer);
  std::optional<std::pair<const Expr *, const Expr *>>
  layerSizes(const LayerKindInfo &ctor, const CallExpr &call,
             const std::vector<const Expr *> &positional);
  bool layerSignature(LayerInfo &info, const Expr *option);
  bool checkTrainingOption(const Argument &arg, Option option, TrainingOptions &training);
  void checkInstanceOptions(const FunctionDecl &fn);
  ParamInfo checkParam(const ParamDecl &param);
  /// Reads `zeros`, `uniform(a, b)`, ... for a param of `paramType` into
  /// `result`; leaves it as it is after an error.
  void checkInitializer(const Expr &init, const TypeRef &paramType, Initializer &result);
  // --- what name resolution found (TypeCheckExprs.cpp): tables' rows, never names
  /// The callable builtin `call` calls directly, if any.
  std::optional<Builtin> calledBuiltin(const CallExpr &call) const;
  /// The option a named argument names, if it names one.
  std::optional<Option> optionOf(const Argument &arg) const;
  /// The row of `table` that `name` resolved to, if it resolved to one.
  std::optional<BuiltinName> rowOf(const NameExpr *name, BuiltinName::Table table) const;
  struct FunctionContext {
    const FunctionDecl *fn;
    TypeRef declaredResult;       ///< null when not written
    TypeRef result;               ///< what `return` gave
    const Stmt *output = nullptr; ///< the model's `output`, once seen
  };
  void checkStmt(const Stmt &stmt, FunctionContext &context, bool isLast);
  /// Checks a returned value against the written result, noting where it is written.
  void expectResult(const FunctionContext &context, const TypeRef &type, const Expr &value);
  void bindPattern(const Pattern &pattern, const TypeRef &type);
  void checkRecursion();

  // --- expressions and blocks (TypeCheckExprs.cpp)
public:
  TypeRef check(const Expr &expr);

private:
  TypeRef checkUncached(const Expr &expr);
  TypeRef checkName(const NameExpr &name);
  TypeRef checkMember(const TypeRef &base, const Selector &selector, SourceRange range);
  TypeRef checkCall(const CallExpr &call);
  TypeRef checkIndex(const IndexExpr &index);
  TypeRef checkSlice(const SliceExpr &slice);
  TypeRef checkSubscripts(const SubscriptsExpr &subscripts);
  /// One subscript as written: an index, or a range's bounds (either null).
  struct SubscriptView {
    const Expr *index = nullptr, *lo = nullptr, *hi = nullptr;
    SourceRange range;
  };
  /// Subscripts of a tensor, one per axis from the first: the result type;
  /// records what they select (TypedProgram::tensorSubscripts).
  TypeRef checkTensorSubscripts(const Expr &whole, const TypeRef &base,
                                const std::vector<SubscriptView> &subscripts);
  /// A constant int bound or index of a tensor subscript, checked to lie in [min, max].
  std::optional<int64_t> subscriptBound(const Expr &bound, int64_t min, int64_t max,
                                        const char *what);
  TypeRef checkNeg(const NegExpr &neg);
  TypeRef checkNot(const NotExpr &notExpr);
  TypeRef checkBinary(const BinaryExpr &binary);
  TypeRef checkPipe(const PipeExpr &pipe);
  TypeRef checkList(const ListExpr &list);
  TypeRef checkMatch(const MatchExpr &match);
  TypeRef checkIf(const IfExpr &ifExpr);
  TypeRef unifyBranches(const std::vector<std::pair<TypeRef, SourceRange>> &branches,
                        const char *what);

public:
  TypeRef makeBlock(std::shared_ptr<BlockValue> value, TypeRef signature);
  /// Applies a block-typed value to arguments; reports when it is not a block.
  TypeRef apply(const TypeRef &block, std::vector<Arg> args, SourceRange range);
  TypeRef applyValue(const BlockValue &value, std::vector<Arg> args, SourceRange range);
  /// Checks `args` against a known signature, adapting between one tuple
  /// argument and several arguments; lifts host numbers to scalar tensors.
  TypeRef applySignature(const TypeRef &signature, std::vector<Arg> args, SourceRange range,
                         const std::string &what,
                         const std::function<void(size_t)> &noteParameter = {});
  /// Matches n arguments to `arity` parameters (packing or unpacking a tuple).
  std::optional<std::vector<Arg>> adaptArity(std::vector<Arg> args, size_t arity, SourceRange range,
                                             const std::string &what);
  /// True when `actual` can be passed where `expected` is wanted (equal, or a
  /// host number lifted to a scalar tensor). Reports otherwise.
  /// A block without a signature (a lambda) passed for a block parameter:
  /// its body checked at the parameter's types; false (reported) on a mismatch.
  bool checkBlockArgument(const TypeRef &expected, const Arg &actual, const std::string &context);
  bool expectType(const TypeRef &expected, const Arg &actual, const std::string &context = "");
  bool accepts(const TypeRef &expected, const TypeRef &actual) const;
  void structuralError(SourceRange range, const std::string &what, const TypeRef &found);

  // --- builtins (TypeCheckBuiltins.cpp)
  /// `axis` is the `axis:` argument of a direct call, when written.
  TypeRef checkBuiltinCall(Builtin builtin, std::vector<Arg> args, SourceRange range,
                           const Arg *axis = nullptr);
  /// The axis `axis:` names in a tensor of rank `rank` (negative counts from
  /// the end), or the last when not given; recorded in TypedProgram::callAxes.
  std::optional<int> axisOf(const Arg *axis, size_t rank, const std::string &what);

private:
  TypeRef checkElementwise(const BuiltinInfo &info, const Arg &arg);
  TypeRef checkReduction(const BuiltinInfo &info, const Arg &arg, const Arg *axis);
  TypeRef checkSoftmax(const BuiltinInfo &info, const Arg &arg, const Arg *axis);
  TypeRef checkDot(const std::vector<Arg> &args, SourceRange range);
  TypeRef checkConcat(const std::vector<Arg> &args, const Arg *axis);
  TypeRef checkArgmax(const Arg &arg, const Arg *axis);
  /// transpose(f32[a, b]) -> f32[b, a].
  TypeRef checkTranspose(const Arg &arg);
  /// outer(f32[a], f32[b]) -> f32[a, b].
  TypeRef checkOuter(const std::vector<Arg> &args);
  /// reshape(x, d...) with constant dims of x's element count.
  TypeRef checkReshape(const std::vector<Arg> &args);
  /// A list `list` of `element`s is a host [int] (segment ids, indices), or a
  /// located error naming `what`.
  bool expectHostInts(const Arg &list, const TypeRef &element, const std::string &what);
  /// segment_sum/mean/max([f32[...]], [int], int) -> [f32[...]].
  TypeRef checkSegment(const BuiltinInfo &info, const std::vector<Arg> &args);
  /// range(int) -> [int].
  TypeRef checkRange(const Arg &arg);
  /// gather([X], [int]) -> [X].
  TypeRef checkGather(const std::vector<Arg> &args);
  /// top_k(k, x: f32[n]) -> (f32[k], i32[k]), constant k <= n.
  TypeRef checkTopK(const std::vector<Arg> &args);
  TypeRef checkOneHot(const std::vector<Arg> &args);
  TypeRef checkFill(const std::vector<Arg> &args);
  TypeRef checkDropout(const std::vector<Arg> &args);
  TypeRef checkXent(const std::vector<Arg> &args);
  TypeRef checkEqualShapeLoss(const BuiltinInfo &info, const std::vector<Arg> &args);
  TypeRef checkTensor(const Arg &arg);
  TypeRef checkVector(const std::vector<Arg> &args);
  bool isPartialApplication(Builtin combinator, const std::vector<Arg> &args) const;
  TypeRef partialApplication(Builtin combinator, const std::vector<Arg> &args);
  TypeRef checkNth(const std::vector<Arg> &args);
  /// item(x): a computed scalar read as a host number.
  TypeRef checkItem(const Arg &arg);
  /// loop(step, init, max): step: S -> (go, Y, S); gives ([Y], S).
  TypeRef checkLoop(std::vector<Arg> &args);
  /// beam(step, init, start, end, width, max): step: (S, int) -> (f32[V], S); gives [int].
  TypeRef checkBeam(std::vector<Arg> &args);
  /// A host int argument of a decision builtin (a bound, a width, a token).
  bool expectHostInt(const Arg &arg, const std::string &what);
  TypeRef checkNgrams(const std::vector<Arg> &args);
  TypeRef checkBlockCombinator(Builtin combinator, std::vector<Arg> &args);
  std::optional<TypeRef> asTensor(const Arg &arg, const char *what, bool requireFloat = true);
  std::optional<long long> constInt(const Arg &arg, const char *what);
  std::optional<TypeRef> listElement(const Arg &arg, const std::string &what);
  bool expectArgCount(const BuiltinInfo &info, const std::vector<Arg> &args, SourceRange range);

  TypedProgram &program_;
  const ResolvedNames &names_;
  const ConstTable &consts_;
  DiagnosticEngine &diag_;

  enum class State { Unchecked, InProgress, Done };
  std::map<const FunctionDecl *, State> fnState_;
  std::unordered_map<const TypeExpr *, TypeRef> resolvedTypes_; ///< each written type once
  std::vector<const FunctionDecl *> fnStack_;
  /// A call from one def to another, for the recursion rule.
  struct CallEdge {
    const FunctionDecl *caller, *callee;
    SourceRange range;
    bool passesHostData;
  };
  std::vector<CallEdge> calls_;
};

} // namespace foldc
