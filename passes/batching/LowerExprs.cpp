// Lowering expressions: names, arithmetic, calls and block application,
// match and if (see Lowering.h).
#include "passes/batching/Lowering.h"

#include "frontend/ASTPrinter.h"
#include "passes/sema/Builtins.h"

#include <algorithm>

namespace foldc::lowering {

AVal Lowering::eval(const Expr &e, Context &ctx) {
  TypeRef type = program_.typeOf(e);
  switch (e.kind()) {
  case ExprKind::IntLit:
  case ExprKind::FloatLit:
  case ExprKind::StringLit:
  case ExprKind::BoolLit:
    return AVal::constantValue(toSource(e), type);
  case ExprKind::Name:
    return evalName(static_cast<const NameExpr &>(e), type);
  case ExprKind::Member: {
    auto &m = static_cast<const MemberExpr &>(e);
    AVal base = eval(*m.base, ctx);
    if (m.selector.isIndex())
      return element(base, *m.selector.index);
    return AVal::field(base, m.selector.field, type);
  }
  case ExprKind::Tuple: {
    AVal t;
    t.kind = AVal::Kind::Tuple;
    t.type = type;
    for (const ExprPtr &x : static_cast<const TupleExpr &>(e).elements)
      t.elements.push_back(eval(*x, ctx));
    return t;
  }
  case ExprKind::Neg: {
    AVal x = eval(*static_cast<const NegExpr &>(e).operand, ctx);
    if (x.kind == AVal::Kind::Host) // -x on the host is 0 - x
      return AVal::host(toSource(e), type,
                        hostExpr(HostExpr::Kind::Binary, "-", type,
                                 {hostExpr(HostExpr::Kind::Literal, "0", type), x.expr}));
    return emit(ctx, "neg", {x}, type, double(width(type)), e.range());
  }
  case ExprKind::Binary:
    return evalBinary(static_cast<const BinaryExpr &>(e), type, ctx);
  case ExprKind::Index:
  case ExprKind::Slice:
    return evalIndexOrSlice(e, type, ctx);
  case ExprKind::Call:
    return evalCall(static_cast<const CallExpr &>(e), type, ctx);
  case ExprKind::Pipe: {
    auto &p = static_cast<const PipeExpr &>(e);
    if (program_.typeOf(*p.lhs)->kind == TypeKind::Block)
      return blockValue(type);
    return apply(program_.typeOf(*p.rhs)->block, {eval(*p.lhs, ctx)}, type, e, ctx);
  }
  case ExprKind::Lambda:
  case ExprKind::Accessor:
    return blockValue(type);
  case ExprKind::Match:
    return evalMatch(static_cast<const MatchExpr &>(e), type, ctx);
  case ExprKind::If:
    return evalIf(static_cast<const IfExpr &>(e), type, ctx);
  case ExprKind::List: {
    std::vector<AVal> elements;
    for (const ExprPtr &x : static_cast<const ListExpr &>(e).elements)
      elements.push_back(eval(*x, ctx));
    if (type->isHost()) {
      std::vector<HostExprRef> hosts;
      for (const AVal &x : elements)
        hosts.push_back(x.expr);
      return AVal::host(toSource(e), type, hostExpr(HostExpr::Kind::List, "", type, hosts));
    }
    return structural(ctx, structuralStep("list", elements, ctx), type, 0);
  }
  case ExprKind::Arrow:
    break;
  }
  return AVal::unsupported(toSource(e), type);
}

AVal Lowering::tuple(std::vector<AVal> elements) {
  AVal t;
  t.kind = AVal::Kind::Tuple;
  std::vector<TypeRef> ts;
  for (const AVal &e : elements)
    ts.push_back(e.type);
  t.type = types::tuple(ts);
  t.elements = std::move(elements);
  return t;
}

AVal Lowering::blockValue(const TypeRef &type) {
  AVal v;
  v.kind = AVal::Kind::Block;
  v.type = type;
  v.block = type->block;
  return v;
}

AVal Lowering::evalName(const NameExpr &name, const TypeRef &type) {
  const Symbol &sym = program_.names->names.at(&name);
  switch (sym.kind) {
  case Symbol::Kind::Local: {
    auto it = env_.find(sym.binding);
    if (it != env_.end())
      return it->second;
    if (auto *p = static_cast<const ParamDecl *>(sym.binding); program_.params.count(p))
      return AVal::named(ownerOf(p) + p->name, type); // a def-local param, read by an op
    return AVal::named(name.name, type);
  }
  case Symbol::Kind::Param:
    return AVal::named(name.name, type);
  case Symbol::Kind::Const:
    return AVal::constantValue(program_.consts->evaluate(name, nullptr)->toString(), type);
  default:
    return blockValue(type);
  }
}

std::string Lowering::ownerOf(const ParamDecl *param) {
  for (const DeclPtr &d : program_.module->decls)
    if (auto *fn = dyn_cast<FunctionDecl>(d.get()))
      for (const StmtPtr &s : fn->body)
        if (auto *ps = dyn_cast<ParamStmt>(s.get()); ps && &ps->param == param)
          return fn->name + ".";
  return "";
}

bool Lowering::isParam(const Expr &e, std::string &name) {
  auto *n = dyn_cast<NameExpr>(&e);
  if (!n)
    return false;
  const Symbol &sym = program_.names->names.at(n);
  if (sym.kind == Symbol::Kind::Param) {
    name = n->name;
    return true;
  }
  if (sym.kind == Symbol::Kind::Local && !env_.count(sym.binding)) {
    name = ownerOf(static_cast<const ParamDecl *>(sym.binding)) + n->name;
    return true;
  }
  return false;
}

AVal Lowering::evalBinary(const BinaryExpr &b, const TypeRef &type, Context &ctx) {
  std::string param;
  if (b.op == BinaryOp::MatMul && isParam(*b.rhs, param)) {
    AVal x = eval(*b.lhs, ctx);
    TypeRef w = program_.typeOf(*b.rhs);
    AVal v = emit(ctx, "linear", {x}, type, 2.0 * double(width(w)), b.range(), param);
    plan_.kernels[size_t(v.kernel)].params.insert(param);
    return v;
  }
  if ((b.op == BinaryOp::Add) && isParam(*b.rhs, param)) {
    AVal x = eval(*b.lhs, ctx);
    AVal v = emit(ctx, "bias_add", {x}, type, double(width(type)), b.range(), param);
    plan_.kernels[size_t(v.kernel)].params.insert(param);
    return v;
  }
  AVal lhs = eval(*b.lhs, ctx), rhs = eval(*b.rhs, ctx);
  static const char *names[] = {"add", "sub", "mul", "div", "matmul", "eq",
                                "ne",  "lt",  "le",  "gt",  "ge"};
  static const char *symbols[] = {"+", "-", "*", "/", "@", "==", "!=", "<", "<=", ">", ">="};
  if (lhs.kind == AVal::Kind::Host && rhs.kind == AVal::Kind::Host)
    return AVal::host(
        toSource(b), type,
        hostExpr(HostExpr::Kind::Binary, symbols[int(b.op)], type, {lhs.expr, rhs.expr}));
  double flops = b.op == BinaryOp::MatMul
                     ? 2.0 * double(width(program_.typeOf(*b.lhs))) * double(width(type))
                     : double(width(type));
  return emit(ctx, names[int(b.op)], {lhs, rhs}, type, flops, b.range());
}

AVal Lowering::evalIndexOrSlice(const Expr &e, const TypeRef &type, Context &ctx) {
  const Expr &base = isa<IndexExpr>(&e) ? *static_cast<const IndexExpr &>(e).base
                                        : *static_cast<const SliceExpr &>(e).base;
  AVal b = eval(base, ctx);
  if (b.type->kind == TypeKind::List) { // of a list: unfolding picks the elements
    std::string name = isa<IndexExpr>(&e) ? "index" : "slice";
    std::vector<AVal> parts = {b};
    if (auto *index = dyn_cast<IndexExpr>(&e)) {
      parts.push_back(eval(*index->index, ctx));
    } else {
      auto &slice = static_cast<const SliceExpr &>(e);
      parts.push_back(slice.lo ? eval(*slice.lo, ctx) : AVal::constantValue("0", types::intType()));
      if (slice.hi)
        parts.push_back(eval(*slice.hi, ctx));
    }
    if (type->isHost())
      return AVal::host(toSource(e), type,
                        hostExpr(HostExpr::Kind::Call, name, type, hostOperands(parts)));
    return structural(ctx, structuralStep(name, parts, ctx, toSource(e)), type, 0);
  }
  return emit(ctx, isa<IndexExpr>(&e) ? "index" : "slice", {b}, type, 0, e.range(),
              boundsOf(e, b.type));
}

std::string Lowering::boundsOf(const Expr &e, const TypeRef &base) {
  auto value = [&](const Expr *x, long long otherwise) {
    return x ? program_.consts->evaluate(*x, nullptr)->intValue : otherwise;
  };
  if (auto *index = dyn_cast<IndexExpr>(&e))
    return std::to_string(value(index->index.get(), 0));
  auto &slice = static_cast<const SliceExpr &>(e);
  return std::to_string(value(slice.lo.get(), 0)) + ":" +
         std::to_string(value(slice.hi.get(), base->shape.back()));
}

AVal Lowering::evalCall(const CallExpr &call, const TypeRef &type, Context &ctx) {
  std::vector<AVal> args;
  for (const Argument &a : call.args)
    args.push_back(eval(*a.value, ctx));
  if (auto *name = dyn_cast<NameExpr>(call.callee.get())) {
    const Symbol &sym = program_.names->names.at(name);
    if (sym.kind == Symbol::Kind::Builtin)
      return builtin(name->name, args, type, call, ctx);
    // A block parameter of an inlined def: apply the block it was given.
    if (auto bound = env_.find(sym.binding);
        sym.kind == Symbol::Kind::Local && bound != env_.end() && bound->second.block)
      return apply(bound->second.block, args, type, call, ctx);
  }
  TypeRef callee = program_.typeOf(*call.callee);
  return apply(callee->block, args, type, call, ctx);
}

std::vector<AVal> Lowering::adapt(std::vector<AVal> args, size_t arity) {
  if (args.size() == arity)
    return args;
  if (arity == 1) {
    AVal t;
    t.kind = AVal::Kind::Tuple;
    t.elements = std::move(args);
    std::vector<TypeRef> ts;
    for (const AVal &a : t.elements)
      ts.push_back(a.type);
    t.type = types::tuple(ts);
    return {t};
  }
  std::vector<AVal> spread;
  for (size_t i = 0; i < arity; ++i)
    spread.push_back(element(args[0], i));
  return spread;
}

AVal Lowering::apply(const std::shared_ptr<const BlockValue> &block, std::vector<AVal> args,
                     const TypeRef &type, const Expr &site, Context &ctx) {
  if (!block)
    return structural(ctx, structuralStep("call", args, ctx, "call " + toSource(site)), type,
                      maxStage(args));
  switch (block->kind) {
  case BlockValue::Kind::Def: {
    const FunctionDecl &fn = *block->def;
    args = adapt(std::move(args), fn.params.size());
    if (!inlinable(fn)) {
      UnfoldStep call = structuralStep(fn.name, args, ctx);
      call.kind = UnfoldStep::Kind::Call;
      call.text = "call " + call.text;
      return structural(ctx, std::move(call), type, maxStage(args));
    }
    for (size_t i = 0; i < args.size(); ++i)
      env_[&fn.params[i]] = args[i];
    fusing_.push_back(fn.name);
    AVal result;
    if (fn.exprBody)
      result = eval(*fn.exprBody, ctx);
    for (const StmtPtr &s : fn.body) {
      if (auto *ret = dyn_cast<ValueStmt>(s.get()); ret && s->kind() == StmtKind::Return)
        result = eval(*ret->value, ctx);
      else
        lowerStmt(*s, ctx);
    }
    fusing_.pop_back();
    return result;
  }
  case BlockValue::Kind::Layer: {
    const LayerInfo &info = program_.layers.at(block->layer);
    return layer(*block->layer, adapt(std::move(args), info.blockType->params.size()), site, ctx);
  }
  case BlockValue::Kind::Builtin:
    return builtin(block->builtin, args, type, site, ctx);
  case BlockValue::Kind::Lambda: {
    const LambdaExpr &lambda = *block->lambda;
    args = adapt(std::move(args), lambda.params.size());
    for (size_t i = 0; i < args.size(); ++i)
      bind(*lambda.params[i], args[i]);
    return eval(*lambda.body, ctx);
  }
  case BlockValue::Kind::Accessor: {
    AVal base = adapt(std::move(args), 1)[0];
    if (block->selector.isIndex())
      return element(base, *block->selector.index);
    return AVal::field(base, block->selector.field, type);
  }
  case BlockValue::Kind::Partial: {
    std::vector<AVal> all;
    for (const Expr *e : block->boundArgs)
      all.push_back(eval(*e, ctx));
    for (AVal &a : args)
      all.push_back(std::move(a));
    return builtin(block->builtin, all, type, site, ctx);
  }
  case BlockValue::Kind::Compose: {
    AVal middle = apply(block->first, std::move(args), types::errorType(), site, ctx);
    return apply(block->second, {middle}, type, site, ctx);
  }
  case BlockValue::Kind::Host: { // an imported C++ function, run at unfold time
    const HostFunction &f = program_.hostFunctions[size_t(block->hostFunction)];
    args = adapt(std::move(args), f.params.size());
    return AVal::host(
        toSource(site), type,
        hostExpr(HostExpr::Kind::HostCall, f.qualifiedName, type, hostOperands(args)));
  }
  case BlockValue::Kind::Typed:
    return structural(ctx,
                      structuralStep("call", args, ctx, "call block " + toSource(*block->source)),
                      type, maxStage(args));
  }
  return AVal::unsupported("?", type);
}

UnfoldStep Lowering::lowerBranch(const std::string &label, const std::string &binder,
                                 const std::string &contextName, const Expr &body,
                                 const std::string &result) {
  UnfoldStep arm =
      makeStep(UnfoldStep::Kind::Arm, label + (binder.empty() ? "" : " " + binder) + ":", label);
  arm.binder = binder;
  Context branch(contextName, &arm.children);
  StepValue value = valueOf(eval(body, branch));
  finish(branch);
  UnfoldStep assign =
      makeStep(UnfoldStep::Kind::Assign, result + " = " + textOf(value), "", {value});
  assign.target = result;
  arm.children.push_back(std::move(assign));
  return arm;
}

AVal Lowering::branchResult(const std::string &result, const TypeRef &type) {
  return type->isHost() ? AVal::named(result, type) : handleFor(result, type, 1);
}

AVal Lowering::evalMatch(const MatchExpr &m, const TypeRef &type, Context &ctx) {
  AVal scrutinee = eval(*m.scrutinee, ctx);
  UnfoldStep s =
      makeStep(UnfoldStep::Kind::Match, "match " + scrutinee.text, "", {valueOf(scrutinee)});
  std::string result = "%" + std::to_string(handles_++);
  s.target = result;
  s.type = type;
  for (const MatchArm &arm : m.arms) {
    if (!arm.binder.empty())
      env_[&arm] = AVal::named(arm.binder, program_.bindingTypes.at(&arm));
    std::string ctor = arm.isDefault() ? "_" : arm.ctor;
    s.children.push_back(lowerBranch(ctor, arm.binder,
                                     ctx.name + "." + (arm.isDefault() ? "default" : ctor),
                                     *arm.body, result));
  }
  ctx.steps->push_back(std::move(s));
  return branchResult(result, type);
}

AVal Lowering::evalIf(const IfExpr &e, const TypeRef &type, Context &ctx) {
  std::string result = "%" + std::to_string(handles_++);
  UnfoldStep s =
      makeStep(UnfoldStep::Kind::If, "if " + toSource(*e.cond), "", {valueOf(eval(*e.cond, ctx))});
  s.target = result;
  s.type = type;
  s.children.push_back(lowerBranch("then", "", ctx.name + ".then", *e.thenExpr, result));
  s.children.push_back(lowerBranch("else", "", ctx.name + ".else", *e.elseExpr, result));
  ctx.steps->push_back(std::move(s));
  return branchResult(result, type);
}

} // namespace foldc::lowering
