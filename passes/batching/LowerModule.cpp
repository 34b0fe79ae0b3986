// Lowering to the batch plan (see LowerToPlan.h): the module's tables
// (data types, parameters), the walk over functions and statements, the
// steps, and kernel construction.
#include "passes/batching/LowerToPlan.h"
#include "passes/batching/Lowering.h"

#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"

#include <algorithm>
#include <filesystem>

namespace foldc::lowering {

std::shared_ptr<HostExpr> hostExpr(HostExpr::Kind kind, TypeRef type,
                                   std::vector<HostExprRef> operands) {
  auto e = std::make_shared<HostExpr>();
  e->kind = kind;
  e->type = std::move(type);
  e->operands = std::move(operands);
  return e;
}

BatchPlan Lowering::run() {
  const Module &module = *program_.module;
  plan_.fileName = module.fileName;
  const FunctionDecl *model = program_.names->model;
  plan_.modelName = model ? model->name : std::filesystem::path(module.fileName).stem().string();
  for (const DeclPtr &d : module.decls)
    if (auto *import = dyn_cast<ImportDecl>(d.get()))
      plan_.imports.push_back({import->name});
  collectDataTypes();
  collectParams();
  // Every function's index first: calls may name a def declared later.
  std::vector<const FunctionDecl *> lowered;
  for (const DeclPtr &d : module.decls)
    if (auto *fn = dyn_cast<FunctionDecl>(d.get())) {
      if (!fn->isModel() && inlinable(*fn)) {
        if (!fn->instance || !fn->instance->prelude) // the prelude's are layers to the user
          plan_.inlined.push_back(fn->name);
        continue;
      }
      functionIndex_[fn] = int(plan_.functions.size());
      plan_.functions.emplace_back();
      lowered.push_back(fn);
    }
  for (const FunctionDecl *fn : lowered)
    lowerFunction(*fn);
  if (model)
    checkModel(*model);
  mergeIdenticalKernels();
  markSuspendingFunctions(plan_);
  return std::move(plan_);
}

void Lowering::collectDataTypes() {
  for (const DeclPtr &d : program_.module->decls) {
    auto *data = dyn_cast<DataDecl>(d.get());
    if (!data)
      continue;
    PlanDataType t;
    t.decl = data;
    t.name = data->name;
    t.isRecord = data->isRecord;
    for (const VariantDecl &v : data->variants) {
      PlanDataType::Variant variant{v.name, {}};
      for (const FieldDecl &f : v.fields)
        variant.fields.push_back({f.name, program_.fieldTypes.at(&f)});
      t.variants.push_back(std::move(variant));
    }
    plan_.dataTypes.push_back(std::move(t));
  }
}

/// Parameters in declaration order: global params, each def's params
/// (`DEF.NAME`), each layer's (`LAYER.W`...), with the initialisers the type
/// checker gave them.
void Lowering::collectParams() {
  auto fromInfo = [](std::string key, const ParamInfo &info, TrainingOptions training = {}) {
    return PlanParam{std::move(key), info.type->shape,   info.init,
                     false,          training.trainable, training.learningRateScale};
  };
  for (const DeclPtr &d : program_.module->decls) {
    if (auto *p = dyn_cast<GlobalParamDecl>(d.get())) {
      plan_.params.push_back(fromInfo(p->name, program_.params.at(&p->param)));
    } else if (auto *fn = dyn_cast<FunctionDecl>(d.get())) {
      auto instance = program_.instances.find(fn);
      TrainingOptions training =
          instance == program_.instances.end() ? TrainingOptions{} : instance->second;
      for (const StmtPtr &st : fn->body)
        if (auto *ps = dyn_cast<ParamStmt>(st.get()))
          plan_.params.push_back(
              fromInfo(fn->name + "." + ps->param.name, program_.params.at(&ps->param), training));
    } else if (auto *l = dyn_cast<LayerDecl>(d.get())) {
      auto it = program_.layers.find(l);
      if (it == program_.layers.end())
        continue;
      const LayerInfo &layer = it->second;
      bool embedding = layer.kind == LayerKind::Embedding;
      for (const LayerInfo::Param &p : layer.params)
        plan_.params.push_back(PlanParam{l->name + "." + p.name, p.shape, p.init, embedding,
                                         layer.training.trainable,
                                         layer.training.learningRateScale});
    }
  }
}

int Lowering::paramIndex(const std::string &key) const {
  for (size_t i = 0; i < plan_.params.size(); ++i)
    if (plan_.params[i].key == key)
      return int(i);
  return -1;
}

int Lowering::metricIndex(const std::string &name) {
  auto it = std::find(plan_.metrics.begin(), plan_.metrics.end(), name);
  if (it != plan_.metrics.end())
    return int(it - plan_.metrics.begin());
  plan_.metrics.push_back(name);
  return int(plan_.metrics.size() - 1);
}

namespace {
/// Whether the generated `outputJson` can print a value of `type`.
bool printable(const TypeRef &type) {
  switch (type->kind) {
  case TypeKind::Tensor:
  case TypeKind::Int:
  case TypeKind::Float:
  case TypeKind::Bool:
  case TypeKind::String:
    return true;
  case TypeKind::Tuple:
    return std::all_of(type->elements.begin(), type->elements.end(), printable);
  case TypeKind::List:
    return printable(type->element0());
  case TypeKind::Optional:
  case TypeKind::Data:
  case TypeKind::Block:
  case TypeKind::Error:
    return false;
  }
  return false;
}
} // namespace

void Lowering::checkModel(const FunctionDecl &model) {
  if (model.params.size() != 1) {
    diag_.error(model.nameRange) << "a model takes exactly one input (the example), found "
                                 << model.params.size();
    return;
  }
  plan_.model = functionIndex_.at(&model);
  plan_.exampleType = program_.bindingTypes.at(&model.params[0]);
  if (!plan_.outputType)
    plan_.outputType = types::tuple({}); // a model without `output` infers `[]` for each example
}

void Lowering::mergeIdenticalKernels() {
  std::map<KernelKey, int> first;
  for (KernelPlan &k : plan_.kernels) {
    auto [it, inserted] = first.emplace(k.key(), k.id);
    if (!inserted)
      k.sameAs = it->second;
  }
}

LoweredValue Lowering::notSupported(SourceRange at, const std::string &what, const TypeRef &type) {
  diag_.error(at) << what << " is not supported yet";
  return LoweredValue::none(type);
}

bool Lowering::calls(const FunctionDecl &fn, const FunctionDecl &target,
                     std::set<const FunctionDecl *> &seen) const {
  if (!seen.insert(&fn).second)
    return false;
  bool found = false;
  std::function<void(const Expr &)> visit = [&](const Expr &e) {
    if (auto *name = dyn_cast<NameExpr>(&e)) {
      auto sym = program_.names->names.find(name);
      if (sym != program_.names->names.end() && sym->second.kind == Symbol::Kind::Def) {
        auto *callee = static_cast<const FunctionDecl *>(sym->second.decl);
        found |= callee == &target || calls(*callee, target, seen);
      }
    }
    forEachSubexpression(e, visit);
  };
  forEachBodyExpression(fn, visit);
  return found;
}

bool Lowering::inlinable(const FunctionDecl &fn) {
  if (auto it = inlinable_.find(&fn); it != inlinable_.end())
    return it->second;
  // A def that takes a block is specialised to the block at each call: it is
  // inlined unless it is recursive (then calling the block is not supported).
  for (const Parameter &p : fn.params)
    if (program_.bindingTypes.at(&p)->kind == TypeKind::Block) {
      std::set<const FunctionDecl *> seen;
      return inlinable_[&fn] = !calls(fn, fn, seen);
    }
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
              builtinInfo(sym->second.builtin.callable).role == BuiltinRole::Combinator)
            ok = false;
          if (sym->second.kind == Symbol::Kind::Def &&
              !inlinable(*static_cast<const FunctionDecl *>(sym->second.decl)))
            ok = false;
          if (sym->second.kind == Symbol::Kind::Local && !isBlockParam(fn, sym->second.binding))
            ok = false; // a block held in a local: only known where the def is applied
        }
      } else if (auto *lambda = dyn_cast<LambdaExpr>(call.callee.get())) {
        visit(*lambda->body); // applied where it is written (a layer's `act: none`)
      } else {
        ok = false;
      }
      for (const Argument &a : call.args)
        visit(*a.value);
      return;
    }
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::StringLit:
    case ExprKind::BoolLit:
    case ExprKind::Name:
    case ExprKind::Member:
    case ExprKind::Index:
    case ExprKind::Slice:
    case ExprKind::Subscripts:
    case ExprKind::Neg:
    case ExprKind::Not:
    case ExprKind::Binary:
    case ExprKind::Arrow:
    case ExprKind::Tuple:
      forEachSubexpression(e, visit);
    }
  };
  forEachBodyExpression(fn, visit);
  inlinable_[&fn] = ok;
  return ok;
}

bool Lowering::isBlockParam(const FunctionDecl &fn, const void *binding) const {
  for (const Parameter &p : fn.params)
    if (&p == binding && program_.bindingTypes.at(&p)->kind == TypeKind::Block)
      return true;
  return false;
}

void Lowering::forEachSubexpression(const Expr &e, const std::function<void(const Expr &)> &f) {
  if (auto *m = dyn_cast<MemberExpr>(&e))
    f(*m->base);
  else if (auto *i = dyn_cast<IndexExpr>(&e)) {
    f(*i->base);
    f(*i->index);
  } else if (auto *s = dyn_cast<SubscriptsExpr>(&e)) {
    f(*s->base);
    for (const Subscript &x : s->subscripts)
      for (const ExprPtr *part : {&x.index, &x.lo, &x.hi})
        if (*part)
          f(**part);
  } else if (auto *s = dyn_cast<SliceExpr>(&e)) {
    f(*s->base);
    if (s->lo)
      f(*s->lo);
    if (s->hi)
      f(*s->hi);
  } else if (auto *n = dyn_cast<NegExpr>(&e))
    f(*n->operand);
  else if (auto *n = dyn_cast<NotExpr>(&e))
    f(*n->operand);
  else if (auto *b = dyn_cast<BinaryExpr>(&e)) {
    f(*b->lhs);
    f(*b->rhs);
  } else if (auto *p = dyn_cast<PipeExpr>(&e)) {
    f(*p->lhs);
    f(*p->rhs);
  } else if (auto *t = dyn_cast<TupleExpr>(&e)) {
    for (auto &x : t->elements)
      f(*x);
  } else if (auto *l = dyn_cast<ListExpr>(&e)) {
    for (auto &x : l->elements)
      f(*x);
  } else if (auto *c = dyn_cast<CallExpr>(&e)) {
    f(*c->callee);
    for (const Argument &a : c->args)
      f(*a.value);
  } else if (auto *lambda = dyn_cast<LambdaExpr>(&e))
    f(*lambda->body);
  else if (auto *m = dyn_cast<MatchExpr>(&e)) {
    f(*m->scrutinee);
    for (const MatchArm &arm : m->arms)
      f(*arm.body);
  } else if (auto *i = dyn_cast<IfExpr>(&e)) {
    f(*i->cond);
    f(*i->thenExpr);
    f(*i->elseExpr);
  }
}

void Lowering::forEachBodyExpression(const FunctionDecl &fn,
                                     const std::function<void(const Expr &)> &f) {
  if (fn.exprBody)
    f(*fn.exprBody);
  for (const StmtPtr &s : fn.body)
    if (const Expr *value = valueOf(*s))
      f(*value);
}

const Expr *Lowering::valueOf(const Stmt &s) {
  if (auto *let = dyn_cast<LetStmt>(&s))
    return let->value.get();
  if (auto *v = dyn_cast<ValueStmt>(&s))
    return v->value.get();
  if (auto *m = dyn_cast<MetricStmt>(&s))
    return m->value.get();
  return nullptr;
}

// ------------------------------------------------------------------ functions

int Lowering::functionIndex(const FunctionDecl &fn) { return functionIndex_.at(&fn); }

void Lowering::lowerFunction(const FunctionDecl &fn) {
  function_ = &plan_.functions[size_t(functionIndex(fn))];
  loops_ = 0;
  function_->name = fn.name;
  function_->isModel = fn.isModel();
  function_->range = fn.nameRange;
  function_->result = program_.signatures.at(&fn)->result;
  Context ctx(fn.name, &function_->steps);
  for (const Parameter &p : fn.params) {
    TypeRef t = program_.bindingTypes.at(&p);
    int local = newLocal(PlanLocal::Kind::Parameter, t, p.name);
    function_->params.push_back(local);
    env_[&p] = fromHandle({local, {}}, p.name, t, 0);
  }
  if (fn.exprBody)
    returnStep(eval(*fn.exprBody, ctx), fn.exprBody->range(), ctx);
  for (const StmtPtr &s : fn.body)
    lowerStmt(*s, ctx);
  finish(ctx);
  function_ = nullptr;
}

int Lowering::newLocal(PlanLocal::Kind kind, const TypeRef &type, const std::string &sourceName,
                       const std::string &shownAs) {
  std::string shown = shownAs.empty() ? sourceName : shownAs;
  if (kind == PlanLocal::Kind::StepResult)
    shown = "%" + std::to_string(std::count_if(
                      function_->locals.begin(), function_->locals.end(),
                      [](const PlanLocal &l) { return l.kind == PlanLocal::Kind::StepResult; }));
  function_->locals.push_back({kind, sourceName, type, shown});
  return int(function_->locals.size() - 1);
}

LoweredValue Lowering::fromHandle(foldc::Handle handle, const std::string &text,
                                  const TypeRef &type, int stage) {
  if (type->kind == TypeKind::Tuple && containsTensor(type)) {
    LoweredValue t;
    t.kind = LoweredValue::Kind::Tuple;
    t.type = type;
    for (size_t i = 0; i < type->elements.size(); ++i) {
      foldc::Handle element = handle;
      element.path.push_back(int(i));
      t.elements.push_back(
          fromHandle(element, text + "." + std::to_string(i), type->elements[i], stage));
    }
    return t;
  }
  if (type->isHost()) {
    auto e = hostExpr(HostExpr::Kind::Local, type);
    e->handle = std::move(handle);
    return LoweredValue::host(text, type, e);
  }
  LoweredValue v;
  v.kind = LoweredValue::Kind::Handle;
  v.text = text;
  v.type = type;
  v.stage = stage;
  v.handle = std::move(handle);
  return v;
}

UnfoldStep Lowering::makeStep(UnfoldStep::Kind kind, std::string text,
                              std::vector<StepValue> values) {
  UnfoldStep s;
  s.kind = kind;
  s.text = std::move(text);
  s.values = std::move(values);
  return s;
}

void Lowering::returnStep(const LoweredValue &returned, SourceRange at, Context &ctx) {
  if (returned.kind == LoweredValue::Kind::None)
    return;
  StepValue value = valueOf(asDeclared(returned, function_->result, at, ctx));
  finish(ctx);
  ctx.steps->push_back(makeStep(UnfoldStep::Kind::Return, "return " + value.text, {value}));
}

LoweredValue Lowering::asDeclared(const LoweredValue &v, const TypeRef &declared, SourceRange at,
                                  Context &ctx) {
  if (!declared)
    return v;
  if (declared->kind == TypeKind::Tensor && v.kind == LoweredValue::Kind::Host)
    return emit(ctx, OpKind::Tensor, {v}, types::f32(), at); // `return 0.0`, a host metric
  if (declared->kind != TypeKind::Tuple ||
      (v.kind != LoweredValue::Kind::Tuple && v.kind != LoweredValue::Kind::Host))
    return v;
  LoweredValue tuple;
  tuple.kind = LoweredValue::Kind::Tuple;
  tuple.type = declared;
  tuple.text = v.text;
  for (size_t i = 0; i < declared->elements.size(); ++i)
    tuple.elements.push_back(asDeclared(element(v, i), declared->elements[i], at, ctx));
  return tuple;
}

void Lowering::lowerStmt(const Stmt &s, Context &ctx) {
  switch (s.kind()) {
  case StmtKind::Let: {
    auto &let = static_cast<const LetStmt &>(s);
    bind(*let.pattern, evalLazy(*let.value, ctx)); // a parameter stays unread until used
    return;
  }
  case StmtKind::Param:
    return;             // params are read by the operations that use them
  case StmtKind::Layer: // instantiation made it a declaration (or reported it)
    return;
  case StmtKind::Return:
    returnStep(eval(*static_cast<const ValueStmt &>(s).value, ctx), s.range(), ctx);
    return;
  case StmtKind::Loss:
    markResult(eval(*static_cast<const ValueStmt &>(s).value, ctx), ResultRole::Loss, -1, ctx,
               s.range());
    return;
  case StmtKind::Output: {
    const Expr &value = *static_cast<const ValueStmt &>(s).value;
    TypeRef type = program_.typeOf(value);
    if (!printable(type)) {
      notSupported(value.range(),
                   "an output of type " + toString(type) +
                       " (outputs are tensors, host scalars, tuples and lists of them)",
                   type);
      return;
    }
    plan_.outputType = type;
    markResult(eval(value, ctx), ResultRole::Output, -1, ctx, s.range());
    return;
  }
  case StmtKind::Metric: {
    auto &m = static_cast<const MetricStmt &>(s);
    markResult(eval(*m.value, ctx), ResultRole::Metric, metricIndex(m.name), ctx, s.range());
    return;
  }
  }
}

void Lowering::markResult(LoweredValue v, ResultRole role, int metric, Context &ctx,
                          SourceRange at) {
  if (v.kind == LoweredValue::Kind::None)
    return;
  if (role == ResultRole::Metric) // a host number or bool: as f32
    v = asDeclared(v, types::f32(), at, ctx);
  if (v.kind == LoweredValue::Kind::Local) {
    plan_.kernels[size_t(v.kernel)].results.push_back({v.value, role, metric});
    return;
  }
  StepValue value = valueOf(v);
  std::string shown = roleText(plan_, role, metric);
  UnfoldStep step = makeStep(UnfoldStep::Kind::Role, shown + " " + value.text, {value});
  step.role = role;
  step.metric = metric;
  ctx.steps->push_back(std::move(step));
}

void Lowering::bind(const Pattern &p, const LoweredValue &v) {
  if (auto *n = dyn_cast<NamePattern>(&p)) {
    env_[n] = v;
  } else if (auto *t = dyn_cast<TuplePattern>(&p)) {
    for (size_t i = 0; i < t->elements.size(); ++i)
      bind(*t->elements[i], element(v, i));
  }
}

LoweredValue Lowering::element(const LoweredValue &v, size_t i) {
  TypeRef t = v.type && v.type->kind == TypeKind::Tuple && i < v.type->elements.size()
                  ? v.type->elements[i]
                  : types::errorType();
  std::string text = v.text + "." + std::to_string(i);
  switch (v.kind) {
  case LoweredValue::Kind::Tuple:
    return v.elements[i];
  case LoweredValue::Kind::Host: {
    auto e = hostExpr(HostExpr::Kind::Element, t, {v.expr});
    e->integer = int64_t(i);
    return LoweredValue::host(text, t, e);
  }
  case LoweredValue::Kind::Handle: {
    foldc::Handle h = v.handle;
    h.path.push_back(int(i));
    return fromHandle(h, text, t, v.stage);
  }
  case LoweredValue::Kind::Local:
  case LoweredValue::Kind::Param:
  case LoweredValue::Kind::Block:
  case LoweredValue::Kind::None:
    return LoweredValue::none(t);
  }
  return LoweredValue::none(t);
}

StepValue Lowering::valueOf(const LoweredValue &v) {
  StepValue out;
  out.type = v.type;
  switch (v.kind) {
  case LoweredValue::Kind::Local:
    materialize(v);
    out.kind = StepValue::Kind::KernelResult;
    out.kernel = v.kernel;
    out.op = v.value;
    out.text = plan_.kernels[size_t(v.kernel)].name + "%" + std::to_string(v.value);
    return out;
  case LoweredValue::Kind::Tuple:
    out.kind = StepValue::Kind::Tuple;
    for (const LoweredValue &e : v.elements) {
      out.elements.push_back(valueOf(e));
      out.text += (out.text.empty() ? "" : ", ") + out.elements.back().text;
    }
    out.text = "(" + out.text + ")";
    return out;
  case LoweredValue::Kind::Host:
    out.kind = StepValue::Kind::Host;
    out.host = v.expr;
    out.text = v.text;
    return out;
  case LoweredValue::Kind::Handle:
  case LoweredValue::Kind::Param: // read before any step holds it (eval): if not, the
  case LoweredValue::Kind::Block: // verifier reports the step's undefined local
  case LoweredValue::Kind::None:
    out.handle = v.handle;
    out.text = v.text;
    return out;
  }
  return out;
}

void Lowering::materialize(const LoweredValue &v) {
  instantiate(v.kernel);
  KernelPlan &k = plan_.kernels[size_t(v.kernel)];
  if (k.valueResult(v.value) < 0)
    k.results.push_back({v.value, ResultRole::Value, -1});
}

// ------------------------------------------------------------------ kernels

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
  s.range = plan_.kernels[size_t(id)].range;
  ctx.steps->push_back(std::move(s));
  owner_.erase(owner);
}

void Lowering::finish(Context &ctx) {
  while (!ctx.pending.empty())
    instantiate(ctx.pending.front());
}

PlanOperand Lowering::operandIn(KernelPlan &k, const LoweredValue &v) {
  PlanOperand operand;
  if (v.kind == LoweredValue::Kind::Host && v.constant) {
    operand.kind = PlanOperand::Kind::Constant;
    operand.constant = v.number;
    return operand;
  }
  if (v.kind == LoweredValue::Kind::Host) {
    operand.kind = PlanOperand::Kind::Host;
    operand.index = indexOf(k.hostInputs, v);
    return operand;
  }
  if (v.kind == LoweredValue::Kind::Local && v.kernel == k.id) {
    operand.index = v.value;
    return operand;
  }
  operand.kind = PlanOperand::Kind::Argument;
  StepValue value = valueOf(v);
  std::string source = value.text;
  auto found = std::find(k.argSources.begin(), k.argSources.end(), source);
  operand.index = int(found - k.argSources.begin());
  if (found == k.argSources.end()) {
    k.args.push_back(v.type);
    k.argSources.push_back(source);
    k.argValues.push_back(std::move(value));
  }
  return operand;
}

int Lowering::indexOf(std::vector<HostInput> &inputs, const LoweredValue &v) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].expr == v.expr || sameSource(inputs[i].source, v.text))
      return int(i);
  inputs.push_back({v.text, v.type, v.expr, 1});
  return int(inputs.size() - 1);
}

namespace {
double flopsOf(const PlanOp &op, const std::vector<LoweredValue> &operands) {
  double width = double(widthOf(op.type));
  switch (opInfo(op.kind).flops) {
  case FlopRule::Zero:
    return 0;
  case FlopRule::Width:
    return width;
  case FlopRule::TwiceWidth:
    return 2 * width;
  case FlopRule::MulAdd: {
    // Linear: 2 * in * out. MatMul [.., n] @ [n, m]: 2 * (rows of lhs) * n * m.
    const TypeRef &lhs = operands[0].type;
    int64_t inner = lhs->shape.empty() ? 1 : lhs->shape.back();
    return 2 * double(widthOf(lhs)) * width / double(std::max<int64_t>(1, widthOf(lhs) / inner));
  }
  }
  return 0;
}
} // namespace

LoweredValue Lowering::emit(Context &ctx, OpKind kind, const std::vector<LoweredValue> &operands,
                            TypeRef type, SourceRange range, OpAttrs attrs) {
  if (preludeUse_)
    range = *preludeUse_;
  for (const LoweredValue &o : operands)
    if (o.kind == LoweredValue::Kind::None || o.kind == LoweredValue::Kind::Block)
      return LoweredValue::none(type); // already reported
  if (!type->isTensor())
    return notSupported(range,
                        "'" + std::string(opInfo(kind).name) +
                            "' applied inside a composition, where its result type is "
                            "not known,",
                        type);
  int stage = 0;
  for (const LoweredValue &o : operands)
    if (o.isTensorLike())
      stage = std::max(stage, o.stage);
  KernelPlan &k = kernelAt(ctx, stage, range);
  if (!fusing_.empty() &&
      std::find(k.fuses.begin(), k.fuses.end(), fusing_.back()) == k.fuses.end())
    k.fuses.push_back(fusing_.back());
  PlanOp op;
  op.kind = kind;
  op.type = std::move(type);
  op.range = range;
  op.attrs = attrs;
  for (const LoweredValue &o : operands)
    op.operands.push_back(operandIn(k, o));
  op.flops = flopsOf(op, operands);
  if (attrs.param >= 0)
    k.params.insert(attrs.param);
  // `vector` reads a host list: as many floats a row as it gives.
  if (kind == OpKind::Vector && op.operands[0].kind == PlanOperand::Kind::Host)
    k.hostInputs[size_t(op.operands[0].index)].width = int(widthOf(op.type));
  LoweredValue v;
  v.kind = LoweredValue::Kind::Local;
  v.kernel = k.id;
  v.stage = stage;
  v.value = addOrReuseOp(k, std::move(op));
  v.type = k.ops[size_t(v.value)].type;
  return v;
}

LoweredValue Lowering::emitWithParam(Context &ctx, OpKind kind,
                                     const std::vector<LoweredValue> &operands, TypeRef type,
                                     SourceRange range, const std::string &key) {
  OpAttrs attrs;
  attrs.param = paramIndex(key);
  return emit(ctx, kind, operands, std::move(type), range, attrs);
}

int Lowering::addOrReuseOp(KernelPlan &k, PlanOp op) {
  std::vector<int> *same = nullptr;
  if (op.kind != OpKind::Dropout) {
    same = &opsByKey_[{k.id, op.kind, op.attrs, op.operands}];
    for (int i : *same)
      if (sameType(k.ops[size_t(i)].type, op.type))
        return i;
  }
  k.ops.push_back(std::move(op));
  int index = int(k.ops.size() - 1);
  if (same)
    same->push_back(index);
  return index;
}

UnfoldStep Lowering::structuralStep(ListOp op, const std::vector<LoweredValue> &args,
                                    const std::string &shown) {
  std::vector<StepValue> values;
  std::string list;
  for (const LoweredValue &a : args) {
    values.push_back(valueOf(a));
    list += (list.empty() ? "" : ", ") + values.back().text;
  }
  UnfoldStep s = makeStep(UnfoldStep::Kind::Structural,
                          shown.empty() ? std::string(listOpName(op)) + "(" + list + ")" : shown,
                          std::move(values));
  s.listOp = op;
  return s;
}

LoweredValue Lowering::structural(Context &ctx, UnfoldStep s, const TypeRef &type, int inputStage) {
  s.target = newLocal(PlanLocal::Kind::StepResult, type);
  std::string name = shown(s.target);
  s.type = type;
  s.text = name + " = " + s.text;
  ctx.steps->push_back(std::move(s));
  return fromHandle({ctx.steps->back().target, {}}, name, type, inputStage + 1);
}

int Lowering::maxStage(const std::vector<LoweredValue> &values) {
  int s = 0;
  for (const LoweredValue &v : values) {
    if (v.isTensorLike())
      s = std::max(s, v.stage);
    if (v.kind == LoweredValue::Kind::Tuple)
      s = std::max(s, maxStage(v.elements));
  }
  return s;
}

} // namespace foldc::lowering

namespace foldc {

BatchPlan lowerToPlan(const TypedProgram &program, DiagnosticEngine &diag) {
  return lowering::Lowering(program, diag).run();
}

} // namespace foldc
