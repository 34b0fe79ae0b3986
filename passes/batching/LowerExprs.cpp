// Lowering expressions: names, arithmetic, calls and block application,
// match and if (see Lowering.h).
#include "passes/batching/Lowering.h"

#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"

#include <algorithm>

namespace foldc::lowering {

LoweredValue Lowering::materialized(const LoweredValue &v, Context &ctx) {
  if (v.kind == LoweredValue::Kind::Param && v.choice)
    return useEach(v, v.type, v.range, ctx,
                   [&](const LoweredValue &p, Context &c) { return materialized(p, c); });
  if (v.kind == LoweredValue::Kind::Param) {
    OpAttrs attrs;
    attrs.param = v.param;
    if (v.columnsHi == 0)
      return emit(ctx, OpKind::Read, {}, v.type, v.range, attrs);
    TypeRef whole = types::tensor(v.type->element, plan_.params[size_t(v.param)].shape);
    LoweredValue read = emit(ctx, OpKind::Read, {}, whole, v.range, attrs);
    return sliceTensor(read, {AxisRange{1, v.columnsLo, v.columnsHi, false}}, ctx, v.range);
  }
  if (v.kind != LoweredValue::Kind::Tuple)
    return v;
  LoweredValue t = v;
  for (LoweredValue &e : t.elements)
    e = materialized(e, ctx);
  return t;
}

std::vector<LoweredValue> Lowering::materialized(std::vector<LoweredValue> values, Context &ctx) {
  for (LoweredValue &v : values)
    v = materialized(v, ctx);
  return values;
}

LoweredValue Lowering::evalLazy(const Expr &e, Context &ctx) {
  TypeRef type = program_.typeOf(e);
  switch (e.kind()) {
  case ExprKind::IntLit:
  case ExprKind::FloatLit:
  case ExprKind::StringLit:
  case ExprKind::BoolLit:
    return literal(e, type);
  case ExprKind::Name:
    return evalName(static_cast<const NameExpr &>(e), type);
  case ExprKind::Member: {
    auto &m = static_cast<const MemberExpr &>(e);
    LoweredValue base = evalLazy(*m.base, ctx); // `ws.0` of a tuple of parameters stays unread
    if (m.selector.isIndex())
      return element(base, *m.selector.index);
    auto field = hostExpr(HostExpr::Kind::Field, type, {base.expr});
    field->field = m.selector.field;
    return LoweredValue::host(sourceText(e), type, field);
  }
  case ExprKind::Tuple: {
    LoweredValue t;
    t.kind = LoweredValue::Kind::Tuple;
    t.type = type;
    for (const ExprPtr &x : static_cast<const TupleExpr &>(e).elements)
      t.elements.push_back(evalLazy(*x, ctx)); // a parameter read through a tuple stays unread
    return t;
  }
  case ExprKind::Neg: {
    LoweredValue x = eval(*static_cast<const NegExpr &>(e).operand, ctx);
    if (x.kind == LoweredValue::Kind::Host) { // -x on the host is 0 - x
      auto zero = hostExpr(HostExpr::Kind::Literal, type);
      auto negated = hostExpr(HostExpr::Kind::Binary, type, {zero, x.expr});
      negated->hostOp = HostOp::Sub;
      LoweredValue v = LoweredValue::host(sourceText(e), type, negated);
      v.constant = x.constant;
      v.number = -x.number;
      return v;
    }
    return emit(ctx, OpKind::Neg, {x}, type, e.range());
  }
  case ExprKind::Not: {
    const Expr &operand = *static_cast<const NotExpr &>(e).operand;
    LoweredValue x = asCondition(eval(operand, ctx), sourceText(operand), ctx, operand.range());
    if (x.kind != LoweredValue::Kind::Host)
      return LoweredValue::none(type);
    auto no = hostExpr(HostExpr::Kind::Literal, type); // !x on the host is x == false
    auto negated = hostExpr(HostExpr::Kind::Binary, type, {x.expr, no});
    negated->hostOp = HostOp::Eq;
    return LoweredValue::host(sourceText(e), type, negated);
  }
  case ExprKind::Binary:
    return evalBinary(static_cast<const BinaryExpr &>(e), type, ctx);
  case ExprKind::Index:
  case ExprKind::Slice:
  case ExprKind::Subscripts:
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
    std::vector<LoweredValue> elements;
    for (const ExprPtr &x : static_cast<const ListExpr &>(e).elements)
      elements.push_back(eval(*x, ctx));
    if (type->isHost()) {
      std::vector<HostExprRef> hosts;
      for (const LoweredValue &x : elements)
        hosts.push_back(x.expr);
      return LoweredValue::host(sourceText(e), type, hostExpr(HostExpr::Kind::List, type, hosts));
    }
    return structural(ctx, structuralStep(ListOp::List, elements), type, 0);
  }
  case ExprKind::Arrow:
    break;
  }
  return notSupported(e.range(), "this expression outside a layer's sizes", type);
}

LoweredValue Lowering::tuple(std::vector<LoweredValue> elements) {
  LoweredValue t;
  t.kind = LoweredValue::Kind::Tuple;
  std::vector<TypeRef> ts;
  for (const LoweredValue &e : elements)
    ts.push_back(e.type);
  t.type = types::tuple(ts);
  t.elements = std::move(elements);
  return t;
}

LoweredValue Lowering::blockValue(const TypeRef &type) {
  LoweredValue v;
  v.kind = LoweredValue::Kind::Block;
  v.type = type;
  v.block = type->block;
  return v;
}

LoweredValue Lowering::constant(const std::string &text, const ConstValue &value,
                                const TypeRef &type) {
  auto e = hostExpr(HostExpr::Kind::Literal, type);
  e->integer = value.intValue;
  e->number = value.asDouble();
  LoweredValue v = LoweredValue::host(text, type, e);
  v.constant = true;
  v.number = value.asDouble();
  return v;
}

LoweredValue Lowering::literal(const Expr &e, const TypeRef &type) {
  auto lit = hostExpr(HostExpr::Kind::Literal, type);
  LoweredValue v = LoweredValue::host(sourceText(e), type, lit);
  if (auto *i = dyn_cast<IntLitExpr>(&e))
    lit->integer = i->value, lit->number = double(i->value);
  else if (auto *f = dyn_cast<FloatLitExpr>(&e))
    lit->number = f->value;
  else if (auto *b = dyn_cast<BoolLitExpr>(&e))
    lit->integer = b->value, lit->number = b->value;
  else if (auto *str = dyn_cast<StringLitExpr>(&e))
    lit->text = str->value;
  v.constant = !isa<StringLitExpr>(&e);
  v.number = lit->number;
  return v;
}

LoweredValue Lowering::evalName(const NameExpr &name, const TypeRef &type) {
  const Symbol &sym = program_.names->names.at(&name);
  switch (sym.kind) {
  case Symbol::Kind::Local: {
    auto it = env_.find(sym.binding);
    if (it != env_.end())
      return it->second;
    break; // a def-local param, read as a value
  }
  case Symbol::Kind::Param:
    break;
  case Symbol::Kind::Const:
    return constant(name.name, *program_.consts->evaluate(name, nullptr), type);
  case Symbol::Kind::Layer:
  case Symbol::Kind::Def:
  case Symbol::Kind::Model:
  case Symbol::Kind::Builtin:
  case Symbol::Kind::HostFunction:
    return blockValue(type);
  }
  // A parameter used as a value: every instance reads the same tensor, in
  // place when it is a product's weight (evalBinary), else by `read`.
  LoweredValue v;
  v.kind = LoweredValue::Kind::Param;
  v.text = name.name;
  v.type = type;
  v.param = paramIndex(paramKey(name));
  v.range = name.range();
  return v;
}

std::string Lowering::ownerOf(const ParamDecl *param) {
  for (const DeclPtr &d : program_.module->decls)
    if (auto *fn = dyn_cast<FunctionDecl>(d.get()))
      for (const StmtPtr &s : fn->body)
        if (auto *ps = dyn_cast<ParamStmt>(s.get()); ps && &ps->param == param)
          return fn->name + ".";
  return "";
}

std::string Lowering::paramKey(const Expr &e) {
  auto *n = dyn_cast<NameExpr>(&e);
  if (!n)
    return "";
  const Symbol &sym = program_.names->names.at(n);
  if (sym.kind == Symbol::Kind::Param)
    return n->name;
  if (sym.kind == Symbol::Kind::Local && !env_.count(sym.binding) &&
      program_.params.count(static_cast<const ParamDecl *>(sym.binding)))
    return ownerOf(static_cast<const ParamDecl *>(sym.binding)) + n->name;
  return "";
}

/// The host operation of a binary operator on host values (`@` has none).
static std::optional<HostOp> hostOpOf(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return HostOp::Add;
  case BinaryOp::Sub:
    return HostOp::Sub;
  case BinaryOp::Mul:
    return HostOp::Mul;
  case BinaryOp::Div:
    return HostOp::Div;
  case BinaryOp::Eq:
    return HostOp::Eq;
  case BinaryOp::Ne:
    return HostOp::Ne;
  case BinaryOp::Lt:
    return HostOp::Lt;
  case BinaryOp::Le:
    return HostOp::Le;
  case BinaryOp::Gt:
    return HostOp::Gt;
  case BinaryOp::Ge:
    return HostOp::Ge;
  case BinaryOp::And:
    return HostOp::And;
  case BinaryOp::Or:
    return HostOp::Or;
  case BinaryOp::MatMul:
    return std::nullopt;
  }
  return std::nullopt;
}

/// The kernel op of a binary operator on tensors (`&&` and `||` have none).
static std::optional<OpKind> tensorOpOf(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return OpKind::Add;
  case BinaryOp::Sub:
    return OpKind::Sub;
  case BinaryOp::Mul:
    return OpKind::Mul;
  case BinaryOp::Div:
    return OpKind::Div;
  case BinaryOp::MatMul:
    return OpKind::MatMul;
  case BinaryOp::Eq:
    return OpKind::Eq;
  case BinaryOp::Ne:
    return OpKind::Ne;
  case BinaryOp::Lt:
    return OpKind::Lt;
  case BinaryOp::Le:
    return OpKind::Le;
  case BinaryOp::Gt:
    return OpKind::Gt;
  case BinaryOp::Ge:
    return OpKind::Ge;
  case BinaryOp::And:
  case BinaryOp::Or:
    return std::nullopt;
  }
  return std::nullopt;
}

LoweredValue Lowering::evalBinary(const BinaryExpr &b, const TypeRef &type, Context &ctx) {
  LoweredValue lhs = eval(*b.lhs, ctx), rhs = evalLazy(*b.rhs, ctx);
  if (rhs.kind == LoweredValue::Kind::Param && lhs.isTensorLike())
    return useEach(rhs, type, b.range(), ctx, [&](const LoweredValue &param, Context &c) {
      return withParam(b, lhs, param, type, c);
    });
  return binary(b, lhs, materialized(rhs, ctx), type, ctx);
}

// x @ W and x + b of a parameter, however it reached here (named, passed to
// an inlined def, through a tuple, a slice of its columns): the kernel reads
// it in place, one GEMM for every instance of the batch.
LoweredValue Lowering::withParam(const BinaryExpr &b, const LoweredValue &lhs,
                                 const LoweredValue &param, const TypeRef &type, Context &ctx) {
  OpAttrs attrs;
  attrs.param = param.param;
  attrs.lo = param.columnsLo;
  attrs.hi = param.columnsHi;
  if (b.op == BinaryOp::MatMul && lhs.type->shape.size() == 1 && param.type->shape.size() == 2)
    return emit(ctx, OpKind::Linear, {lhs}, type, b.range(), attrs);
  if (b.op == BinaryOp::Add && lhs.type->isTensor() && sameType(lhs.type, param.type) &&
      param.columnsHi == 0)
    return emit(ctx, OpKind::BiasAdd, {lhs}, type, b.range(), attrs);
  return binary(b, lhs, materialized(param, ctx), type, ctx);
}

bool Lowering::isZeroConstant(const Expr &e) const {
  std::optional<ConstValue> value = program_.consts->evaluate(e, nullptr);
  return value && value->asDouble() == 0;
}

LoweredValue Lowering::binary(const BinaryExpr &b, LoweredValue lhs, LoweredValue rhs,
                              const TypeRef &type, Context &ctx) {
  if (isLogical(b.op)) { // computed scalars are read: `&&` and `||` decide on the host
    lhs = asCondition(lhs, sourceText(*b.lhs), ctx, b.lhs->range());
    rhs = asCondition(rhs, sourceText(*b.rhs), ctx, b.rhs->range());
  }
  if (lhs.kind == LoweredValue::Kind::Host && rhs.kind == LoweredValue::Kind::Host) {
    std::optional<HostOp> op = hostOpOf(b.op);
    if (!op)
      return notSupported(b.range(), std::string("'") + spelling(b.op) + "' of host values", type);
    auto e = hostExpr(HostExpr::Kind::Binary, type, {lhs.expr, rhs.expr});
    e->hostOp = *op;
    return LoweredValue::host(sourceText(b), type, e);
  }
  std::optional<OpKind> op = tensorOpOf(b.op);
  if (!op)
    return notSupported(b.range(), std::string("'") + spelling(b.op) + "' of computed values",
                        type);
  // x + 0 and x - 0 are x but for a zero x's sign (-0 + 0 is +0): an lstm's
  // forget_bias of 0 adds no op.
  if ((b.op == BinaryOp::Add || b.op == BinaryOp::Sub) && lhs.isTensorLike() &&
      sameType(lhs.type, type) && isZeroConstant(*b.rhs))
    return lhs;
  return emit(ctx, *op, {lhs, rhs}, type, b.range());
}

/// The subscripted expression of an index, a slice or several subscripts.
static const Expr &subscriptedBase(const Expr &e) {
  if (auto *index = dyn_cast<IndexExpr>(&e))
    return *index->base;
  if (auto *slice = dyn_cast<SliceExpr>(&e))
    return *slice->base;
  return *static_cast<const SubscriptsExpr &>(e).base;
}

/// `W[:, a:b]` of a matrix parameter stays unread: a product reads those
/// columns in place.
static bool selectsColumns(const LoweredValue &param, const std::vector<AxisRange> &ranges) {
  return param.kind == LoweredValue::Kind::Param && param.type->shape.size() == 2 &&
         ranges.size() == 1 && ranges[0].axis == 1 && !ranges[0].drop;
}

/// Columns [range.lo, range.hi) of an unread matrix parameter (of each, for a host choice).
static LoweredValue columnsOf(LoweredValue param, const AxisRange &range, const TypeRef &type) {
  param.type = type;
  if (param.choice) {
    std::vector<LoweredValue> choice = *param.choice;
    for (size_t i = 1; i < choice.size(); ++i)
      choice[i] = columnsOf(choice[i], range, type);
    param.choice = std::make_shared<std::vector<LoweredValue>>(std::move(choice));
    return param;
  }
  int64_t offset = param.columnsLo;
  param.columnsLo = offset + range.lo;
  param.columnsHi = offset + range.hi;
  return param;
}

LoweredValue Lowering::evalIndexOrSlice(const Expr &e, const TypeRef &type, Context &ctx) {
  LoweredValue b = evalLazy(subscriptedBase(e), ctx);
  if (auto ranges = program_.tensorSubscripts.find(&e);
      ranges != program_.tensorSubscripts.end() && selectsColumns(b, ranges->second))
    return columnsOf(b, ranges->second[0], type);
  b = materialized(b, ctx);
  if (b.type->kind == TypeKind::List) { // of a list: unfolding picks the elements
    ListOp op = isa<IndexExpr>(&e) ? ListOp::Index : ListOp::Slice;
    std::vector<LoweredValue> parts = {b};
    if (auto *index = dyn_cast<IndexExpr>(&e)) {
      parts.push_back(eval(*index->index, ctx));
    } else {
      auto &slice = static_cast<const SliceExpr &>(e);
      parts.push_back(slice.lo ? eval(*slice.lo, ctx)
                               : constant("0", ConstValue{true, 0, 0}, types::intType()));
      if (slice.hi)
        parts.push_back(eval(*slice.hi, ctx));
    }
    if (type->isHost()) {
      auto call = hostExpr(HostExpr::Kind::Call, type, hostOperands(parts));
      call->listOp = op;
      return LoweredValue::host(sourceText(e), type, call);
    }
    return structural(ctx, structuralStep(op, parts, sourceText(e)), type, 0);
  }
  return sliceTensor(b, program_.tensorSubscripts.at(&e), ctx, e.range());
}

LoweredValue Lowering::sliceTensor(LoweredValue value, const std::vector<AxisRange> &ranges,
                                   Context &ctx, SourceRange at) {
  // From the last axis to the first: an index dropping its axis leaves the
  // numbers of the axes before it as they were.
  for (auto range = ranges.rbegin(); range != ranges.rend(); ++range) {
    std::vector<int64_t> shape = value.type->shape;
    OpAttrs attrs;
    attrs.lo = range->lo;
    attrs.hi = range->hi;
    attrs.axis = planAxis(range->axis, shape.size());
    if (range->drop)
      shape.erase(shape.begin() + range->axis);
    else
      shape[size_t(range->axis)] = range->hi - range->lo;
    value = emit(ctx, OpKind::Slice, {value}, types::tensor(value.type->element, shape), at, attrs);
  }
  return value;
}

LoweredValue Lowering::evalCall(const CallExpr &call, const TypeRef &type, Context &ctx) {
  if (type->kind == TypeKind::Block) // a partial application: a block, applied later
    return blockValue(type);
  std::vector<LoweredValue> args;
  for (const Argument &a : call.args)
    if (a.name.empty())                        // `axis:` is an attribute of the op (axisOfCall)
      args.push_back(evalLazy(*a.value, ctx)); // apply reads what it does not inline
  if (auto *name = dyn_cast<NameExpr>(call.callee.get())) {
    const Symbol &sym = program_.names->names.at(name);
    if (sym.kind == Symbol::Kind::Builtin) // sema let only callables through
      return builtin(sym.builtin.callable, materialized(std::move(args), ctx), type, call, ctx);
    // A block parameter of an inlined def: apply the block it was given.
    if (auto bound = env_.find(sym.binding);
        sym.kind == Symbol::Kind::Local && bound != env_.end() && bound->second.block)
      return apply(bound->second.block, args, type, call, ctx);
  }
  TypeRef callee = program_.typeOf(*call.callee);
  return apply(callee->block, args, type, call, ctx);
}

std::vector<LoweredValue> Lowering::adapt(std::vector<LoweredValue> args, size_t arity) {
  if (args.size() == arity)
    return args;
  if (arity == 1) {
    LoweredValue t;
    t.kind = LoweredValue::Kind::Tuple;
    t.elements = std::move(args);
    std::vector<TypeRef> ts;
    for (const LoweredValue &a : t.elements)
      ts.push_back(a.type);
    t.type = types::tuple(ts);
    return {t};
  }
  std::vector<LoweredValue> spread;
  for (size_t i = 0; i < arity; ++i)
    spread.push_back(element(args[0], i));
  return spread;
}

LoweredValue Lowering::apply(const std::shared_ptr<const BlockValue> &block,
                             std::vector<LoweredValue> args, const TypeRef &type, const Expr &site,
                             Context &ctx) {
  if (!block)
    return notSupported(site.range(),
                        "calling a block held in a local or parameter of a def that cannot be "
                        "inlined (one with match, if, loops or recursion)",
                        type);
  // Only an inlined def's body sees its parameters unread (weights passed as
  // arguments): anything else reads them here.
  if (block->kind != BlockValue::Kind::Def || !inlinable(*block->def))
    args = materialized(std::move(args), ctx);
  switch (block->kind) {
  case BlockValue::Kind::Def: {
    const FunctionDecl &fn = *block->def;
    args = adapt(std::move(args), fn.params.size());
    if (!inlinable(fn)) {
      UnfoldStep call = structuralStep(ListOp::List, args);
      call.kind = UnfoldStep::Kind::Call;
      call.function = functionIndex(fn);
      call.range = site.range();
      std::string list;
      for (const StepValue &v : call.values)
        list += (list.empty() ? "" : ", ") + v.text;
      call.text = "call " + fn.name + "(" + list + ")";
      return structural(ctx, std::move(call), type, maxStage(args));
    }
    for (size_t i = 0; i < args.size(); ++i)
      env_[&fn.params[i]] = args[i];
    fusing_.push_back(fn.name);
    std::optional<SourceRange> outerUse = preludeUse_;
    if (fn.instance && fn.instance->prelude && !preludeUse_)
      preludeUse_ = site.range();
    LoweredValue result;
    if (fn.exprBody)
      result = eval(*fn.exprBody, ctx);
    for (const StmtPtr &s : fn.body) {
      if (auto *ret = dyn_cast<ValueStmt>(s.get()); ret && s->kind() == StmtKind::Return)
        result = eval(*ret->value, ctx);
      else
        lowerStmt(*s, ctx);
    }
    preludeUse_ = outerUse;
    fusing_.pop_back();
    return asDeclared(result, program_.signatures.at(&fn)->result, site.range(), ctx);
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
    LoweredValue base = adapt(std::move(args), 1)[0];
    if (block->selector.isIndex())
      return element(base, *block->selector.index);
    TypeRef fieldType = type->isError() ? typeOfField(base.type, block->selector.field) : type;
    auto field = hostExpr(HostExpr::Kind::Field, fieldType, {base.expr});
    field->field = block->selector.field;
    return LoweredValue::host(sourceText(site), fieldType, field);
  }
  case BlockValue::Kind::Partial: {
    std::vector<LoweredValue> all;
    for (const Expr *e : block->boundArgs)
      all.push_back(eval(*e, ctx));
    for (LoweredValue &a : args)
      all.push_back(std::move(a));
    return builtin(block->builtin, all, type, site, ctx);
  }
  case BlockValue::Kind::Compose: {
    LoweredValue middle = apply(block->first, std::move(args), types::errorType(), site, ctx);
    return apply(block->second, {middle}, type, site, ctx);
  }
  case BlockValue::Kind::Host: { // an imported C++ function, run at unfold time
    const HostFunction &f = program_.hostFunctions[size_t(block->hostFunction)];
    args = adapt(std::move(args), f.params.size());
    auto call = hostExpr(HostExpr::Kind::HostCall, type, hostOperands(args));
    call->function = f.qualifiedName;
    return LoweredValue::host(sourceText(site), type, call);
  }
  case BlockValue::Kind::Typed:
    return notSupported(site.range(),
                        "calling a block parameter of a def that cannot be inlined (one with "
                        "match, if, loops or recursion)",
                        type);
  }
  return LoweredValue::none(type);
}

TypeRef Lowering::typeOfField(const TypeRef &base, const std::string &field) const {
  if (base && base->kind == TypeKind::Data) {
    const PlanDataType &data = plan_.dataType(*base);
    for (size_t v = 0; v < data.variants.size(); ++v)
      if (base->variant < 0 || size_t(base->variant) == v)
        for (const PlanField &f : data.variants[v].fields)
          if (f.name == field)
            return f.type;
  }
  return types::errorType();
}

UnfoldStep Lowering::lowerBranch(UnfoldStep arm, const std::string &contextName,
                                 const std::function<LoweredValue(Context &)> &body, int result) {
  Context branch(contextName, &arm.children);
  LoweredValue v = body(branch);
  if (v.kind == LoweredValue::Kind::None) {
    finish(branch);
    return arm;
  }
  StepValue value = valueOf(v);
  finish(branch);
  UnfoldStep assign =
      makeStep(UnfoldStep::Kind::Assign, shown(result) + " = " + value.text, {value});
  assign.target = result;
  arm.children.push_back(std::move(assign));
  return arm;
}

LoweredValue Lowering::branchResult(int result, const TypeRef &type) {
  return fromHandle({result, {}}, shown(result), type, 1);
}

LoweredValue Lowering::evalMatch(const MatchExpr &m, const TypeRef &type, Context &ctx) {
  LoweredValue scrutinee = eval(*m.scrutinee, ctx);
  if (scrutinee.kind != LoweredValue::Kind::Host)
    return LoweredValue::none(type);
  UnfoldStep s = makeStep(UnfoldStep::Kind::Match, "match " + scrutinee.text, {valueOf(scrutinee)});
  s.range = m.range();
  s.target = newLocal(PlanLocal::Kind::StepResult, type);
  s.type = type;
  const TypeRef &subject = scrutinee.type;
  for (const MatchArm &arm : m.arms) {
    std::string label = arm.isDefault() ? "_" : arm.ctor;
    UnfoldStep a =
        makeStep(UnfoldStep::Kind::Arm, label + (arm.binder.empty() ? "" : " " + arm.binder) + ":");
    a.range = arm.range;
    if (arm.isDefault()) {
      a.arm = UnfoldStep::ArmKind::Default;
    } else if (subject->kind == TypeKind::Optional) {
      a.arm = arm.ctor == "Some" ? UnfoldStep::ArmKind::Some : UnfoldStep::ArmKind::None;
    } else {
      a.arm = UnfoldStep::ArmKind::Variant;
      const auto &variants = plan_.dataType(*subject).variants;
      for (size_t v = 0; v < variants.size(); ++v)
        if (variants[v].name == arm.ctor)
          a.variant = int(v);
    }
    if (!arm.binder.empty()) {
      TypeRef t = program_.bindingTypes.at(&arm);
      a.binder = newLocal(PlanLocal::Kind::Binder, t, arm.binder);
      env_[&arm] = fromHandle({a.binder, {}}, arm.binder, t, 0);
    }
    std::string context = ctx.name + "." + (arm.isDefault() ? "default" : arm.ctor);
    s.children.push_back(lowerBranch(
        std::move(a), context, [&](Context &c) { return eval(*arm.body, c); }, s.target));
  }
  ctx.steps->push_back(std::move(s));
  return branchResult(ctx.steps->back().target, type);
}

LoweredValue Lowering::evalIf(const IfExpr &e, const TypeRef &type, Context &ctx) {
  LoweredValue cond = asCondition(eval(*e.cond, ctx), sourceText(*e.cond), ctx, e.cond->range());
  if (cond.kind != LoweredValue::Kind::Host)
    return LoweredValue::none(type);
  std::optional<LoweredValue> then = paramOf(*e.thenExpr, ctx);
  std::optional<LoweredValue> otherwise = then ? paramOf(*e.elseExpr, ctx) : std::nullopt;
  if (then && otherwise) { // a weight chosen on the host: chosen again where it is used
    LoweredValue choice;
    choice.kind = LoweredValue::Kind::Param;
    choice.text = sourceText(e);
    choice.type = type;
    choice.range = e.range();
    choice.choice = std::make_shared<std::vector<LoweredValue>>(
        std::vector<LoweredValue>{cond, *then, *otherwise});
    return choice;
  }
  return hostIf(
      cond, sourceText(*e.cond), type, e.range(), ctx,
      [&](Context &c) { return eval(*e.thenExpr, c); },
      [&](Context &c) { return eval(*e.elseExpr, c); });
}

LoweredValue Lowering::hostIf(const LoweredValue &cond, const std::string &text,
                              const TypeRef &type, SourceRange at, Context &ctx,
                              const std::function<LoweredValue(Context &)> &then,
                              const std::function<LoweredValue(Context &)> &otherwise) {
  UnfoldStep s = makeStep(UnfoldStep::Kind::If, "if " + text, {valueOf(cond)});
  s.range = at;
  s.target = newLocal(PlanLocal::Kind::StepResult, type);
  s.type = type;
  UnfoldStep thenArm = makeStep(UnfoldStep::Kind::Arm, "then:");
  thenArm.arm = UnfoldStep::ArmKind::Then;
  UnfoldStep elseArm = makeStep(UnfoldStep::Kind::Arm, "else:");
  elseArm.arm = UnfoldStep::ArmKind::Else;
  s.children.push_back(lowerBranch(std::move(thenArm), ctx.name + ".then", then, s.target));
  s.children.push_back(lowerBranch(std::move(elseArm), ctx.name + ".else", otherwise, s.target));
  ctx.steps->push_back(std::move(s));
  return branchResult(ctx.steps->back().target, type);
}

/// A name followed by tuple elements (`ws.0`): evaluated lazily, it computes nothing.
static bool isNamePath(const Expr &e) {
  if (auto *member = dyn_cast<MemberExpr>(&e))
    return isNamePath(*member->base);
  return isa<NameExpr>(&e);
}

std::optional<LoweredValue> Lowering::paramOf(const Expr &e, Context &ctx) {
  if (isa<SliceExpr>(&e) || isa<SubscriptsExpr>(&e)) { // columns of a parameter
    auto ranges = program_.tensorSubscripts.find(&e);
    std::optional<LoweredValue> base = paramOf(subscriptedBase(e), ctx);
    if (!base || ranges == program_.tensorSubscripts.end() ||
        !selectsColumns(*base, ranges->second))
      return std::nullopt;
    return columnsOf(*base, ranges->second[0], program_.typeOf(e));
  }
  if (!isNamePath(e))
    return std::nullopt;
  LoweredValue v = evalLazy(e, ctx);
  if (v.kind != LoweredValue::Kind::Param)
    return std::nullopt;
  return v;
}

LoweredValue
Lowering::useEach(const LoweredValue &param, const TypeRef &type, SourceRange at, Context &ctx,
                  const std::function<LoweredValue(const LoweredValue &, Context &)> &use) {
  if (!param.choice)
    return use(param, ctx);
  const std::vector<LoweredValue> &choice = *param.choice;
  auto branch = [&](const LoweredValue &p) {
    return [&, p](Context &c) { return useEach(p, type, at, c, use); };
  };
  return hostIf(choice[0], choice[0].text, type, at, ctx, branch(choice[1]), branch(choice[2]));
}

LoweredValue Lowering::readScalar(const LoweredValue &v, const std::string &text, Context &ctx,
                                  SourceRange at) {
  if (!v.isTensorLike() || !v.type->isScalarTensor())
    return LoweredValue::none(v.type);
  TypeRef type = v.type->element == ElementType::I32 ? types::intType() : types::floatType();
  UnfoldStep read = makeStep(UnfoldStep::Kind::Read, "", {valueOf(v)});
  read.range = at;
  read.target = newLocal(PlanLocal::Kind::StepResult, type);
  read.type = type;
  read.text = shown(read.target) + " = read " + read.values[0].text + " (" + text +
              "; waits until it is computed)";
  ctx.steps->push_back(std::move(read));
  return fromHandle({ctx.steps->back().target, {}}, shown(ctx.steps->back().target), type, 0);
}

LoweredValue Lowering::asCondition(const LoweredValue &v, const std::string &text, Context &ctx,
                                   SourceRange at) {
  if (!v.isTensorLike())
    return v;
  LoweredValue number = readScalar(v, text, ctx, at);
  if (number.kind != LoweredValue::Kind::Host)
    return number;
  auto zero = hostExpr(HostExpr::Kind::Literal, number.type);
  auto test = hostExpr(HostExpr::Kind::Binary, types::boolType(), {number.expr, zero});
  test->hostOp = HostOp::Ne;
  return LoweredValue::host(text + " != 0", types::boolType(), test);
}

} // namespace foldc::lowering
