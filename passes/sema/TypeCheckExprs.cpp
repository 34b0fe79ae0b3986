// Type checking of expressions, and application of blocks.
#include "passes/sema/TypeChecker.h"

#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"

#include <algorithm>
#include <functional>

namespace foldc {

namespace {
bool anyError(std::initializer_list<TypeRef> types) {
  for (const TypeRef &t : types)
    if (t->isError())
      return true;
  return false;
}

/// Host values `==` compares besides numbers: bools and strings.
bool isEquatableScalar(const TypeRef &t) {
  return t->kind == TypeKind::Bool || t->kind == TypeKind::String;
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
} // namespace

TypeRef TypeChecker::check(const Expr &expr) {
  TypeRef type = checkUncached(expr);
  program_.exprTypes[&expr] = type;
  return type;
}

void TypeChecker::structuralError(SourceRange range, const std::string &what,
                                  const TypeRef &found) {
  diag_.error(range) << what << " must be a host value known when the example is unfolded, "
                     << "found " << toString(found)
                     << "; the graph's shape must come from the example, not from computed "
                        "values";
}

TypeRef TypeChecker::checkUncached(const Expr &expr) {
  switch (expr.kind()) {
  case ExprKind::IntLit:
    return types::intType();
  case ExprKind::FloatLit:
    return types::floatType();
  case ExprKind::StringLit:
    return types::stringType();
  case ExprKind::BoolLit:
    return types::boolType();
  case ExprKind::Name:
    return checkName(static_cast<const NameExpr &>(expr));
  case ExprKind::Accessor: {
    auto value = std::make_shared<BlockValue>();
    value->kind = BlockValue::Kind::Accessor;
    value->selector = static_cast<const AccessorExpr &>(expr).selector;
    value->source = &expr;
    return makeBlock(value, nullptr);
  }
  case ExprKind::Member: {
    auto &m = static_cast<const MemberExpr &>(expr);
    return checkMember(check(*m.base), m.selector, expr.range());
  }
  case ExprKind::Call:
    return checkCall(static_cast<const CallExpr &>(expr));
  case ExprKind::Index:
    return checkIndex(static_cast<const IndexExpr &>(expr));
  case ExprKind::Slice:
    return checkSlice(static_cast<const SliceExpr &>(expr));
  case ExprKind::Subscripts:
    return checkSubscripts(static_cast<const SubscriptsExpr &>(expr));
  case ExprKind::Neg:
    return checkNeg(static_cast<const NegExpr &>(expr));
  case ExprKind::Not:
    return checkNot(static_cast<const NotExpr &>(expr));
  case ExprKind::Binary:
    return checkBinary(static_cast<const BinaryExpr &>(expr));
  case ExprKind::Pipe:
    return checkPipe(static_cast<const PipeExpr &>(expr));
  case ExprKind::Arrow:
    diag_.error(expr.range()) << "'in -> out' is only allowed in layer arguments";
    return types::errorType();
  case ExprKind::Lambda: {
    auto value = std::make_shared<BlockValue>();
    value->kind = BlockValue::Kind::Lambda;
    value->lambda = static_cast<const LambdaExpr *>(&expr);
    value->source = &expr;
    return makeBlock(value, nullptr);
  }
  case ExprKind::Tuple: {
    std::vector<TypeRef> elements;
    for (const ExprPtr &e : static_cast<const TupleExpr &>(expr).elements)
      elements.push_back(check(*e));
    return types::tuple(std::move(elements));
  }
  case ExprKind::List:
    return checkList(static_cast<const ListExpr &>(expr));
  case ExprKind::Match:
    return checkMatch(static_cast<const MatchExpr &>(expr));
  case ExprKind::If:
    return checkIf(static_cast<const IfExpr &>(expr));
  }
  return types::errorType();
}

TypeRef TypeChecker::makeBlock(std::shared_ptr<BlockValue> value, TypeRef signature) {
  Type t;
  t.kind = TypeKind::Block;
  t.block = std::move(value);
  if (signature && signature->kind == TypeKind::Block) {
    t.hasSignature = true;
    t.params = signature->params;
    t.result = signature->result;
  }
  return std::make_shared<const Type>(std::move(t));
}

TypeRef TypeChecker::checkName(const NameExpr &name) {
  auto it = names_.names.find(&name);
  if (it == names_.names.end())
    return types::errorType(); // reported by name resolution
  const Symbol &symbol = it->second;
  auto value = std::make_shared<BlockValue>();
  value->source = &name;
  switch (symbol.kind) {
  case Symbol::Kind::Const: {
    auto v = consts_.evaluate(name, nullptr);
    if (!v)
      return types::errorType();
    return v->isInt ? types::intType() : types::floatType();
  }
  case Symbol::Kind::Param: {
    auto *p = static_cast<const GlobalParamDecl *>(symbol.decl);
    auto pi = program_.params.find(&p->param);
    return pi == program_.params.end() ? types::errorType() : pi->second.type;
  }
  case Symbol::Kind::Layer: {
    auto *layer = static_cast<const LayerDecl *>(symbol.decl);
    auto li = program_.layers.find(layer);
    if (li == program_.layers.end())
      return types::errorType();
    value->kind = BlockValue::Kind::Layer;
    value->layer = layer;
    return makeBlock(value, li->second.blockType);
  }
  case Symbol::Kind::Model:
    diag_.error(name.range()) << "a model is the entry point and cannot be called";
    return types::errorType();
  case Symbol::Kind::Def: {
    auto *fn = static_cast<const FunctionDecl *>(symbol.decl);
    TypeRef signature = signatureOf(*fn, name.range());
    if (signature->isError())
      return signature;
    value->kind = BlockValue::Kind::Def;
    value->def = fn;
    return makeBlock(value, signature);
  }
  case Symbol::Kind::Builtin:
    switch (symbol.builtin.table) {
    case BuiltinName::Table::Callable:
      value->kind = BlockValue::Kind::Builtin;
      value->builtin = symbol.builtin.callable;
      return makeBlock(value, nullptr);
    case BuiltinName::Table::LayerConstructor:
      diag_.error(name.range()) << "'" << name.name
                                << "' is a layer constructor; use it in a 'layer' declaration";
      return types::errorType();
    case BuiltinName::Table::Initializer:
      diag_.error(name.range()) << "'" << name.name
                                << "' is an initialiser; use it in a 'param' declaration";
      return types::errorType();
    case BuiltinName::Table::Activation:
      diag_.error(name.range()) << "'" << name.name << "' is an activation; use it as 'act:' of fc";
      return types::errorType();
    }
    return types::errorType();
  case Symbol::Kind::HostFunction: {
    const HostFunction &f = program_.hostFunctions[size_t(symbol.hostFunction)];
    value->kind = BlockValue::Kind::Host;
    value->hostFunction = symbol.hostFunction;
    return makeBlock(value, types::block(f.params, f.result));
  }
  case Symbol::Kind::Local: {
    auto bi = program_.bindingTypes.find(symbol.binding);
    if (bi == program_.bindingTypes.end())
      return types::errorType();
    const TypeRef &type = bi->second;
    if (type->kind == TypeKind::Block && !type->block) {
      // A parameter of block type: callable through its signature only.
      value->kind = BlockValue::Kind::Typed;
      value->signature = type;
      return makeBlock(value, type);
    }
    return type;
  }
  }
  return types::errorType();
}

TypeRef TypeChecker::checkMember(const TypeRef &base, const Selector &selector, SourceRange range) {
  if (base->isError())
    return base;
  if (selector.isIndex()) {
    if (base->kind != TypeKind::Tuple) {
      diag_.error(range) << "'." << *selector.index << "' selects from a tuple, found "
                         << toString(base);
      return types::errorType();
    }
    if (*selector.index >= base->elements.size()) {
      diag_.error(range) << "tuple index " << *selector.index << " is out of range for "
                         << toString(base);
      return types::errorType();
    }
    return base->elements[*selector.index];
  }
  if (base->kind != TypeKind::Data) {
    diag_.error(range) << "'." << selector.field << "' reads a field of a data value, found "
                       << toString(base);
    return types::errorType();
  }
  const DataDecl &data = *base->data;
  auto findField = [&](const VariantDecl &v) -> const FieldDecl * {
    for (const FieldDecl &f : v.fields)
      if (f.name == selector.field)
        return &f;
    return nullptr;
  };
  if (base->variant >= 0) {
    const VariantDecl &v = data.variants[base->variant];
    if (const FieldDecl *f = findField(v))
      return fieldType(*f);
    diag_.error(range) << "'" << toString(base) << "' has no field '" << selector.field << "'";
    diag_.note(v.range) << "'" << v.name << "' is declared here";
    return types::errorType();
  }
  // A union: the field must be in every variant, with one type.
  TypeRef common;
  for (const VariantDecl &v : data.variants) {
    const FieldDecl *f = findField(v);
    if (!f) {
      diag_.error(range) << "field '" << selector.field << "' is not in every variant of '"
                         << data.name << "' (not in '" << v.name << "'); use match";
      diag_.note(v.range) << "'" << v.name << "' is declared here";
      return types::errorType();
    }
    TypeRef t = fieldType(*f);
    if (common && !sameType(common, t)) {
      diag_.error(range) << "field '" << selector.field << "' has different types in the "
                         << "variants of '" << data.name << "'; use match";
      return types::errorType();
    }
    common = t;
  }
  return common;
}

/// "sum, mean, ... and concat": the builtins that take an `axis:`, in table order.
static std::string axisBuiltinsText() {
  std::vector<std::string> names;
  for (int i = 0; i < kBuiltinCount; ++i)
    if (takesAxis(Builtin(i)))
      names.emplace_back(builtinInfo(Builtin(i)).name);
  return listedWithAnd(names);
}

std::optional<Builtin> TypeChecker::calledBuiltin(const CallExpr &call) const {
  std::optional<BuiltinName> row =
      rowOf(dyn_cast<NameExpr>(call.callee.get()), BuiltinName::Table::Callable);
  return row ? std::optional<Builtin>(row->callable) : std::nullopt;
}

std::optional<BuiltinName> TypeChecker::rowOf(const NameExpr *name,
                                              BuiltinName::Table table) const {
  auto it = name ? names_.names.find(name) : names_.names.end();
  if (it == names_.names.end() || it->second.kind != Symbol::Kind::Builtin ||
      it->second.builtin.table != table)
    return std::nullopt;
  return it->second.builtin;
}

std::optional<Option> TypeChecker::optionOf(const Argument &arg) const {
  auto it = names_.options.find(&arg);
  return it == names_.options.end() ? std::nullopt : std::optional<Option>(it->second);
}

TypeRef TypeChecker::checkCall(const CallExpr &call) {
  std::optional<Builtin> builtin = calledBuiltin(call);
  const Argument *axis = nullptr;
  for (const Argument &a : call.args) {
    if (a.name.empty())
      continue;
    if (optionOf(a) == Option::Axis && builtin && takesAxis(*builtin) && !axis &&
        &a == &call.args.back()) {
      axis = &a;
      continue;
    }
    diag_.error(a.range) << "named arguments ('" << a.name << ":') are only for layer options "
                         << "and a last 'axis:' of " << axisBuiltinsText();
    return types::errorType();
  }
  // A builtin called directly sees its arguments' expressions (constants).
  if (builtin) {
    TypeRef callee = check(*call.callee);
    if (callee->isError())
      return callee;
    std::vector<Arg> args;
    for (const Argument &a : call.args)
      if (&a != axis)
        args.push_back(Arg{check(*a.value), a.value.get(), a.value->range()});
    if (!axis)
      return checkBuiltinCall(*builtin, std::move(args), call.range());
    Arg axisArg{check(*axis->value), axis->value.get(), axis->value->range()};
    return checkBuiltinCall(*builtin, std::move(args), call.range(), &axisArg);
  }
  TypeRef callee = check(*call.callee);
  std::vector<Arg> args;
  for (const Argument &a : call.args) {
    // `fc(3 -> 4)` in an expression: the callee's error says it all.
    if (callee->isError() && isa<ArrowExpr>(a.value.get()))
      continue;
    args.push_back(Arg{check(*a.value), a.value.get(), a.value->range()});
  }
  return apply(callee, std::move(args), call.range());
}

TypeRef TypeChecker::apply(const TypeRef &block, std::vector<Arg> args, SourceRange range) {
  if (block->isError())
    return block;
  for (const Arg &a : args)
    if (a.type->isError())
      return a.type;
  if (block->kind != TypeKind::Block) {
    diag_.error(range) << "called value is not a block: it has type " << toString(block);
    return types::errorType();
  }
  return applyValue(*block->block, std::move(args), range);
}

std::optional<std::vector<TypeChecker::Arg>> TypeChecker::adaptArity(std::vector<Arg> args,
                                                                     size_t arity,
                                                                     SourceRange range,
                                                                     const std::string &what) {
  if (args.size() == arity)
    return args;
  if (arity == 1) { // several arguments to one parameter: a tuple
    std::vector<TypeRef> elements;
    for (const Arg &a : args)
      elements.push_back(a.type);
    return std::vector<Arg>{Arg{types::tuple(elements), nullptr, range}};
  }
  if (args.size() == 1 && args[0].type->kind == TypeKind::Tuple &&
      args[0].type->elements.size() == arity) { // one tuple to several parameters
    std::vector<Arg> spread;
    for (const TypeRef &e : args[0].type->elements)
      spread.push_back(Arg{e, nullptr, args[0].range});
    return spread;
  }
  diag_.error(range) << what << " takes " << plural(arity, "argument") << ", found " << args.size();
  return std::nullopt;
}

bool TypeChecker::accepts(const TypeRef &expected, const TypeRef &actual) const {
  if (expected->isError() || actual->isError() || sameType(expected, actual))
    return true;
  // Lifting (docs/language.md, "Type rules"): a host int or float where a scalar tensor is
  // expected.
  if (expected->isScalarTensor() && actual->isHostNumber())
    return expected->element == ElementType::F32 || actual->kind == TypeKind::Int;
  if (expected->kind == TypeKind::Int && actual->isScalarTensor() &&
      actual->element == ElementType::I32)
    return false;
  if ((expected->kind == TypeKind::Tuple && actual->kind == TypeKind::Tuple) ||
      (expected->kind == TypeKind::List && actual->kind == TypeKind::List)) {
    if (expected->elements.size() != actual->elements.size())
      return false;
    for (size_t i = 0; i < expected->elements.size(); ++i)
      if (!accepts(expected->elements[i], actual->elements[i]))
        return false;
    return true;
  }
  // A union value is accepted where one of its variants' union is expected.
  if (expected->kind == TypeKind::Data && actual->kind == TypeKind::Data)
    return expected->data == actual->data && expected->variant < 0;
  if (expected->kind == TypeKind::Block && actual->kind == TypeKind::Block)
    return !actual->hasSignature || sameType(expected, actual);
  return false;
}

bool TypeChecker::expectType(const TypeRef &expected, const Arg &actual,
                             const std::string &context) {
  if (accepts(expected, actual.type))
    return true;
  auto error = diag_.error(actual.range);
  if (!context.empty())
    error << context << ": ";
  error << "expected " << toString(expected) << ", found " << toString(actual.type);
  return false;
}

TypeRef TypeChecker::applySignature(const TypeRef &signature, std::vector<Arg> args,
                                    SourceRange range, const std::string &what,
                                    const std::function<void(size_t)> &noteParameter) {
  auto adapted = adaptArity(std::move(args), signature->params.size(), range, what);
  if (!adapted)
    return types::errorType();
  bool ok = true;
  for (size_t i = 0; i < adapted->size(); ++i) {
    Arg arg = (*adapted)[i];
    if (!arg.expr)
      arg.range = range;
    if (!expectType(signature->params[i], arg,
                    "argument " + std::to_string(i + 1) + " of " + what) ||
        !checkBlockArgument(signature->params[i], arg,
                            "argument " + std::to_string(i + 1) + " of " + what)) {
      ok = false;
      if (noteParameter)
        noteParameter(i);
    }
  }
  return ok ? signature->result : types::errorType();
}

bool TypeChecker::checkBlockArgument(const TypeRef &expected, const Arg &actual,
                                     const std::string &context) {
  if (expected->kind != TypeKind::Block || !expected->hasSignature || !actual.type->block ||
      actual.type->hasSignature)
    return true;
  // A lambda (or partial combinator) is typed where applied: here, at the
  // parameter types the def declares, and its result must be what it declares.
  std::vector<Arg> params;
  for (const TypeRef &p : expected->params)
    params.push_back(Arg{p, nullptr, actual.range});
  TypeRef result = applyValue(*actual.type->block, std::move(params), actual.range);
  if (result->isError() || accepts(expected->result, result))
    return !result->isError();
  diag_.error(actual.range) << context << ": the block gives " << toString(result) << ", expected "
                            << toString(expected->result);
  return false;
}

TypeRef TypeChecker::applyValue(const BlockValue &value, std::vector<Arg> args, SourceRange range) {
  switch (value.kind) {
  case BlockValue::Kind::Def: {
    bool host = false;
    for (const Arg &a : args)
      host |= a.type->isHost();
    if (!fnStack_.empty())
      calls_.push_back(CallEdge{fnStack_.back(), value.def, range, host});
    const FunctionDecl &fn = *value.def;
    return applySignature(
        signatureOf(fn, range), std::move(args), range, "'" + fn.name + "'", [&](size_t i) {
          if (i < fn.params.size())
            diag_.note(fn.params[i].range) << "parameter '" << fn.params[i].name << "' of '"
                                           << fn.name << "' is declared here";
          if (fn.instance)
            diag_.note(fn.instance->made) << "'" << fn.name << "' is an instance of layer '"
                                          << fn.instance->layer << "', made here";
        });
  }
  case BlockValue::Kind::Layer: {
    const LayerInfo &info = program_.layers.at(value.layer);
    if (info.kind == LayerKind::Embedding && args.size() == 1 && args[0].type->isScalarTensor() &&
        args[0].type->element == ElementType::I32)
      return info.blockType->result; // an i32 index, e.g. from argmax
    return applySignature(info.blockType, std::move(args), range,
                          "layer '" + value.layer->name + "'", [&](size_t) {
                            diag_.note(value.layer->range())
                                << "layer '" << value.layer->name << "' is declared here";
                          });
  }
  case BlockValue::Kind::Typed:
    return applySignature(value.signature, std::move(args), range, "the block");
  case BlockValue::Kind::Host: {
    const HostFunction &f = program_.hostFunctions[size_t(value.hostFunction)];
    return applySignature(
        types::block(f.params, f.result), std::move(args), range, "'" + f.name + "'",
        [&](size_t) { diag_.note(f.declaration) << "'" << f.name << "' is declared here"; });
  }
  case BlockValue::Kind::Builtin:
    return checkBuiltinCall(value.builtin, std::move(args), range);
  case BlockValue::Kind::Partial: {
    std::vector<Arg> all;
    for (size_t i = 0; i < value.boundArgs.size(); ++i)
      all.push_back(Arg{value.boundArgTypes[i], value.boundArgs[i],
                        value.boundArgs[i] ? value.boundArgs[i]->range() : range});
    for (Arg &a : args)
      all.push_back(std::move(a));
    return checkBuiltinCall(value.builtin, std::move(all), range);
  }
  case BlockValue::Kind::Compose: {
    TypeRef middle = applyValue(*value.first, std::move(args), range);
    if (middle->isError())
      return middle;
    return applyValue(*value.second, {Arg{middle, nullptr, range}}, range);
  }
  case BlockValue::Kind::Accessor: {
    auto adapted = adaptArity(std::move(args), 1, range, "an accessor");
    if (!adapted)
      return types::errorType();
    return checkMember((*adapted)[0].type, value.selector, value.source->range());
  }
  case BlockValue::Kind::Lambda: {
    const LambdaExpr &lambda = *value.lambda;
    auto adapted = adaptArity(std::move(args), lambda.params.size(), range, "the lambda");
    if (!adapted)
      return types::errorType();
    for (size_t i = 0; i < adapted->size(); ++i)
      bindPattern(*lambda.params[i], (*adapted)[i].type);
    return check(*lambda.body);
  }
  }
  return types::errorType();
}

TypeRef TypeChecker::checkIndex(const IndexExpr &index) {
  TypeRef base = check(*index.base);
  if (base->isError())
    return base;
  if (base->isTensor())
    return checkTensorSubscripts(index, base,
                                 {{index.index.get(), nullptr, nullptr, index.index->range()}});
  TypeRef at = check(*index.index);
  if (at->isError())
    return at;
  if (at->kind != TypeKind::Int) {
    if (at->isTensor())
      structuralError(index.index->range(), "an index", at);
    else
      diag_.error(index.index->range()) << "an index is an int, found " << toString(at);
    return types::errorType();
  }
  if (base->kind == TypeKind::List)
    return base->element0();
  diag_.error(index.base->range())
      << "indexing needs a list or a tensor of rank 1 or more, found " << toString(base);
  return types::errorType();
}

TypeRef TypeChecker::checkSlice(const SliceExpr &slice) {
  TypeRef base = check(*slice.base);
  if (base->isError())
    return base;
  if (base->isTensor())
    return checkTensorSubscripts(slice, base,
                                 {{nullptr, slice.lo.get(), slice.hi.get(), slice.range()}});
  if (base->kind == TypeKind::List) {
    for (const ExprPtr *bound : {&slice.lo, &slice.hi}) {
      if (!*bound)
        continue;
      TypeRef t = check(**bound);
      if (t->isTensor())
        structuralError((*bound)->range(), "a list slice bound", t);
      else if (!t->isError() && t->kind != TypeKind::Int)
        diag_.error((*bound)->range()) << "a slice bound is an int, found " << toString(t);
    }
    return base;
  }
  diag_.error(slice.base->range())
      << "slicing needs a list or a tensor of rank 1 or more, found " << toString(base);
  return types::errorType();
}

TypeRef TypeChecker::checkSubscripts(const SubscriptsExpr &e) {
  TypeRef base = check(*e.base);
  if (base->isError())
    return base;
  if (!base->isTensor()) {
    diag_.error(e.range()) << "several subscripts ('m[i, j]') need a tensor, found "
                           << toString(base)
                           << (base->kind == TypeKind::List ? "; a list takes one index or slice"
                                                            : "");
    return types::errorType();
  }
  std::vector<SubscriptView> views;
  for (const Subscript &s : e.subscripts)
    views.push_back({s.index.get(), s.lo.get(), s.hi.get(), s.range});
  return checkTensorSubscripts(e, base, views);
}

std::optional<int64_t> TypeChecker::subscriptBound(const Expr &bound, int64_t min, int64_t max,
                                                   const char *what) {
  TypeRef t = check(bound);
  if (t->isError())
    return std::nullopt;
  if (t->isTensor()) {
    diag_.error(bound.range()) << "a tensor " << what << " is a constant int (shapes are static), "
                               << "found the computed " << toString(t);
    return std::nullopt;
  }
  auto v = consts_.evaluate(bound, nullptr);
  if (!v || !v->isInt) {
    diag_.error(bound.range()) << "a tensor " << what
                               << " is a constant int (shapes are static), found "
                               << (v ? v->toString() : "a value known only at unfold time");
    return std::nullopt;
  }
  if (v->intValue < min || v->intValue > max) {
    diag_.error(bound.range()) << "the " << what << " " << v->intValue << " is outside [" << min
                               << ", " << max << "]";
    return std::nullopt;
  }
  return v->intValue;
}

TypeRef TypeChecker::checkTensorSubscripts(const Expr &whole, const TypeRef &base,
                                           const std::vector<SubscriptView> &subscripts) {
  if (subscripts.size() > base->shape.size()) {
    diag_.error(whole.range()) << subscripts.size() << " subscript"
                               << (subscripts.size() == 1 ? "" : "s") << " of " << toString(base)
                               << ", which has rank " << base->shape.size();
    return types::errorType();
  }
  std::vector<AxisRange> ranges;
  std::vector<int64_t> shape;
  for (size_t k = 0; k < subscripts.size(); ++k) {
    const SubscriptView &s = subscripts[k];
    int64_t n = base->shape[k];
    if (s.index) {
      auto i = subscriptBound(*s.index, 0, n - 1, "index");
      if (!i)
        return types::errorType();
      ranges.push_back({int(k), *i, *i + 1, true});
      continue;
    }
    auto lo = s.lo ? subscriptBound(*s.lo, 0, n - 1, "slice start") : std::optional<int64_t>(0);
    auto hi = s.hi ? subscriptBound(*s.hi, 1, n, "slice end") : std::optional<int64_t>(n);
    if (!lo || !hi)
      return types::errorType();
    if (*lo >= *hi) {
      diag_.error(s.range) << "slice [" << *lo << ":" << *hi << "] of an axis of " << n
                           << " is empty";
      return types::errorType();
    }
    shape.push_back(*hi - *lo);
    if (*hi - *lo != n)
      ranges.push_back({int(k), *lo, *hi, false});
  }
  shape.insert(shape.end(), base->shape.begin() + std::ptrdiff_t(subscripts.size()),
               base->shape.end());
  program_.tensorSubscripts[&whole] = std::move(ranges);
  return types::tensor(base->element, shape);
}

TypeRef TypeChecker::checkNeg(const NegExpr &neg) {
  TypeRef t = check(*neg.operand);
  if (t->isError() || t->isHostNumber() || t->isTensor())
    return t;
  diag_.error(neg.range()) << "'-' needs a number or a tensor, found " << toString(t);
  return types::errorType();
}

/// `!b`: a condition of unfolding (a host bool or a computed scalar, read).
TypeRef TypeChecker::checkNot(const NotExpr &notExpr) {
  TypeRef t = check(*notExpr.operand);
  if (t->isError())
    return t;
  if (isCondition(t))
    return types::boolType();
  diag_.error(notExpr.range()) << "'!' needs a bool or a computed scalar, found " << toString(t);
  return types::errorType();
}

TypeRef TypeChecker::checkBinary(const BinaryExpr &binary) {
  TypeRef lhs = check(*binary.lhs);
  TypeRef rhs = check(*binary.rhs);
  if (anyError({lhs, rhs}))
    return types::errorType();
  BinaryOp op = binary.op;
  if (isLogical(op)) { // `&&`, `||`: conditions of unfolding
    if (isCondition(lhs) && isCondition(rhs))
      return types::boolType();
    diag_.error(binary.range()) << "operator '" << spelling(op)
                                << "' needs two bools or computed scalars, found " << toString(lhs)
                                << " and " << toString(rhs);
    return types::errorType();
  }
  bool comparison = isComparison(op);
  auto mismatch = [&]() {
    diag_.error(binary.range()) << "operator '" << spelling(op) << "' cannot combine "
                                << toString(lhs) << " and " << toString(rhs);
    return types::errorType();
  };
  if (!lhs->isTensor() && !rhs->isTensor()) { // host arithmetic at unfold time
    if (lhs->isHostNumber() && rhs->isHostNumber() && op != BinaryOp::MatMul) {
      if (comparison)
        return types::boolType();
      bool isFloat = lhs->kind == TypeKind::Float || rhs->kind == TypeKind::Float;
      return isFloat ? types::floatType() : types::intType();
    }
    if ((op == BinaryOp::Eq || op == BinaryOp::Ne) && sameType(lhs, rhs) &&
        (isEquatableScalar(lhs) ||
         (lhs->kind == TypeKind::List &&
          (isEquatableScalar(lhs->element0()) || lhs->element0()->isHostNumber()))))
      return types::boolType(); // lists too: decoded tokens against the target (exact match)
    return mismatch();
  }
  // Tensor arithmetic: lift a host number to a scalar of the other side's element type.
  auto lift = [](const TypeRef &t, const TypeRef &other) -> TypeRef {
    if (!t->isHostNumber())
      return t;
    if (t->kind == TypeKind::Float && other->element == ElementType::I32)
      return nullptr;
    return types::tensor(other->element, {});
  };
  TypeRef a = lhs->isTensor() ? lhs : lift(lhs, rhs);
  TypeRef b = rhs->isTensor() ? rhs : lift(rhs, lhs);
  if (!a || !b || !a->isTensor() || !b->isTensor())
    return mismatch();
  if (a->element != b->element) {
    diag_.error(binary.range()) << "operator '" << spelling(op) << "' needs one element type, "
                                << "found " << toString(a) << " and " << toString(b);
    return types::errorType();
  }
  if (op == BinaryOp::MatMul) {
    const auto &x = a->shape, &y = b->shape;
    bool vecMat = x.size() == 1 && y.size() == 2 && x[0] == y[0];
    bool matVec = x.size() == 2 && y.size() == 1 && x[1] == y[0];
    bool matMat = x.size() == 2 && y.size() == 2 && x[1] == y[0];
    if (!vecMat && !matVec && !matMat) {
      diag_.error(binary.range()) << "'@' needs a vector [n] @ matrix [n, m], a matrix [a, n] @ "
                                  << "vector [n] or matrix [a, n] @ matrix [n, b], found "
                                  << toString(a) << " @ " << toString(b);
      return types::errorType();
    }
    if (matVec)
      return types::tensor(a->element, {x[0]});
    return types::tensor(a->element,
                         vecMat ? std::vector<int64_t>{y[1]} : std::vector<int64_t>{x[0], y[1]});
  }
  std::vector<int64_t> shape;
  if (a->shape == b->shape || b->shape.empty())
    shape = a->shape;
  else if (a->shape.empty())
    shape = b->shape;
  else {
    diag_.error(binary.range()) << "operator '" << spelling(op) << "' needs equal shapes or a "
                                << "scalar, found " << toString(a) << " and " << toString(b);
    return types::errorType();
  }
  if (comparison) // element-wise 0/1
    return types::f32(shape);
  return types::tensor(a->element, shape);
}

TypeRef TypeChecker::checkPipe(const PipeExpr &pipe) {
  TypeRef lhs = check(*pipe.lhs);
  TypeRef rhs = check(*pipe.rhs);
  if (anyError({lhs, rhs}))
    return types::errorType();
  if (rhs->kind != TypeKind::Block) {
    diag_.error(pipe.rhs->range())
        << "the right side of '>>' must be a block, found " << toString(rhs);
    return types::errorType();
  }
  if (lhs->kind != TypeKind::Block) // application: x >> f is f(x)
    return apply(rhs, {Arg{lhs, pipe.lhs.get(), pipe.lhs->range()}}, pipe.range());
  auto value = std::make_shared<BlockValue>(); // composition of two blocks
  value->kind = BlockValue::Kind::Compose;
  value->first = lhs->block;
  value->second = rhs->block;
  value->source = &pipe;
  return makeBlock(value, nullptr);
}

TypeRef TypeChecker::checkList(const ListExpr &list) {
  if (list.elements.empty()) {
    diag_.error(list.range()) << "cannot infer the element type of an empty list";
    return types::errorType();
  }
  TypeRef element;
  for (const ExprPtr &e : list.elements) {
    TypeRef t = check(*e);
    if (t->isError())
      return t;
    if (!element) {
      element = t;
    } else if (!sameType(element, t)) {
      diag_.error(e->range()) << "list elements must have one type: expected " << toString(element)
                              << ", found " << toString(t);
      return types::errorType();
    }
  }
  return types::list(element);
}

TypeRef TypeChecker::unifyBranches(const std::vector<std::pair<TypeRef, SourceRange>> &branches,
                                   const char *what) {
  TypeRef result;
  for (const auto &[type, range] : branches) {
    if (type->isError())
      return type;
    if (!result) {
      result = type;
    } else if (!sameType(result, type)) {
      diag_.error(range) << "the " << what << " give different types: expected " << toString(result)
                         << ", found " << toString(type);
      return types::errorType();
    }
  }
  return result ? result : types::errorType();
}

TypeRef TypeChecker::checkMatch(const MatchExpr &match) {
  TypeRef scrutinee = check(*match.scrutinee);
  if (scrutinee->isError())
    return scrutinee;
  if (scrutinee->isTensor() || containsTensor(scrutinee)) {
    structuralError(match.scrutinee->range(), "the value of 'match'", scrutinee);
    return types::errorType();
  }
  bool isOptional = scrutinee->kind == TypeKind::Optional;
  bool isUnion =
      scrutinee->kind == TypeKind::Data && !scrutinee->data->isRecord && scrutinee->variant < 0;
  if (!isOptional && !isUnion) {
    diag_.error(match.scrutinee->range())
        << "'match' needs a union or an optional, found " << toString(scrutinee);
    return types::errorType();
  }
  std::vector<std::string> ctors;
  if (isOptional)
    ctors = {"Some", "None"};
  else
    for (const VariantDecl &v : scrutinee->data->variants)
      ctors.push_back(v.name);
  std::map<std::string, SourceRange> seen;
  bool hasDefault = false;
  std::vector<std::pair<TypeRef, SourceRange>> branches;
  for (const MatchArm &arm : match.arms) {
    if (arm.isDefault()) {
      hasDefault = true;
    } else {
      auto pos = std::find(ctors.begin(), ctors.end(), arm.ctor);
      if (pos == ctors.end()) {
        diag_.error(arm.patternRange)
            << "'" << arm.ctor << "' is not a variant of " << toString(scrutinee);
        if (isUnion)
          diag_.note(scrutinee->data->nameRange)
              << "'" << scrutinee->data->name << "' is declared here";
        return types::errorType();
      }
      if (auto [it, inserted] = seen.emplace(arm.ctor, arm.patternRange); !inserted) {
        diag_.error(arm.patternRange) << "'" << arm.ctor << "' is matched twice";
        diag_.note(it->second) << "first matched here";
      }
      if (!arm.binder.empty()) {
        if (isOptional && arm.ctor == "None") {
          diag_.error(arm.patternRange) << "'None' carries no value to bind";
        } else {
          int variant = int(pos - ctors.begin());
          program_.bindingTypes[&arm] =
              isOptional ? scrutinee->element0() : types::data(scrutinee->data, variant);
        }
      }
    }
    branches.emplace_back(check(*arm.body), arm.body->range());
  }
  if (!hasDefault) {
    std::string missing;
    for (const std::string &c : ctors)
      if (!seen.count(c))
        missing += (missing.empty() ? "'" : ", '") + c + "'";
    if (!missing.empty()) {
      diag_.error(match.range()) << "'match' does not cover " << missing
                                 << "; add those arms or '_'";
      return types::errorType();
    }
  }
  return unifyBranches(branches, "arms of 'match'");
}

TypeRef TypeChecker::checkIf(const IfExpr &ifExpr) {
  TypeRef cond = check(*ifExpr.cond);
  if (!cond->isError() && !isCondition(cond)) {
    diag_.error(ifExpr.cond->range())
        << "the condition of 'if' is a bool or a computed scalar (f32 or i32, read when the "
           "example is unfolded and tested for != 0), found "
        << toString(cond);
    return types::errorType();
  }
  TypeRef thenType = check(*ifExpr.thenExpr);
  TypeRef elseType = check(*ifExpr.elseExpr);
  if (cond->isError())
    return cond;
  return unifyBranches({{thenType, ifExpr.thenExpr->range()}, {elseType, ifExpr.elseExpr->range()}},
                       "branches of 'if'");
}

} // namespace foldc
