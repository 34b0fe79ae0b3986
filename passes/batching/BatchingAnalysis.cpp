// Lowering to kernels and unfolding steps (see BatchingAnalysis.h): the walk
// over functions and statements, the steps, and kernel construction.
#include "passes/batching/BatchingAnalysis.h"
#include "passes/batching/Lowering.h"

#include "frontend/ASTPrinter.h"
#include "passes/sema/Builtins.h"

#include <algorithm>

namespace foldc::lowering {

HostExprRef hostExpr(HostExpr::Kind kind, std::string text, TypeRef type,
                     std::vector<HostExprRef> operands) {
  auto e = std::make_shared<HostExpr>();
  e->kind = kind;
  e->text = std::move(text);
  e->type = std::move(type);
  e->operands = std::move(operands);
  return e;
}

BatchPlan Lowering::run() {
  for (const DeclPtr &d : program_.module->decls)
    if (auto *fn = dyn_cast<FunctionDecl>(d.get())) {
      if (!fn->isModel() && inlinable(*fn)) {
        plan_.inlined.push_back(fn->name);
        continue;
      }
      lowerFunction(*fn);
    }
  mergeIdenticalKernels();
  return std::move(plan_);
}

void Lowering::mergeIdenticalKernels() {
  std::map<std::string, int> first;
  for (KernelPlan &k : plan_.kernels) {
    auto [it, inserted] = first.emplace(k.identity(), k.id);
    if (!inserted)
      k.sameAs = it->second;
  }
}

bool Lowering::inlinable(const FunctionDecl &fn) {
  if (auto it = inlinable_.find(&fn); it != inlinable_.end())
    return it->second;
  inlinable_[&fn] = false; // recursion is never inlined
  bool ok = true;
  for (const Parameter &p : fn.params)
    ok &= !program_.bindingTypes.at(&p)->isHost();
  std::function<void(const Expr &)> visit = [&](const Expr &e) {
    switch (e.kind()) {
    case ExprKind::Match:
    case ExprKind::If:
    case ExprKind::Lambda:
    case ExprKind::List:
    case ExprKind::Accessor:
    case ExprKind::Pipe:
      ok = false;
      return;
    case ExprKind::Call: {
      auto &call = static_cast<const CallExpr &>(e);
      if (auto *name = dyn_cast<NameExpr>(call.callee.get())) {
        auto sym = program_.names->names.find(name);
        if (sym != program_.names->names.end()) {
          if (sym->second.kind == Symbol::Kind::Builtin &&
              findBuiltin(sym->second.builtin)->kind == BuiltinKind::Combinator)
            ok = false;
          if (sym->second.kind == Symbol::Kind::Def &&
              !inlinable(*static_cast<const FunctionDecl *>(sym->second.decl)))
            ok = false;
          if (sym->second.kind == Symbol::Kind::Local && !isBlockParam(fn, sym->second.binding))
            ok = false; // a block held in a local: only known where the def is applied
        }
      } else {
        ok = false;
      }
      for (const Argument &a : call.args)
        visit(*a.value);
      return;
    }
    default:
      forEachChild(e, visit);
    }
  };
  if (fn.exprBody)
    visit(*fn.exprBody);
  for (const StmtPtr &s : fn.body) {
    if (auto *let = dyn_cast<LetStmt>(s.get()))
      visit(*let->value);
    else if (auto *v = dyn_cast<ValueStmt>(s.get()))
      visit(*v->value);
    else if (auto *m = dyn_cast<MetricStmt>(s.get()))
      visit(*m->value);
  }
  inlinable_[&fn] = ok;
  return ok;
}

bool Lowering::isBlockParam(const FunctionDecl &fn, const void *binding) const {
  for (const Parameter &p : fn.params)
    if (&p == binding && program_.bindingTypes.at(&p)->kind == TypeKind::Block)
      return true;
  return false;
}

void Lowering::forEachChild(const Expr &e, const std::function<void(const Expr &)> &f) {
  if (auto *m = dyn_cast<MemberExpr>(&e))
    f(*m->base);
  else if (auto *i = dyn_cast<IndexExpr>(&e)) {
    f(*i->base);
    f(*i->index);
  } else if (auto *s = dyn_cast<SliceExpr>(&e)) {
    f(*s->base);
    if (s->lo)
      f(*s->lo);
    if (s->hi)
      f(*s->hi);
  } else if (auto *n = dyn_cast<NegExpr>(&e))
    f(*n->operand);
  else if (auto *b = dyn_cast<BinaryExpr>(&e)) {
    f(*b->lhs);
    f(*b->rhs);
  } else if (auto *t = dyn_cast<TupleExpr>(&e)) {
    for (auto &x : t->elements)
      f(*x);
  }
}

void Lowering::lowerFunction(const FunctionDecl &fn) {
  handles_ = loops_ = 0; // step names are per function
  FunctionPlan fp;
  fp.function = &fn;
  Context ctx(fn.name, &fp.steps);
  for (const Parameter &p : fn.params) {
    TypeRef t = program_.bindingTypes.at(&p);
    env_[&p] = t->isHost() ? AVal::named(p.name, t) : handleFor(p.name, t, 0);
  }
  if (fn.exprBody)
    returnStep(eval(*fn.exprBody, ctx), ctx);
  for (const StmtPtr &s : fn.body)
    lowerStmt(*s, ctx);
  finish(ctx);
  plan_.functions.push_back(std::move(fp));
}

AVal Lowering::handleFor(const std::string &name, const TypeRef &type, int stage) {
  if (type->kind == TypeKind::Tuple && containsTensor(type)) {
    AVal t;
    t.kind = AVal::Kind::Tuple;
    t.type = type;
    for (size_t i = 0; i < type->elements.size(); ++i)
      t.elements.push_back(handleFor(name + "." + std::to_string(i), type->elements[i], stage));
    return t;
  }
  if (type->isHost())
    return AVal::named(name, type);
  return AVal::handle(name, type, stage);
}

UnfoldStep Lowering::makeStep(UnfoldStep::Kind kind, std::string text, std::string name,
                              std::vector<StepValue> values) {
  UnfoldStep s;
  s.kind = kind;
  s.text = std::move(text);
  s.name = std::move(name);
  s.values = std::move(values);
  return s;
}

void Lowering::returnStep(const AVal &v, Context &ctx) {
  StepValue value = valueOf(v);
  finish(ctx);
  ctx.steps->push_back(makeStep(UnfoldStep::Kind::Return, "return " + textOf(value), "", {value}));
}

void Lowering::lowerStmt(const Stmt &s, Context &ctx) {
  switch (s.kind()) {
  case StmtKind::Let: {
    auto &let = static_cast<const LetStmt &>(s);
    bind(*let.pattern, eval(*let.value, ctx));
    return;
  }
  case StmtKind::Param:
    return; // params are read by the operations that use them
  case StmtKind::Return:
    returnStep(eval(*static_cast<const ValueStmt &>(s).value, ctx), ctx);
    return;
  case StmtKind::Loss:
    markResult(eval(*static_cast<const ValueStmt &>(s).value, ctx), "loss", ctx);
    return;
  case StmtKind::Output:
    markResult(eval(*static_cast<const ValueStmt &>(s).value, ctx), "output", ctx);
    return;
  case StmtKind::Metric: {
    auto &m = static_cast<const MetricStmt &>(s);
    markResult(eval(*m.value, ctx), "metric " + m.name, ctx);
    return;
  }
  }
}

void Lowering::markResult(const AVal &v, const std::string &role, Context &ctx) {
  if (v.kind == AVal::Kind::Local) {
    plan_.kernels[size_t(v.kernel)].results.push_back({v.value, role});
    return;
  }
  StepValue value = valueOf(v);
  ctx.steps->push_back(makeStep(UnfoldStep::Kind::Role, role + " " + textOf(value), role, {value}));
}

void Lowering::bind(const Pattern &p, const AVal &v) {
  if (auto *n = dyn_cast<NamePattern>(&p)) {
    env_[n] = v;
  } else if (auto *t = dyn_cast<TuplePattern>(&p)) {
    for (size_t i = 0; i < t->elements.size(); ++i)
      bind(*t->elements[i], element(v, i));
  }
}

AVal Lowering::element(const AVal &v, size_t i) {
  if (v.kind == AVal::Kind::Tuple)
    return v.elements[i];
  TypeRef t = v.type->kind == TypeKind::Tuple ? v.type->elements[i] : types::errorType();
  return handleFor(v.text + "." + std::to_string(i), t, v.stage);
}

StepValue Lowering::valueOf(const AVal &v) {
  StepValue out;
  out.type = v.type;
  switch (v.kind) {
  case AVal::Kind::Local:
    materialize(v);
    out.kind = StepValue::Kind::KernelResult;
    out.kernel = v.kernel;
    out.op = v.value;
    return out;
  case AVal::Kind::Tuple:
    out.kind = StepValue::Kind::Tuple;
    for (const AVal &e : v.elements)
      out.elements.push_back(valueOf(e));
    return out;
  case AVal::Kind::Host:
    out.kind = StepValue::Kind::Host;
    out.host = v.expr;
    out.name = v.text;
    return out;
  default:
    out.name = v.text;
    return out;
  }
}

std::string Lowering::textOf(const StepValue &v) const {
  switch (v.kind) {
  case StepValue::Kind::KernelResult:
    return plan_.kernels[size_t(v.kernel)].name + "%" + std::to_string(v.op);
  case StepValue::Kind::Tuple: {
    std::string out;
    for (const StepValue &e : v.elements)
      out += (out.empty() ? "" : ", ") + textOf(e);
    return "(" + out + ")";
  }
  default:
    return v.name;
  }
}

void Lowering::materialize(const AVal &v) {
  instantiate(v.kernel);
  KernelPlan &k = plan_.kernels[size_t(v.kernel)];
  bool present = false;
  for (auto &[value, role] : k.results)
    present |= value == v.value && role == "value";
  if (!present)
    k.results.push_back({v.value, "value"});
}

KernelPlan &Lowering::kernelAt(Context &ctx, int stage, SourceRange range) {
  auto it = ctx.kernelAtStage.find(stage);
  if (it != ctx.kernelAtStage.end())
    return plan_.kernels[size_t(it->second)];
  KernelPlan k;
  k.id = int(plan_.kernels.size());
  k.name = ctx.name + "." + std::to_string(ctx.kernelsMade++);
  k.range = range;
  ctx.kernelAtStage[stage] = k.id;
  ctx.pending.push_back(k.id);
  owner_[k.id] = &ctx;
  plan_.kernels.push_back(std::move(k));
  return plan_.kernels.back();
}

void Lowering::instantiate(int id) {
  auto owner = owner_.find(id);
  if (owner == owner_.end())
    return;
  Context &ctx = *owner->second;
  for (auto it = ctx.kernelAtStage.begin(); it != ctx.kernelAtStage.end(); ++it)
    if (it->second == id) {
      ctx.kernelAtStage.erase(it);
      break;
    }
  ctx.pending.erase(std::find(ctx.pending.begin(), ctx.pending.end(), id));
  UnfoldStep s = makeStep(UnfoldStep::Kind::Instance, "instance " + plan_.kernels[size_t(id)].name);
  s.kernel = id;
  ctx.steps->push_back(std::move(s));
  owner_.erase(owner);
}

void Lowering::finish(Context &ctx) {
  while (!ctx.pending.empty())
    instantiate(ctx.pending.front());
}

PlanOperand Lowering::operandIn(KernelPlan &k, const AVal &v) {
  PlanOperand operand;
  if (v.kind == AVal::Kind::Host && v.constant) {
    operand.kind = PlanOperand::Kind::Constant;
    operand.constant = v.text;
    return operand;
  }
  if (v.kind == AVal::Kind::Host) {
    operand.kind = PlanOperand::Kind::Host;
    operand.index = indexOf(k.hostInputs, v);
    return operand;
  }
  if (v.kind == AVal::Kind::Local && v.kernel == k.id) {
    operand.index = v.value;
    return operand;
  }
  operand.kind = PlanOperand::Kind::Argument;
  StepValue value = valueOf(v);
  std::string source = textOf(value);
  auto found = std::find(k.argSources.begin(), k.argSources.end(), source);
  operand.index = int(found - k.argSources.begin());
  if (found == k.argSources.end()) {
    k.args.push_back(v.type);
    k.argSources.push_back(source);
    k.argValues.push_back(std::move(value));
  }
  return operand;
}

int Lowering::indexOf(std::vector<HostInput> &inputs, const AVal &v) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].source == v.text)
      return int(i);
  inputs.push_back({v.text, v.type, v.expr});
  return int(inputs.size() - 1);
}

AVal Lowering::emit(Context &ctx, const std::string &name, const std::vector<AVal> &operands,
                    TypeRef type, double flops, SourceRange range, std::string attribute) {
  int stage = 0;
  for (const AVal &o : operands)
    if (o.isTensorLike())
      stage = std::max(stage, o.stage);
  KernelPlan &k = kernelAt(ctx, stage, range);
  if (!fusing_.empty() &&
      std::find(k.fuses.begin(), k.fuses.end(), fusing_.back()) == k.fuses.end())
    k.fuses.push_back(fusing_.back());
  PlanOp op;
  op.name = name;
  op.type = std::move(type);
  op.flops = flops;
  op.attribute = std::move(attribute);
  for (const AVal &o : operands)
    if (o.isTensorLike() || o.kind == AVal::Kind::Host)
      op.operands.push_back(operandIn(k, o));
  AVal v;
  v.kind = AVal::Kind::Local;
  v.kernel = k.id;
  v.stage = stage;
  v.value = sameOp(k, op);
  if (v.value < 0) {
    k.ops.push_back(std::move(op));
    v.value = int(k.ops.size() - 1);
  }
  v.type = k.ops[size_t(v.value)].type;
  return v;
}

int Lowering::sameOp(const KernelPlan &k, const PlanOp &op) {
  if (op.name == "dropout")
    return -1;
  for (size_t i = 0; i < k.ops.size(); ++i) {
    const PlanOp &o = k.ops[i];
    if (o.name != op.name || o.attribute != op.attribute || !sameType(o.type, op.type) ||
        o.operands.size() != op.operands.size())
      continue;
    bool same = true;
    for (size_t j = 0; j < o.operands.size(); ++j)
      same &= o.operands[j].kind == op.operands[j].kind &&
              o.operands[j].index == op.operands[j].index &&
              o.operands[j].constant == op.operands[j].constant;
    if (same)
      return int(i);
  }
  return -1;
}

int64_t Lowering::width(const TypeRef &t) {
  int64_t n = 1;
  for (int64_t d : t->shape)
    n *= d;
  return n;
}

UnfoldStep Lowering::structuralStep(const std::string &name, const std::vector<AVal> &args,
                                    Context &, const std::string &shown) {
  std::vector<StepValue> values;
  std::string list;
  for (const AVal &a : args) {
    values.push_back(valueOf(a));
    list += (list.empty() ? "" : ", ") + textOf(values.back());
  }
  return makeStep(UnfoldStep::Kind::Structural, shown.empty() ? name + "(" + list + ")" : shown,
                  name, std::move(values));
}

AVal Lowering::structural(Context &ctx, UnfoldStep s, const TypeRef &type, int inputStage) {
  s.target = "%" + std::to_string(handles_++);
  s.type = type;
  s.text = s.target + " = " + s.text;
  ctx.steps->push_back(std::move(s));
  return handleFor(ctx.steps->back().target, type, inputStage + 1);
}

int Lowering::maxStage(const std::vector<AVal> &values) {
  int s = 0;
  for (const AVal &v : values) {
    if (v.isTensorLike())
      s = std::max(s, v.stage);
    if (v.kind == AVal::Kind::Tuple)
      s = std::max(s, maxStage(v.elements));
  }
  return s;
}

} // namespace foldc::lowering

namespace foldc {

std::string KernelPlan::identity() const {
  std::string key;
  for (const TypeRef &a : args)
    key += toString(a) + ";";
  // Host sources differ per call site; their types, constants and parameters do not.
  for (const HostInput &h : hostInputs)
    key += toString(h.type) + ";";
  key += "|";
  for (const PlanOp &op : ops) {
    key += op.name + "(";
    for (const PlanOperand &o : op.operands)
      key += std::to_string(int(o.kind)) + ":" + std::to_string(o.index) + o.constant + ",";
    key += op.attribute + "):" + toString(op.type) + ";";
  }
  for (const auto &[value, role] : results)
    key += std::to_string(value) + role + ";";
  return key;
}

double KernelPlan::flops() const {
  double total = 0;
  for (const PlanOp &op : ops)
    total += op.flops;
  return total;
}

BatchPlan analyzeBatching(const TypedProgram &program) { return lowering::Lowering(program).run(); }

} // namespace foldc
