// Deep copies of AST nodes with free names replaced (see ASTClone.h).
#include "frontend/ASTClone.h"

namespace foldc {

bool ASTCloner::bound(const std::string &name) const {
  for (const auto &scope : scopes_)
    if (scope.count(name))
      return true;
  return false;
}

void ASTCloner::bind(const Pattern &p) {
  if (auto *n = dyn_cast<NamePattern>(&p))
    scopes_.back().insert(n->name);
  else if (auto *t = dyn_cast<TuplePattern>(&p))
    for (const PatternPtr &e : t->elements)
      bind(*e);
}

std::vector<ExprPtr> ASTCloner::exprs(const std::vector<ExprPtr> &es) {
  std::vector<ExprPtr> out;
  for (const ExprPtr &e : es)
    out.push_back(expr(*e));
  return out;
}

Argument ASTCloner::argument(const Argument &a) { return {a.range, a.name, expr(*a.value)}; }

ExprPtr ASTCloner::expr(const Expr &e) {
  SourceRange r = e.range();
  switch (e.kind()) {
  case ExprKind::IntLit:
    return std::make_unique<IntLitExpr>(r, static_cast<const IntLitExpr &>(e).value);
  case ExprKind::FloatLit: {
    auto &f = static_cast<const FloatLitExpr &>(e);
    return std::make_unique<FloatLitExpr>(r, f.value, f.spelling);
  }
  case ExprKind::StringLit:
    return std::make_unique<StringLitExpr>(r, static_cast<const StringLitExpr &>(e).value);
  case ExprKind::BoolLit:
    return std::make_unique<BoolLitExpr>(r, static_cast<const BoolLitExpr &>(e).value);
  case ExprKind::Name: {
    auto &n = static_cast<const NameExpr &>(e);
    if (!bound(n.name))
      if (ExprPtr replaced = replace_(n))
        return replaced;
    return std::make_unique<NameExpr>(r, n.name);
  }
  case ExprKind::Accessor:
    return std::make_unique<AccessorExpr>(r, static_cast<const AccessorExpr &>(e).selector);
  case ExprKind::Member: {
    auto &m = static_cast<const MemberExpr &>(e);
    return std::make_unique<MemberExpr>(r, expr(*m.base), m.selector);
  }
  case ExprKind::Call: {
    auto &c = static_cast<const CallExpr &>(e);
    std::vector<Argument> args;
    for (const Argument &a : c.args)
      args.push_back(argument(a));
    return std::make_unique<CallExpr>(r, expr(*c.callee), std::move(args));
  }
  case ExprKind::Index: {
    auto &i = static_cast<const IndexExpr &>(e);
    return std::make_unique<IndexExpr>(r, expr(*i.base), expr(*i.index));
  }
  case ExprKind::Slice: {
    auto &s = static_cast<const SliceExpr &>(e);
    return std::make_unique<SliceExpr>(r, expr(*s.base), optional(s.lo), optional(s.hi));
  }
  case ExprKind::Subscripts: {
    auto &s = static_cast<const SubscriptsExpr &>(e);
    std::vector<Subscript> subscripts;
    for (const Subscript &sub : s.subscripts)
      subscripts.push_back({sub.range, optional(sub.index), optional(sub.lo), optional(sub.hi)});
    return std::make_unique<SubscriptsExpr>(r, expr(*s.base), std::move(subscripts));
  }
  case ExprKind::Neg:
    return std::make_unique<NegExpr>(r, expr(*static_cast<const NegExpr &>(e).operand));
  case ExprKind::Not:
    return std::make_unique<NotExpr>(r, expr(*static_cast<const NotExpr &>(e).operand));
  case ExprKind::Binary: {
    auto &b = static_cast<const BinaryExpr &>(e);
    return std::make_unique<BinaryExpr>(r, b.op, expr(*b.lhs), expr(*b.rhs));
  }
  case ExprKind::Pipe: {
    auto &p = static_cast<const PipeExpr &>(e);
    return std::make_unique<PipeExpr>(r, expr(*p.lhs), expr(*p.rhs));
  }
  case ExprKind::Arrow: {
    auto &a = static_cast<const ArrowExpr &>(e);
    return std::make_unique<ArrowExpr>(r, expr(*a.from), expr(*a.to));
  }
  case ExprKind::Lambda: {
    auto &l = static_cast<const LambdaExpr &>(e);
    std::vector<PatternPtr> params;
    scopes_.emplace_back();
    for (const PatternPtr &p : l.params) {
      params.push_back(pattern(*p));
      bind(*p);
    }
    ExprPtr body = expr(*l.body);
    scopes_.pop_back();
    return std::make_unique<LambdaExpr>(r, std::move(params), std::move(body));
  }
  case ExprKind::Tuple:
    return std::make_unique<TupleExpr>(r, exprs(static_cast<const TupleExpr &>(e).elements));
  case ExprKind::List:
    return std::make_unique<ListExpr>(r, exprs(static_cast<const ListExpr &>(e).elements));
  case ExprKind::Match: {
    auto &m = static_cast<const MatchExpr &>(e);
    std::vector<MatchArm> arms;
    for (const MatchArm &arm : m.arms) {
      scopes_.emplace_back();
      if (!arm.binder.empty())
        scopes_.back().insert(arm.binder);
      arms.push_back({arm.range, arm.patternRange, arm.ctor, arm.binder, expr(*arm.body)});
      scopes_.pop_back();
    }
    return std::make_unique<MatchExpr>(r, expr(*m.scrutinee), std::move(arms));
  }
  case ExprKind::If: {
    auto &i = static_cast<const IfExpr &>(e);
    return std::make_unique<IfExpr>(r, expr(*i.cond), expr(*i.thenExpr), expr(*i.elseExpr));
  }
  }
  return nullptr;
}

TypeExprPtr ASTCloner::type(const TypeExpr &t) {
  SourceRange r = t.range();
  switch (t.kind()) {
  case TypeExprKind::HostScalar:
    return std::make_unique<HostScalarTypeExpr>(r,
                                                static_cast<const HostScalarTypeExpr &>(t).scalar);
  case TypeExprKind::Tensor: {
    auto &tensor = static_cast<const TensorTypeExpr &>(t);
    return std::make_unique<TensorTypeExpr>(r, tensor.element, exprs(tensor.dims));
  }
  case TypeExprKind::Tuple: {
    std::vector<TypeExprPtr> elements;
    for (const TypeExprPtr &e : static_cast<const TupleTypeExpr &>(t).elements)
      elements.push_back(type(*e));
    return std::make_unique<TupleTypeExpr>(r, std::move(elements));
  }
  case TypeExprKind::List:
    return std::make_unique<ListTypeExpr>(r, type(*static_cast<const ListTypeExpr &>(t).element));
  case TypeExprKind::Optional:
    return std::make_unique<OptionalTypeExpr>(
        r, type(*static_cast<const OptionalTypeExpr &>(t).element));
  case TypeExprKind::Block: {
    auto &b = static_cast<const BlockTypeExpr &>(t);
    return std::make_unique<BlockTypeExpr>(r, type(*b.input), type(*b.output));
  }
  case TypeExprKind::Record: {
    std::vector<FieldDecl> fields;
    for (const FieldDecl &f : static_cast<const RecordTypeExpr &>(t).fields)
      fields.push_back({f.range, f.name, type(*f.type)});
    return std::make_unique<RecordTypeExpr>(r, std::move(fields));
  }
  case TypeExprKind::Named:
    return std::make_unique<NamedTypeExpr>(r, static_cast<const NamedTypeExpr &>(t).name);
  }
  return nullptr;
}

PatternPtr ASTCloner::pattern(const Pattern &p) {
  switch (p.kind()) {
  case PatternKind::Name:
    return std::make_unique<NamePattern>(p.range(), static_cast<const NamePattern &>(p).name);
  case PatternKind::Wildcard:
    return std::make_unique<WildcardPattern>(p.range());
  case PatternKind::Tuple: {
    std::vector<PatternPtr> elements;
    for (const PatternPtr &e : static_cast<const TuplePattern &>(p).elements)
      elements.push_back(pattern(*e));
    return std::make_unique<TuplePattern>(p.range(), std::move(elements));
  }
  }
  return nullptr;
}

ParamDecl ASTCloner::param(const ParamDecl &p) {
  return {p.range, p.nameRange, p.name, type(*p.type), optional(p.init)};
}

StmtPtr ASTCloner::stmt(const Stmt &s) {
  SourceRange r = s.range();
  switch (s.kind()) {
  case StmtKind::Let: {
    auto &let = static_cast<const LetStmt &>(s);
    ExprPtr value = expr(*let.value); // the value cannot see the names it binds
    bind(*let.pattern);
    return std::make_unique<LetStmt>(r, pattern(*let.pattern), std::move(value));
  }
  case StmtKind::Return:
  case StmtKind::Loss:
  case StmtKind::Output:
    return std::make_unique<ValueStmt>(s.kind(), r, expr(*static_cast<const ValueStmt &>(s).value));
  case StmtKind::Metric: {
    auto &m = static_cast<const MetricStmt &>(s);
    return std::make_unique<MetricStmt>(r, m.name, m.nameRange, expr(*m.value));
  }
  case StmtKind::Param: {
    const ParamDecl &p = static_cast<const ParamStmt &>(s).param;
    ParamDecl copy = param(p);
    scopes_.back().insert(p.name);
    return std::make_unique<ParamStmt>(r, std::move(copy));
  }
  case StmtKind::Layer: {
    auto &l = static_cast<const LayerStmt &>(s);
    return std::make_unique<LayerStmt>(r, l.name, l.nameRange, expr(*l.constructor));
  }
  }
  return nullptr;
}

std::unique_ptr<FunctionDecl> ASTCloner::function(const FunctionDecl &fn, std::string name,
                                                  SourceRange nameRange,
                                                  const std::function<bool(const Stmt &)> &keep) {
  scopes_.emplace_back();
  std::vector<Parameter> params;
  for (const Parameter &p : fn.params) {
    params.push_back({p.range, p.name, type(*p.type)});
    scopes_.back().insert(p.name);
  }
  TypeExprPtr result = fn.result ? type(*fn.result) : nullptr;
  std::vector<StmtPtr> body;
  for (const StmtPtr &s : fn.body)
    if (keep(*s))
      body.push_back(stmt(*s));
  ExprPtr exprBody = optional(fn.exprBody);
  scopes_.pop_back();
  return std::make_unique<FunctionDecl>(fn.kind(), fn.range(), std::move(name), nameRange,
                                        std::move(params), std::move(result), std::move(body),
                                        std::move(exprBody));
}

} // namespace foldc
