// foldc's abstract syntax tree: what the parser builds and every pass reads.
//
// Nodes are built once by the parser and never changed afterwards: passes take
// `const` nodes and keep their results in side tables keyed by node address.
// Each family (types, expressions, patterns, statements, declarations) has a
// kind enum and LLVM-style `classof`, so `dyn_cast<CallExpr>(expr)` works.
#pragma once

#include "frontend/ElementType.h"
#include "frontend/SourceManager.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace foldc {

/// LLVM-style checked casts over the node families below.
template <typename To, typename From> bool isa(const From *node) {
  return node && To::classof(node);
}
template <typename To, typename From> const To *dyn_cast(const From *node) {
  return isa<To>(node) ? static_cast<const To *>(node) : nullptr;
}

/// The base of every node: a kind tag and the source range it came from.
template <typename KindT> class Node {
public:
  using Kind = KindT;
  virtual ~Node() = default;
  Kind kind() const { return kind_; }
  SourceRange range() const { return range_; }
  SourceLocation loc() const { return range_.begin; }

protected:
  Node(Kind kind, SourceRange range) : kind_(kind), range_(range) {}

private:
  Kind kind_;
  SourceRange range_;
};

#define FOLDC_NODE(Base, Name)                                                                     \
  static bool classof(const Base *node) { return node->kind() == Base::Kind::Name; }

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

//===----------------------------------------------------------------- Types
enum class TypeExprKind { HostScalar, Tensor, Tuple, List, Optional, Block, Record, Named };

/// A type as written in the source (resolution happens in passes/).
struct TypeExpr : Node<TypeExprKind> {
  using Node::Node;
};
using TypeExprPtr = std::unique_ptr<TypeExpr>;

enum class HostScalar { Int, Float, Bool, String };

struct HostScalarTypeExpr : TypeExpr {
  HostScalarTypeExpr(SourceRange r, HostScalar s) : TypeExpr(Kind::HostScalar, r), scalar(s) {}
  FOLDC_NODE(TypeExpr, HostScalar)
  HostScalar scalar;
};

/// `f32[d1, ..., dk]`, `i32[...]`, or `f32` alone (a scalar).
struct TensorTypeExpr : TypeExpr {
  TensorTypeExpr(SourceRange r, ElementType e, std::vector<ExprPtr> d);
  ~TensorTypeExpr() override;
  FOLDC_NODE(TypeExpr, Tensor)
  ElementType element;
  std::vector<ExprPtr> dims;
};

struct TupleTypeExpr : TypeExpr {
  TupleTypeExpr(SourceRange r, std::vector<TypeExprPtr> e)
      : TypeExpr(Kind::Tuple, r), elements(std::move(e)) {}
  FOLDC_NODE(TypeExpr, Tuple)
  std::vector<TypeExprPtr> elements;
};

struct ListTypeExpr : TypeExpr {
  ListTypeExpr(SourceRange r, TypeExprPtr e) : TypeExpr(Kind::List, r), element(std::move(e)) {}
  FOLDC_NODE(TypeExpr, List)
  TypeExprPtr element;
};

struct OptionalTypeExpr : TypeExpr {
  OptionalTypeExpr(SourceRange r, TypeExprPtr e)
      : TypeExpr(Kind::Optional, r), element(std::move(e)) {}
  FOLDC_NODE(TypeExpr, Optional)
  TypeExprPtr element;
};

/// `A -> B`: a block (function) type.
struct BlockTypeExpr : TypeExpr {
  BlockTypeExpr(SourceRange r, TypeExprPtr a, TypeExprPtr b)
      : TypeExpr(Kind::Block, r), input(std::move(a)), output(std::move(b)) {}
  FOLDC_NODE(TypeExpr, Block)
  TypeExprPtr input, output;
};

/// `name: type` inside a record or variant.
struct FieldDecl {
  SourceRange range;
  std::string name;
  TypeExprPtr type;
};

struct RecordTypeExpr : TypeExpr {
  RecordTypeExpr(SourceRange r, std::vector<FieldDecl> f)
      : TypeExpr(Kind::Record, r), fields(std::move(f)) {}
  FOLDC_NODE(TypeExpr, Record)
  std::vector<FieldDecl> fields;
};

/// A `data` type by name.
struct NamedTypeExpr : TypeExpr {
  NamedTypeExpr(SourceRange r, std::string n) : TypeExpr(Kind::Named, r), name(std::move(n)) {}
  FOLDC_NODE(TypeExpr, Named)
  std::string name;
};

//===------------------------------------------------------------- Patterns
enum class PatternKind { Name, Wildcard, Tuple };

/// The left side of `let` and lambda parameters: names, `_` and tuples.
struct Pattern : Node<PatternKind> {
  using Node::Node;
};
using PatternPtr = std::unique_ptr<Pattern>;

struct NamePattern : Pattern {
  NamePattern(SourceRange r, std::string n) : Pattern(Kind::Name, r), name(std::move(n)) {}
  FOLDC_NODE(Pattern, Name)
  std::string name;
};

struct WildcardPattern : Pattern {
  explicit WildcardPattern(SourceRange r) : Pattern(Kind::Wildcard, r) {}
  FOLDC_NODE(Pattern, Wildcard)
};

struct TuplePattern : Pattern {
  TuplePattern(SourceRange r, std::vector<PatternPtr> e)
      : Pattern(Kind::Tuple, r), elements(std::move(e)) {}
  FOLDC_NODE(Pattern, Tuple)
  std::vector<PatternPtr> elements;
};

//===---------------------------------------------------------- Expressions
enum class ExprKind {
  IntLit,
  FloatLit,
  StringLit,
  BoolLit,
  Name,
  Accessor,
  Member,
  Call,
  Index,
  Slice,
  Subscripts,
  Neg,
  Not,
  Binary,
  Pipe,
  Arrow,
  Lambda,
  Tuple,
  List,
  Match,
  If
};

struct Expr : Node<ExprKind> {
  using Node::Node;
};

struct IntLitExpr : Expr {
  IntLitExpr(SourceRange r, long long v) : Expr(Kind::IntLit, r), value(v) {}
  FOLDC_NODE(Expr, IntLit)
  long long value;
};

struct FloatLitExpr : Expr {
  FloatLitExpr(SourceRange r, double v, std::string s)
      : Expr(Kind::FloatLit, r), value(v), spelling(std::move(s)) {}
  FOLDC_NODE(Expr, FloatLit)
  double value;
  std::string spelling; ///< as written, for dumps and generated code
};

struct StringLitExpr : Expr {
  StringLitExpr(SourceRange r, std::string v) : Expr(Kind::StringLit, r), value(std::move(v)) {}
  FOLDC_NODE(Expr, StringLit)
  std::string value; ///< with escapes resolved
};

struct BoolLitExpr : Expr {
  BoolLitExpr(SourceRange r, bool v) : Expr(Kind::BoolLit, r), value(v) {}
  FOLDC_NODE(Expr, BoolLit)
  bool value;
};

struct NameExpr : Expr {
  NameExpr(SourceRange r, std::string n) : Expr(Kind::Name, r), name(std::move(n)) {}
  FOLDC_NODE(Expr, Name)
  std::string name;
};

/// Selects a record field (`name`) or a tuple element (`index`).
struct Selector {
  std::string field;
  std::optional<unsigned> index;
  bool isIndex() const { return index.has_value(); }
};

/// `.f` or `.0` on its own: a block that selects from its argument.
struct AccessorExpr : Expr {
  AccessorExpr(SourceRange r, Selector s) : Expr(Kind::Accessor, r), selector(std::move(s)) {}
  FOLDC_NODE(Expr, Accessor)
  Selector selector;
};

/// `base.f` or `base.0`.
struct MemberExpr : Expr {
  MemberExpr(SourceRange r, ExprPtr b, Selector s)
      : Expr(Kind::Member, r), base(std::move(b)), selector(std::move(s)) {}
  FOLDC_NODE(Expr, Member)
  ExprPtr base;
  Selector selector;
};

/// One argument of a call; `name` is set for `act: tanh`.
struct Argument {
  SourceRange range;
  std::string name;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(SourceRange r, ExprPtr c, std::vector<Argument> a)
      : Expr(Kind::Call, r), callee(std::move(c)), args(std::move(a)) {}
  FOLDC_NODE(Expr, Call)
  ExprPtr callee;
  std::vector<Argument> args;
};

/// `base[i]`: the first axis of a tensor, or an element of a list.
struct IndexExpr : Expr {
  IndexExpr(SourceRange r, ExprPtr b, ExprPtr i)
      : Expr(Kind::Index, r), base(std::move(b)), index(std::move(i)) {}
  FOLDC_NODE(Expr, Index)
  ExprPtr base, index;
};

/// `base[lo:hi]`; either bound may be omitted.
struct SliceExpr : Expr {
  SliceExpr(SourceRange r, ExprPtr b, ExprPtr l, ExprPtr h)
      : Expr(Kind::Slice, r), base(std::move(b)), lo(std::move(l)), hi(std::move(h)) {}
  FOLDC_NODE(Expr, Slice)
  ExprPtr base, lo, hi;
};

/// One axis of `base[i, a:b]`: an index, or a range (`lo`, `hi` may be null).
struct Subscript {
  SourceRange range;
  ExprPtr index; ///< null for a range
  ExprPtr lo, hi;
  bool isRange() const { return !index; }
};

/// `base[s0, s1, ...]`: two or more subscripts of a tensor, one per axis
/// from the first.
struct SubscriptsExpr : Expr {
  SubscriptsExpr(SourceRange r, ExprPtr b, std::vector<Subscript> s)
      : Expr(Kind::Subscripts, r), base(std::move(b)), subscripts(std::move(s)) {}
  FOLDC_NODE(Expr, Subscripts)
  ExprPtr base;
  std::vector<Subscript> subscripts;
};

struct NegExpr : Expr {
  NegExpr(SourceRange r, ExprPtr o) : Expr(Kind::Neg, r), operand(std::move(o)) {}
  FOLDC_NODE(Expr, Neg)
  ExprPtr operand;
};

/// `!operand`: the negation of a bool.
struct NotExpr : Expr {
  NotExpr(SourceRange r, ExprPtr o) : Expr(Kind::Not, r), operand(std::move(o)) {}
  FOLDC_NODE(Expr, Not)
  ExprPtr operand;
};

enum class BinaryOp { Add, Sub, Mul, Div, MatMul, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
const char *spelling(BinaryOp op);
/// `== != < <= > >=`: a bool of two numbers (or of two bools or strings for == and !=).
bool isComparison(BinaryOp op);
/// `&&` and `||`: a bool of two bools.
bool isLogical(BinaryOp op);

struct BinaryExpr : Expr {
  BinaryExpr(SourceRange r, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(Kind::Binary, r), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
  FOLDC_NODE(Expr, Binary)
  BinaryOp op;
  ExprPtr lhs, rhs;
};

/// `lhs >> rhs`: application or composition, decided by types.
struct PipeExpr : Expr {
  PipeExpr(SourceRange r, ExprPtr a, ExprPtr b)
      : Expr(Kind::Pipe, r), lhs(std::move(a)), rhs(std::move(b)) {}
  FOLDC_NODE(Expr, Pipe)
  ExprPtr lhs, rhs;
};

/// `in -> out`, only as a layer argument (`fc(D -> H)`).
struct ArrowExpr : Expr {
  ArrowExpr(SourceRange r, ExprPtr a, ExprPtr b)
      : Expr(Kind::Arrow, r), from(std::move(a)), to(std::move(b)) {}
  FOLDC_NODE(Expr, Arrow)
  ExprPtr from, to;
};

struct LambdaExpr : Expr {
  LambdaExpr(SourceRange r, std::vector<PatternPtr> p, ExprPtr b)
      : Expr(Kind::Lambda, r), params(std::move(p)), body(std::move(b)) {}
  FOLDC_NODE(Expr, Lambda)
  std::vector<PatternPtr> params;
  ExprPtr body;
};

struct TupleExpr : Expr {
  TupleExpr(SourceRange r, std::vector<ExprPtr> e) : Expr(Kind::Tuple, r), elements(std::move(e)) {}
  FOLDC_NODE(Expr, Tuple)
  std::vector<ExprPtr> elements;
};

struct ListExpr : Expr {
  ListExpr(SourceRange r, std::vector<ExprPtr> e) : Expr(Kind::List, r), elements(std::move(e)) {}
  FOLDC_NODE(Expr, List)
  std::vector<ExprPtr> elements;
};

/// One arm of `match`: `Ctor binder => body`, or `_ => body` (ctor empty).
/// `Some x` and `None` are arms on optionals.
struct MatchArm {
  SourceRange range;
  SourceRange patternRange;
  std::string ctor;   ///< variant name, "Some", "None"; empty for `_`
  std::string binder; ///< empty when nothing is bound (or `_`)
  ExprPtr body;
  bool isDefault() const { return ctor.empty(); }
};

struct MatchExpr : Expr {
  MatchExpr(SourceRange r, ExprPtr s, std::vector<MatchArm> a)
      : Expr(Kind::Match, r), scrutinee(std::move(s)), arms(std::move(a)) {}
  FOLDC_NODE(Expr, Match)
  ExprPtr scrutinee;
  std::vector<MatchArm> arms;
};

struct IfExpr : Expr {
  IfExpr(SourceRange r, ExprPtr c, ExprPtr t, ExprPtr e)
      : Expr(Kind::If, r), cond(std::move(c)), thenExpr(std::move(t)), elseExpr(std::move(e)) {}
  FOLDC_NODE(Expr, If)
  ExprPtr cond, thenExpr, elseExpr;
};

//===----------------------------------------------------------- Statements
enum class StmtKind { Let, Return, Loss, Metric, Output, Param, Layer };

struct Stmt : Node<StmtKind> {
  using Node::Node;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct LetStmt : Stmt {
  LetStmt(SourceRange r, PatternPtr p, ExprPtr v)
      : Stmt(Kind::Let, r), pattern(std::move(p)), value(std::move(v)) {}
  FOLDC_NODE(Stmt, Let)
  PatternPtr pattern;
  ExprPtr value;
};

/// `return e;`, `loss e;` and `output e;` share this shape.
struct ValueStmt : Stmt {
  ValueStmt(Kind k, SourceRange r, ExprPtr v) : Stmt(k, r), value(std::move(v)) {}
  static bool classof(const Stmt *s) {
    return s->kind() == Kind::Return || s->kind() == Kind::Loss || s->kind() == Kind::Output;
  }
  ExprPtr value;
};

struct MetricStmt : Stmt {
  MetricStmt(SourceRange r, std::string n, SourceRange nr, ExprPtr v)
      : Stmt(Kind::Metric, r), name(std::move(n)), nameRange(nr), value(std::move(v)) {}
  FOLDC_NODE(Stmt, Metric)
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

/// `param NAME: TYPE = init;` at top level or inside a def.
struct ParamDecl {
  SourceRange range;
  SourceRange nameRange;
  std::string name;
  TypeExprPtr type;
  ExprPtr init; ///< null: the default initialiser for the rank
};

struct ParamStmt : Stmt {
  ParamStmt(SourceRange r, ParamDecl p) : Stmt(Kind::Param, r), param(std::move(p)) {}
  FOLDC_NODE(Stmt, Param)
  ParamDecl param;
};

/// `layer NAME = constructor;` inside a layer definition: an instance the
/// layer is made of (instantiation turns it into a declaration of its own).
struct LayerStmt : Stmt {
  LayerStmt(SourceRange r, std::string n, SourceRange nr, ExprPtr c)
      : Stmt(Kind::Layer, r), name(std::move(n)), nameRange(nr), constructor(std::move(c)) {}
  FOLDC_NODE(Stmt, Layer)
  std::string name;
  SourceRange nameRange;
  ExprPtr constructor;
};

//===--------------------------------------------------------- Declarations
enum class DeclKind { Import, Const, Data, Param, Layer, LayerDef, Def, Model };

struct Decl : Node<DeclKind> {
  Decl(Kind k, SourceRange r, std::string n, SourceRange nr)
      : Node(k, r), name(std::move(n)), nameRange(nr) {}
  std::string name; ///< the declared name (the path for an import)
  SourceRange nameRange;
};
using DeclPtr = std::unique_ptr<Decl>;

struct ImportDecl : Decl {
  using Decl::Decl;
  FOLDC_NODE(Decl, Import)
};

/// What a const must hold: any constant, or (a layer's constant) an int or a float.
enum class ConstKind { Any, Int, Float };

struct ConstDecl : Decl {
  ConstDecl(SourceRange r, std::string n, SourceRange nr, ExprPtr v)
      : Decl(Kind::Const, r, std::move(n), nr), value(std::move(v)) {}
  FOLDC_NODE(Decl, Const)
  ExprPtr value;
  ConstKind required = ConstKind::Any;
  SourceRange requiredAt; ///< where `required` is written (a layer definition's constant)
};

/// One variant of a union; a record is a data type with one unnamed variant.
struct VariantDecl {
  SourceRange range;
  std::string name;
  std::vector<FieldDecl> fields;
};

struct DataDecl : Decl {
  DataDecl(SourceRange r, std::string n, SourceRange nr, bool rec, std::vector<VariantDecl> v)
      : Decl(Kind::Data, r, std::move(n), nr), isRecord(rec), variants(std::move(v)) {}
  FOLDC_NODE(Decl, Data)
  bool isRecord; ///< `data X = { ... }`: exactly one variant, named like the type
  std::vector<VariantDecl> variants;
};

struct GlobalParamDecl : Decl {
  explicit GlobalParamDecl(ParamDecl p)
      : Decl(Kind::Param, p.range, p.name, p.nameRange), param(std::move(p)) {}
  FOLDC_NODE(Decl, Param)
  ParamDecl param;
};

struct LayerDecl : Decl {
  LayerDecl(SourceRange r, std::string n, SourceRange nr, ExprPtr c)
      : Decl(Kind::Layer, r, std::move(n), nr), constructor(std::move(c)) {}
  FOLDC_NODE(Decl, Layer)
  ExprPtr constructor; ///< e.g. `fc(D -> H, act: tanh)`
};

struct Parameter {
  SourceRange range;
  std::string name;
  TypeExprPtr type;
};

/// Where a def made by instantiating a layer definition comes from.
struct InstanceOrigin {
  std::string layer;             ///< the layer definition's name
  SourceRange made;              ///< the instance's name where it is declared
  std::vector<Argument> options; ///< `trainable:` and `lr_scale:` given to it or its encloser
  bool prelude = false;          ///< of a layer of foldc's prelude (fc, lstm, gru)
};

/// `def` and `model`: parameters, a body of statements or one expression.
struct FunctionDecl : Decl {
  FunctionDecl(Kind k, SourceRange r, std::string n, SourceRange nr, std::vector<Parameter> p,
               TypeExprPtr res, std::vector<StmtPtr> b, ExprPtr e)
      : Decl(k, r, std::move(n), nr), params(std::move(p)), result(std::move(res)),
        body(std::move(b)), exprBody(std::move(e)) {}
  static bool classof(const Decl *d) { return d->kind() == Kind::Def || d->kind() == Kind::Model; }
  bool isModel() const { return kind() == Kind::Model; }
  std::vector<Parameter> params;
  TypeExprPtr result;        ///< null when not written
  std::vector<StmtPtr> body; ///< statements of a `{ ... }` body
  ExprPtr exprBody;          ///< the expression of `= expr;` (then body is empty)
  /// Set on the def of a layer instance (its params are the instance's own).
  std::unique_ptr<InstanceOrigin> instance;
};

/// The kinds of constant a layer definition takes.
enum class LayerConstantKind { Int, Float, Activation, Initializer };
const char *spelling(LayerConstantKind kind);

/// `E: int` or `act: activation = tanh` in a layer definition's first list.
struct LayerConstant {
  SourceRange range;
  SourceRange nameRange;
  std::string name;
  LayerConstantKind kind;
  ExprPtr defaultValue; ///< null: the instance must give it
};

/// `layer NAME(constants)(parameters) -> result { body }`: a layer the user
/// defines once and instantiates many times. The declaration itself is never
/// checked or lowered; each instance is a copy (see passes/sema/InstantiateLayers.h).
struct LayerDefDecl : Decl {
  LayerDefDecl(SourceRange r, std::string n, SourceRange nr, std::vector<LayerConstant> c,
               std::unique_ptr<FunctionDecl> a)
      : Decl(Kind::LayerDef, r, std::move(n), nr), constants(std::move(c)), apply(std::move(a)) {}
  FOLDC_NODE(Decl, LayerDef)
  std::vector<LayerConstant> constants;
  std::unique_ptr<FunctionDecl> apply; ///< what an instance does when called, named like the layer
};

/// A parsed `.fold` file.
struct Module {
  std::string fileName;
  std::vector<DeclPtr> decls;
  /// Instances whose instantiation failed (and was reported): a use of one
  /// is not reported again as an undeclared name.
  std::vector<std::string> failedInstances;
};

} // namespace foldc
