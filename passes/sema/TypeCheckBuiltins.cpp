// Type rules of the builtin functions and of the sequence combinators.
#include "passes/sema/TypeChecker.h"

#include "passes/sema/Builtins.h"

#include <set>

namespace foldc {

namespace {
const std::set<std::string> kReductions{"sum", "mean", "max", "min"};
} // namespace

bool TypeChecker::expectArgCount(const std::string &name, const std::vector<Arg> &args,
                                 size_t min, size_t max, SourceRange range) {
  if (args.size() >= min && args.size() <= max)
    return true;
  auto error = diag_.error(range);
  error << "'" << name << "' takes ";
  if (min == max)
    error << min;
  else if (max == SIZE_MAX)
    error << min << " or more";
  else
    error << min << " to " << max;
  error << " argument" << (max == 1 ? "" : "s") << ", found " << args.size();
  return false;
}

std::optional<TypeRef> TypeChecker::asTensor(const Arg &arg, const char *what,
                                             bool requireFloat) {
  if (arg.type->isHostNumber()) // lifting: int/float -> f32 scalar
    return types::f32();
  if (!arg.type->isTensor() || (requireFloat && arg.type->element != ElementType::F32)) {
    diag_.error(arg.range) << what << " expected " << (requireFloat ? "an f32 tensor" : "a tensor")
                           << ", found " << toString(arg.type);
    return std::nullopt;
  }
  return arg.type;
}

std::optional<long long> TypeChecker::constInt(const Arg &arg, const char *what) {
  if (!arg.expr) {
    diag_.error(arg.range) << what << " must be a constant int";
    return std::nullopt;
  }
  return consts_.positiveInt(*arg.expr, what, diag_);
}

std::optional<TypeRef> TypeChecker::listElement(const Arg &arg, const std::string &what) {
  if (arg.type->kind == TypeKind::List)
    return arg.type->element0();
  diag_.error(arg.range) << what << " expected a list, found " << toString(arg.type);
  return std::nullopt;
}

/// sum/mean/max/min: over a sequence of tensors (element-wise), or over the
/// last axis of one tensor.
TypeRef TypeChecker::checkReduction(const std::string &name, const Arg &arg) {
  if (arg.type->kind == TypeKind::List) {
    TypeRef element = arg.type->element0();
    if (!element->isTensor()) {
      diag_.error(arg.range) << "'" << name << "' of a sequence needs tensors, found "
                             << toString(arg.type);
      return types::errorType();
    }
    return element;
  }
  auto t = asTensor(arg, ("'" + name + "'").c_str(), false);
  if (!t)
    return types::errorType();
  if ((*t)->shape.empty()) {
    diag_.error(arg.range) << "'" << name << "' needs a tensor of rank 1 or more or a sequence, "
                           << "found " << toString(*t);
    return types::errorType();
  }
  return types::tensor((*t)->element, {(*t)->shape.begin(), (*t)->shape.end() - 1});
}

TypeRef TypeChecker::checkLoss(const std::string &name, std::vector<Arg> &args,
                               SourceRange range) {
  if (!expectArgCount(name, args, 2, 2, range))
    return types::errorType();
  if (name == "xent") {
    auto logits = asTensor(args[0], "'xent' logits");
    if (!logits)
      return types::errorType();
    if ((*logits)->shape.size() != 1) {
      diag_.error(args[0].range) << "'xent' logits are a vector f32[K], found "
                                 << toString(*logits);
      return types::errorType();
    }
    const TypeRef &label = args[1].type;
    bool intLabel = label->kind == TypeKind::Int ||
                    (label->isScalarTensor() && label->element == ElementType::I32);
    if (!intLabel) {
      diag_.error(args[1].range) << "'xent' label: expected int, found " << toString(label);
      return types::errorType();
    }
    return types::f32();
  }
  // sigmoid_xent(logit, target) and mse(a, b): one shape, scalars lifted.
  auto a = asTensor(args[0], ("'" + name + "'").c_str());
  auto b = asTensor(args[1], ("'" + name + "'").c_str());
  if (!a || !b)
    return types::errorType();
  if (!sameType(*a, *b)) {
    diag_.error(args[1].range) << "'" << name << "' compares equal shapes: expected "
                               << toString(*a) << ", found " << toString(*b);
    return types::errorType();
  }
  return types::f32();
}

TypeRef TypeChecker::checkBuiltinCall(const std::string &name, std::vector<Arg> args,
                                      SourceRange range) {
  for (const Arg &a : args)
    if (a.type->isError())
      return a.type;
  const BuiltinInfo *info = findBuiltin(name);
  if (info->kind == BuiltinKind::Combinator)
    return checkCombinator(name, args, range);
  std::string quoted = "'" + name + "'";

  if (findBuiltin(name)->elementwise) {
    if (!expectArgCount(name, args, 1, 1, range))
      return types::errorType();
    bool floatOnly = name != "abs" && name != "square";
    auto t = asTensor(args[0], quoted.c_str(), floatOnly);
    return t ? *t : types::errorType();
  }
  if (kReductions.count(name)) {
    if (!expectArgCount(name, args, 1, 1, range))
      return types::errorType();
    return checkReduction(name, args[0]);
  }
  if (name == "softmax" || name == "log_softmax") {
    if (!expectArgCount(name, args, 1, 1, range))
      return types::errorType();
    const TypeRef &t = args[0].type;
    if (t->kind == TypeKind::List && t->element0()->isScalarTensor() &&
        t->element0()->element == ElementType::F32)
      return t; // normalised across the sequence (attention)
    auto tensor = asTensor(args[0], quoted.c_str());
    if (!tensor)
      return types::errorType();
    if ((*tensor)->shape.empty()) {
      diag_.error(args[0].range) << quoted << " needs a vector or a sequence of f32 scalars, "
                                 << "found " << toString(t);
      return types::errorType();
    }
    return *tensor;
  }
  if (name == "dot") {
    if (!expectArgCount(name, args, 2, 2, range))
      return types::errorType();
    auto a = asTensor(args[0], "'dot'"), b = asTensor(args[1], "'dot'");
    if (!a || !b)
      return types::errorType();
    if ((*a)->shape.size() != 1 || !sameType(*a, *b)) {
      diag_.error(range) << "'dot' needs two vectors of one length, found " << toString(*a)
                         << " and " << toString(*b);
      return types::errorType();
    }
    return types::f32();
  }
  if (name == "concat") {
    if (!expectArgCount(name, args, 1, SIZE_MAX, range))
      return types::errorType();
    std::optional<TypeRef> first;
    int64_t total = 0;
    for (const Arg &a : args) {
      auto t = asTensor(a, "'concat'", false);
      if (!t)
        return types::errorType();
      if ((*t)->shape.empty()) {
        diag_.error(a.range) << "'concat' joins tensors of rank 1 or more on the last axis, "
                             << "found " << toString(*t);
        return types::errorType();
      }
      bool fits = !first || ((*first)->element == (*t)->element &&
                             (*first)->shape.size() == (*t)->shape.size() &&
                             std::equal((*t)->shape.begin(), (*t)->shape.end() - 1,
                                        (*first)->shape.begin()));
      if (!fits) {
        diag_.error(a.range) << "'concat' needs the same element type and leading dimensions: "
                             << "expected like " << toString(*first) << ", found "
                             << toString(*t);
        return types::errorType();
      }
      if (!first)
        first = t;
      total += (*t)->shape.back();
    }
    std::vector<int64_t> shape = (*first)->shape;
    shape.back() = total;
    return types::tensor((*first)->element, shape);
  }
  if (name == "argmax") {
    if (!expectArgCount(name, args, 1, 1, range))
      return types::errorType();
    auto t = asTensor(args[0], "'argmax'", false);
    if (!t)
      return types::errorType();
    if ((*t)->shape.empty()) {
      diag_.error(args[0].range) << "'argmax' needs a tensor of rank 1 or more, found "
                                 << toString(*t);
      return types::errorType();
    }
    return types::i32({(*t)->shape.begin(), (*t)->shape.end() - 1});
  }
  if (name == "one_hot") {
    if (!expectArgCount(name, args, 2, 2, range))
      return types::errorType();
    auto n = constInt(args[0], "the size of 'one_hot'");
    const TypeRef &i = args[1].type;
    bool index = i->kind == TypeKind::Int || (i->isScalarTensor() && i->element == ElementType::I32);
    if (!index) {
      diag_.error(args[1].range) << "'one_hot' index: expected int, found " << toString(i);
      return types::errorType();
    }
    return n ? types::f32({*n}) : types::errorType();
  }
  if (name == "zeros" || name == "ones") {
    std::vector<int64_t> shape;
    for (const Arg &a : args) {
      auto n = constInt(a, "a dimension");
      if (!n)
        return types::errorType();
      shape.push_back(*n);
    }
    return types::f32(shape);
  }
  if (name == "dropout") {
    if (!expectArgCount(name, args, 2, 2, range))
      return types::errorType();
    auto t = asTensor(args[0], "'dropout'");
    if (!t)
      return types::errorType();
    auto p = args[1].expr ? consts_.evaluate(*args[1].expr, &diag_) : std::nullopt;
    if (!p)
      return types::errorType();
    if (p->asDouble() < 0 || p->asDouble() >= 1) {
      diag_.error(args[1].range) << "the rate of 'dropout' is in [0, 1), found " << p->toString();
      return types::errorType();
    }
    return *t;
  }
  if (name == "xent" || name == "sigmoid_xent" || name == "mse")
    return checkLoss(name, args, range);
  if (name == "tensor") {
    if (!expectArgCount(name, args, 1, 1, range))
      return types::errorType();
    if (!args[0].type->isHostNumber()) {
      diag_.error(args[0].range) << "'tensor' makes an f32 from a host number, found "
                                 << toString(args[0].type);
      return types::errorType();
    }
    return types::f32();
  }
  if (name == "vector") {
    if (!expectArgCount(name, args, 2, 2, range))
      return types::errorType();
    auto n = constInt(args[0], "the length of 'vector'");
    const TypeRef &xs = args[1].type;
    if (xs->kind != TypeKind::List || !xs->element0()->isHostNumber()) {
      diag_.error(args[1].range) << "'vector' takes a host list of numbers, found "
                                 << toString(xs);
      return types::errorType();
    }
    return n ? types::f32({*n}) : types::errorType();
  }
  diag_.error(range) << "'" << name << "' cannot be called here";
  return types::errorType();
}

TypeRef TypeChecker::checkCombinator(const std::string &name, std::vector<Arg> &args,
                                     SourceRange range) {
  const BuiltinInfo *info = findBuiltin(name);
  size_t arity = size_t(info->arity);
  // Without its data argument a combinator is a block: map(words), fold(f, s).
  bool twoArgReducePartial = name == "reduce" && args.size() == 2 &&
                             args[1].type->kind != TypeKind::List;
  bool partial = (args.size() + 1 == arity && name != "reduce") || twoArgReducePartial;
  if (partial) {
    auto value = std::make_shared<BlockValue>();
    value->kind = BlockValue::Kind::Partial;
    value->builtin = name;
    for (const Arg &a : args) {
      value->boundArgTypes.push_back(a.type);
      value->boundArgs.push_back(a.expr);
    }
    return makeBlock(value, nullptr);
  }
  size_t minArgs = name == "reduce" ? 2 : arity;
  if (!expectArgCount(name, args, minArgs, arity, range))
    return types::errorType();
  std::string quoted = "'" + name + "'";
  auto elementOf = [&](const Arg &a) { return listElement(a, quoted); };
  auto blockArg = [&](const Arg &a) {
    if (a.type->kind == TypeKind::Block)
      return true;
    diag_.error(a.range) << quoted << " expected a block, found " << toString(a.type);
    return false;
  };

  if (name == "length") {
    return elementOf(args[0]) ? types::intType() : types::errorType();
  }
  if (name == "nth") {
    auto x = elementOf(args[1]);
    const TypeRef &i = args[0].type;
    if (i->isTensor()) {
      structuralError(args[0].range, "the position of 'nth'", i);
      return types::errorType();
    }
    if (i->kind != TypeKind::Int) {
      diag_.error(args[0].range) << "'nth' position: expected int, found " << toString(i);
      return types::errorType();
    }
    return x ? *x : types::errorType();
  }
  if (name == "ngrams") {
    auto n = constInt(args[0], "the n of 'ngrams'");
    auto x = elementOf(args[1]);
    if (!n || !x)
      return types::errorType();
    return types::list(types::tuple(std::vector<TypeRef>(size_t(*n), *x)));
  }
  if (name == "zip") {
    auto x = elementOf(args[0]), y = elementOf(args[1]);
    return x && y ? types::list(types::tuple({*x, *y})) : types::errorType();
  }
  if (!blockArg(args[0]))
    return types::errorType();
  const TypeRef &f = args[0].type;
  if (name == "map") {
    auto x = elementOf(args[1]);
    if (!x)
      return types::errorType();
    TypeRef y = apply(f, {Arg{*x, nullptr, args[0].range}}, args[0].range);
    return y->isError() ? y : types::list(y);
  }
  if (name == "zip_with") {
    auto x = elementOf(args[1]), y = elementOf(args[2]);
    if (!x || !y)
      return types::errorType();
    TypeRef z = apply(f, {Arg{*x, nullptr, args[0].range}, Arg{*y, nullptr, args[0].range}},
                      args[0].range);
    return z->isError() ? z : types::list(z);
  }
  if (name == "fold") {
    auto x = elementOf(args[2]);
    if (!x)
      return types::errorType();
    TypeRef state = args[1].type;
    TypeRef next = apply(f, {Arg{state, nullptr, args[0].range}, Arg{*x, nullptr, args[0].range}},
                         args[0].range);
    if (!next->isError() && !sameType(next, state)) {
      diag_.error(args[0].range) << "the block of 'fold' must return its state type: expected "
                                 << toString(state) << ", found " << toString(next);
      return types::errorType();
    }
    return next->isError() ? next : state;
  }
  if (name == "rnn") {
    auto x = elementOf(args[2]);
    if (!x)
      return types::errorType();
    TypeRef state = args[1].type;
    TypeRef out = apply(f, {Arg{*x, nullptr, args[0].range}, Arg{state, nullptr, args[0].range}},
                        args[0].range);
    if (out->isError())
      return out;
    if (out->kind != TypeKind::Tuple || out->elements.size() != 2 ||
        !sameType(out->elements[1], state)) {
      diag_.error(args[0].range) << "the cell of 'rnn' must return (output, state) with state "
                                 << toString(state) << ", found " << toString(out);
      return types::errorType();
    }
    return types::tuple({types::list(out->elements[0]), state});
  }
  // reduce(f, xs) or reduce(f, default, xs)
  auto x = elementOf(args.back());
  if (!x)
    return types::errorType();
  if (args.size() == 3 && !expectType(*x, args[1], "the default of 'reduce'"))
    return types::errorType();
  TypeRef r = apply(f, {Arg{*x, nullptr, args[0].range}, Arg{*x, nullptr, args[0].range}},
                    args[0].range);
  if (!r->isError() && !sameType(r, *x)) {
    diag_.error(args[0].range) << "the block of 'reduce' must combine two elements into one: "
                               << "expected " << toString(*x) << ", found " << toString(r);
    return types::errorType();
  }
  return r->isError() ? r : *x;
}

} // namespace foldc
