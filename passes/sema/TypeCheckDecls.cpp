// Type checking of declarations, def bodies and statements.
#include "passes/sema/TypeChecker.h"

#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"
#include "passes/sema/InstantiateLayers.h"

#include <cmath>
#include <functional>

namespace foldc {

TypeChecker::TypeChecker(TypedProgram &program, DiagnosticEngine &diag)
    : program_(program), names_(*program.names), consts_(*program.consts), diag_(diag) {}

void checkTypes(TypedProgram &program, DiagnosticEngine &diag) { TypeChecker(program, diag).run(); }

void TypeChecker::run() {
  const Module &module = *program_.module;
  for (const DeclPtr &decl : module.decls) {
    if (auto *p = dyn_cast<GlobalParamDecl>(decl.get()))
      program_.params[&p->param] = checkParam(p->param);
    else if (auto *l = dyn_cast<LayerDecl>(decl.get()))
      checkLayer(*l);
    else if (auto *d = dyn_cast<DataDecl>(decl.get()))
      for (const VariantDecl &v : d->variants)
        for (const FieldDecl &f : v.fields)
          fieldType(f);
  }
  for (const DeclPtr &decl : module.decls)
    if (auto *fn = dyn_cast<FunctionDecl>(decl.get()))
      checkFunction(*fn);
  checkRecursion();
}

//===------------------------------------------------------------- types
TypeRef TypeChecker::resolveType(const TypeExpr &type) {
  // Memoised so that a type written once is reported once, however often read.
  if (auto it = resolvedTypes_.find(&type); it != resolvedTypes_.end())
    return it->second;
  TypeRef resolved = resolveTypeUncached(type);
  resolvedTypes_[&type] = resolved;
  return resolved;
}

TypeRef TypeChecker::resolveTypeUncached(const TypeExpr &type) {
  switch (type.kind()) {
  case TypeExprKind::HostScalar:
    switch (static_cast<const HostScalarTypeExpr &>(type).scalar) {
    case HostScalar::Int:
      return types::intType();
    case HostScalar::Float:
      return types::floatType();
    case HostScalar::Bool:
      return types::boolType();
    case HostScalar::String:
      return types::stringType();
    }
    break;
  case TypeExprKind::Tensor: {
    auto &t = static_cast<const TensorTypeExpr &>(type);
    std::vector<int64_t> shape;
    for (const ExprPtr &d : t.dims) {
      auto n = consts_.positiveInt(*d, "a dimension", diag_);
      if (!n)
        return types::errorType();
      shape.push_back(*n);
    }
    return types::tensor(t.element, std::move(shape));
  }
  case TypeExprKind::Tuple: {
    std::vector<TypeRef> elements;
    for (const TypeExprPtr &e : static_cast<const TupleTypeExpr &>(type).elements)
      elements.push_back(resolveType(*e));
    return types::tuple(std::move(elements));
  }
  case TypeExprKind::List:
    return types::list(resolveType(*static_cast<const ListTypeExpr &>(type).element));
  case TypeExprKind::Optional:
    return types::optional(resolveType(*static_cast<const OptionalTypeExpr &>(type).element));
  case TypeExprKind::Block: {
    auto &b = static_cast<const BlockTypeExpr &>(type);
    TypeRef input = resolveType(*b.input);
    std::vector<TypeRef> params =
        input->kind == TypeKind::Tuple && isa<TupleTypeExpr>(b.input.get())
            ? input->elements
            : std::vector<TypeRef>{input};
    return types::block(std::move(params), resolveType(*b.output));
  }
  case TypeExprKind::Record:
    diag_.error(type.range()) << "anonymous record types are not supported; declare the record "
                                 "with 'data NAME = { ... };'";
    return types::errorType();
  case TypeExprKind::Named: {
    auto it = names_.typeNames.find(static_cast<const NamedTypeExpr *>(&type));
    return it == names_.typeNames.end() ? types::errorType() : types::data(it->second);
  }
  }
  return types::errorType();
}

TypeRef TypeChecker::fieldType(const FieldDecl &field) {
  if (auto it = program_.fieldTypes.find(&field); it != program_.fieldTypes.end())
    return it->second;
  TypeRef type = resolveType(*field.type);
  if (!type->isError() && !type->isHost()) {
    diag_.error(field.type->range())
        << "a data field holds host values (the example), found " << toString(type);
    type = types::errorType();
  }
  program_.fieldTypes[&field] = type;
  return type;
}

//===------------------------------------------------------------ params
ParamInfo TypeChecker::checkParam(const ParamDecl &param) {
  ParamInfo info;
  info.type = resolveType(*param.type);
  if (!info.type->isError() && info.type->kind != TypeKind::Tensor) {
    diag_.error(param.type->range()) << "a param is a tensor, found " << toString(info.type);
    info.type = types::errorType();
  }
  bool matrix = info.type->isTensor() && info.type->shape.size() >= 2;
  info.init = {matrix ? InitKind::Glorot : InitKind::Zeros};
  if (param.init)
    checkInitializer(*param.init, info.type, info.init);
  return info;
}

void TypeChecker::checkInitializer(const Expr &init, const TypeRef &paramType,
                                   Initializer &result) {
  const NameExpr *name = dyn_cast<NameExpr>(&init);
  const CallExpr *call = dyn_cast<CallExpr>(&init);
  if (call)
    name = dyn_cast<NameExpr>(call->callee.get());
  std::optional<BuiltinName> row = rowOf(name, BuiltinName::Table::Initializer);
  std::optional<InitKind> written = row ? std::optional(row->initializer) : std::nullopt;
  if (!written) {
    diag_.error(init.range()) << "expected an initialiser (zeros, ones, uniform(a, b), "
                                 "normal(std), glorot or constant(v)), found '"
                              << toSource(init) << "'";
    return;
  }
  size_t arity = size_t(initKindInfo(*written).arity);
  size_t given = call ? call->args.size() : 0;
  if (given != arity) {
    diag_.error(init.range()) << "initialiser '" << name->name << "' takes " << arity << " argument"
                              << (arity == 1 ? "" : "s") << ", found " << given;
    return;
  }
  if (*written == InitKind::Glorot && paramType->isTensor() && paramType->shape.size() < 2)
    diag_.error(init.range()) << "glorot needs a param of rank 2 or more, found "
                              << toString(paramType);
  result = {*written};
  for (size_t i = 0; i < given; ++i)
    if (auto v = consts_.evaluate(*call->args[i].value, &diag_))
      result.args[i] = v->asDouble();
}

//===------------------------------------------------------------ layers
/// "trainable: and lr_scale:": the options of the table that every layer takes.
static std::string layerOptionsText() {
  std::vector<std::string> names;
  for (Option option : optionsTakenBy(OptionTakenBy::Layers))
    names.push_back(std::string(optionInfo(option).name) + ":");
  return listedWithAnd(names);
}

void TypeChecker::checkLayer(const LayerDecl &layer) {
  const CallExpr *call = dyn_cast<CallExpr>(layer.constructor.get());
  const NameExpr *ctor = call ? dyn_cast<NameExpr>(call->callee.get()) : nullptr;
  std::optional<BuiltinName> row = rowOf(ctor, BuiltinName::Table::LayerConstructor);
  std::optional<LayerKind> kind = row ? std::optional(row->layer) : std::nullopt;
  if (!kind) {
    diag_.error(layer.constructor->range())
        << "expected a layer constructor (fc, embedding, lstm, gru or a layer definition of "
           "this program), found '"
        << toSource(*layer.constructor) << "'";
    return;
  }
  const LayerKindInfo &ctorInfo = layerKindInfo(*kind);
  std::vector<const Expr *> positional;
  const Expr *option = nullptr;
  LayerInfo info;
  for (const Argument &arg : call->args) {
    std::optional<Option> named = optionOf(arg);
    if (arg.name.empty()) {
      positional.push_back(arg.value.get());
    } else if (named && named == ctorInfo.option) {
      option = arg.value.get();
    } else if (named && optionInfo(*named).takenBy == OptionTakenBy::Layers) {
      if (!checkTrainingOption(arg, *named, info.training))
        return;
    } else {
      diag_.error(arg.range) << "'" << ctor->name << "' has no option '" << arg.name
                             << "' (every layer takes " << layerOptionsText()
                             << (ctorInfo.option
                                     ? ", '" + ctor->name + "' also " +
                                           std::string(optionInfo(*ctorInfo.option).name) + ":"
                                     : "")
                             << ")";
      return;
    }
  }
  auto sizes = layerSizes(ctorInfo, *call, positional);
  if (!sizes)
    return;
  auto in = consts_.positiveInt(*sizes->first, "a layer size", diag_);
  auto out = consts_.positiveInt(*sizes->second, "a layer size", diag_);
  if (!in || !out)
    return;
  info.kind = *kind;
  info.in = *in;
  info.out = *out;
  if (!layerSignature(info, option))
    return;
  program_.layers[&layer] = std::move(info);
}

/// An option every layer takes: `trainable: true|false` or `lr_scale:
/// NUMBER` (positive).
bool TypeChecker::checkTrainingOption(const Argument &arg, Option option,
                                      TrainingOptions &training) {
  switch (option) {
  case Option::Trainable: {
    auto *flag = dyn_cast<BoolLitExpr>(arg.value.get());
    if (!flag) {
      diag_.error(arg.value->range())
          << "trainable: takes true or false, found '" << toSource(*arg.value) << "'";
      return false;
    }
    training.trainable = flag->value;
    return true;
  }
  case Option::LrScale: {
    std::optional<ConstValue> scale = consts_.evaluate(*arg.value, &diag_);
    if (!scale)
      return false;
    if (!(scale->asDouble() > 0) || !std::isfinite(scale->asDouble())) {
      diag_.error(arg.value->range())
          << "lr_scale: must be a positive number (trainable: false freezes a layer), found "
          << scale->toString();
      return false;
    }
    training.learningRateScale = scale->asDouble();
    return true;
  }
  case Option::Axis: // not taken by every layer (checkLayer's caller reports them)
  case Option::Init:
    break;
  }
  return false;
}

/// The size expressions of a built-in layer: `rows, width`.
std::optional<std::pair<const Expr *, const Expr *>>
TypeChecker::layerSizes(const LayerKindInfo &ctor, const CallExpr &call,
                        const std::vector<const Expr *> &positional) {
  if (positional.size() == 2 && !isa<ArrowExpr>(positional[0]) && !isa<ArrowExpr>(positional[1]))
    return std::pair{positional[0], positional[1]};
  auto error = diag_.error(call.range());
  error << "'" << ctor.name << "' takes (rows, width)";
  if (ctor.option)
    error << " and an optional '" << optionInfo(*ctor.option).name << ":'";
  return std::nullopt;
}

/// A layer's block type and parameters, and what its option says.
bool TypeChecker::layerSignature(LayerInfo &info, const Expr *option) {
  switch (info.kind) {
  case LayerKind::Embedding: {
    info.blockType = types::block({types::intType()}, types::f32({info.out}));
    // Word vectors start small and random unless `init:` says otherwise.
    LayerInfo::Param table{"E", {info.in, info.out}, {InitKind::Uniform, {-0.05, 0.05}}};
    if (option)
      checkInitializer(*option, types::f32(table.shape), table.init);
    info.params = {std::move(table)};
    return true;
  }
  }
  return false;
}

//===-------------------------------------------------------- functions
TypeRef TypeChecker::signatureOf(const FunctionDecl &fn, SourceRange use) {
  if (auto it = program_.signatures.find(&fn); it != program_.signatures.end())
    return it->second;
  if (!fn.result) {
    if (fnState_[&fn] == State::InProgress) {
      diag_.error(use) << "recursive def '" << fn.name << "' needs its result type written";
      diag_.note(fn.nameRange) << "write it as 'def " << fn.name << "(...) -> TYPE'";
      return types::errorType();
    }
    checkFunction(fn); // infers the result from the body
    auto it = program_.signatures.find(&fn);
    return it == program_.signatures.end() ? types::errorType() : it->second;
  }
  std::vector<TypeRef> params;
  for (const Parameter &p : fn.params)
    params.push_back(resolveType(*p.type));
  TypeRef signature = types::block(std::move(params), resolveType(*fn.result));
  program_.signatures[&fn] = signature;
  return signature;
}

void TypeChecker::checkFunction(const FunctionDecl &fn) {
  if (fnState_[&fn] != State::Unchecked)
    return;
  fnState_[&fn] = State::InProgress;
  fnStack_.push_back(&fn);
  DiagnosticContext where = instanceContext(diag_, fn);
  if (fn.instance)
    checkInstanceOptions(fn);
  FunctionContext context{&fn, nullptr, nullptr};
  std::vector<TypeRef> paramTypes;
  if (fn.result)
    context.declaredResult = signatureOf(fn, fn.nameRange)->result;
  for (const Parameter &p : fn.params) {
    TypeRef t = resolveType(*p.type);
    if (fn.isModel() && !t->isError() && !t->isHost()) {
      diag_.error(p.type->range())
          << "a model's input is the example, a host value; found " << toString(t);
      t = types::errorType();
    }
    program_.bindingTypes[&p] = t;
    paramTypes.push_back(t);
  }
  if (fn.exprBody) {
    context.result = check(*fn.exprBody);
    expectResult(context, context.result, *fn.exprBody);
  }
  for (size_t i = 0; i < fn.body.size(); ++i)
    checkStmt(*fn.body[i], context, i + 1 == fn.body.size());
  if (!fn.isModel() && !fn.exprBody && !context.result) {
    diag_.error(fn.nameRange) << "def '" << fn.name
                              << "' does not return a value; its body must "
                                 "end with 'return'";
  }
  TypeRef result = context.declaredResult ? context.declaredResult
                   : context.result       ? context.result
                                          : types::tuple({});
  if (!program_.signatures.count(&fn))
    program_.signatures[&fn] = types::block(std::move(paramTypes), result);
  fnStack_.pop_back();
  fnState_[&fn] = State::Done;
}

/// The instance's `trainable:` and `lr_scale:` (its own or its encloser's).
void TypeChecker::checkInstanceOptions(const FunctionDecl &fn) {
  TrainingOptions &training = program_.instances[&fn];
  for (const Argument &arg : fn.instance->options)
    if (auto option = names_.options.find(&arg); option != names_.options.end())
      checkTrainingOption(arg, option->second, training);
}

void TypeChecker::checkStmt(const Stmt &stmt, FunctionContext &context, bool isLast) {
  const FunctionDecl &fn = *context.fn;
  switch (stmt.kind()) {
  case StmtKind::Let: {
    auto &let = static_cast<const LetStmt &>(stmt);
    bindPattern(*let.pattern, check(*let.value));
    return;
  }
  case StmtKind::Param: {
    const ParamDecl &p = static_cast<const ParamStmt &>(stmt).param;
    if (fn.isModel())
      diag_.error(p.range) << "a param inside a body belongs to a def; declare model params at "
                              "top level";
    ParamInfo info = checkParam(p);
    program_.bindingTypes[&p] = info.type;
    program_.params[&p] = info;
    return;
  }
  case StmtKind::Return: {
    const Expr &value = *static_cast<const ValueStmt &>(stmt).value;
    TypeRef type = check(value);
    if (fn.isModel()) {
      diag_.error(stmt.range()) << "a model gives its result with 'output', not 'return'";
      return;
    }
    if (!isLast)
      diag_.error(stmt.range()) << "'return' must be the last statement of a def";
    context.result = type;
    expectResult(context, type, value);
    return;
  }
  case StmtKind::Loss: {
    const Expr &value = *static_cast<const ValueStmt &>(stmt).value;
    TypeRef type = check(value);
    if (!type->isError() && !(type->isScalarTensor() && type->element == ElementType::F32))
      diag_.error(value.range()) << "a loss is an f32 scalar; expected f32, found "
                                 << toString(type);
    return;
  }
  case StmtKind::Metric: {
    const Expr &value = *static_cast<const MetricStmt &>(stmt).value;
    TypeRef type = check(value);
    bool scalar = type->isScalarTensor() || type->kind == TypeKind::Bool || type->isHostNumber();
    if (!type->isError() && !scalar)
      diag_.error(value.range()) << "a metric is a scalar (f32, a comparison, or a host number "
                                    "or bool); found "
                                 << toString(type);
    return;
  }
  case StmtKind::Layer: // outside a layer definition: reported by instantiation
    return;
  case StmtKind::Output: {
    const Expr &value = *static_cast<const ValueStmt &>(stmt).value;
    check(value);
    if (!fn.isModel()) {
      diag_.error(stmt.range()) << "'output' is only allowed in a model; a def gives its result "
                                   "with 'return'";
    } else if (context.output) {
      diag_.error(stmt.range()) << "a model has one 'output'; this is a second";
      diag_.note(context.output->range()) << "the first 'output' is here";
    } else {
      context.output = &stmt;
    }
    return;
  }
  }
}

void TypeChecker::expectResult(const FunctionContext &context, const TypeRef &type,
                               const Expr &value) {
  const FunctionDecl &fn = *context.fn;
  if (!context.declaredResult ||
      expectType(context.declaredResult, Arg{type, &value, value.range()},
                 "the result of '" + fn.name + "'"))
    return;
  diag_.note(fn.result->range()) << "'" << fn.name << "' declares its result type here";
}

void TypeChecker::bindPattern(const Pattern &pattern, const TypeRef &type) {
  if (auto *name = dyn_cast<NamePattern>(&pattern)) {
    program_.bindingTypes[name] = type;
    return;
  }
  auto *tuple = dyn_cast<TuplePattern>(&pattern);
  if (!tuple)
    return; // `_`
  bool fits = type->kind == TypeKind::Tuple && type->elements.size() == tuple->elements.size();
  if (!fits && !type->isError())
    diag_.error(pattern.range()) << "cannot destructure " << toString(type) << " into a tuple of "
                                 << tuple->elements.size() << " elements";
  for (size_t i = 0; i < tuple->elements.size(); ++i)
    bindPattern(*tuple->elements[i], fits ? type->elements[i] : types::errorType());
}

/// The structural rule for recursion: a recursive call must pass host data
/// (the part of the example it walks), or the unfolding would never end.
void TypeChecker::checkRecursion() {
  std::function<bool(const FunctionDecl *, const FunctionDecl *, std::set<const FunctionDecl *> &)>
      reaches = [&](const FunctionDecl *from, const FunctionDecl *to,
                    std::set<const FunctionDecl *> &seen) {
        if (from == to)
          return true;
        if (!seen.insert(from).second)
          return false;
        for (const CallEdge &e : calls_)
          if (e.caller == from && reaches(e.callee, to, seen))
            return true;
        return false;
      };
  for (const CallEdge &edge : calls_) {
    std::set<const FunctionDecl *> seen;
    if (edge.passesHostData || !reaches(edge.callee, edge.caller, seen))
      continue;
    diag_.error(edge.range) << "recursive call to '" << edge.callee->name
                            << "' passes no host data; recursion must follow the example (the "
                               "graph's shape comes from the example, not from computed values)";
  }
}

} // namespace foldc
