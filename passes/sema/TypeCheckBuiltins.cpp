// Type rules of the builtin functions and of the sequence combinators.
#include "passes/sema/TypeChecker.h"

namespace foldc {

namespace {
/// The arguments of the combinators whose arguments are most often missed,
/// by name (a message says which is missing).
struct ArgumentNames {
  Builtin builtin;
  std::vector<const char *> names;
};
const ArgumentNames kArgumentNames[] = {
    {Builtin::Loop, {"step", "init", "max (the bound: the most iterations)"}},
    {Builtin::Beam, {"step", "init", "start", "end", "width", "max (the bound: the most steps)"}},
    {Builtin::Rnn, {"cell", "init", "xs"}},
    {Builtin::Fold, {"f", "init", "xs"}},
};

/// ": max (the bound: the most iterations) is missing" when too few were given.
std::string missingArguments(Builtin builtin, size_t given) {
  for (const ArgumentNames &entry : kArgumentNames) {
    if (entry.builtin != builtin || given >= entry.names.size())
      continue;
    std::vector<std::string> missing(entry.names.begin() + long(given), entry.names.end());
    return " (" + listedWithAnd(missing) + (missing.size() == 1 ? " is" : " are") + " missing)";
  }
  return "";
}
} // namespace

bool TypeChecker::expectArgCount(const BuiltinInfo &info, const std::vector<Arg> &args,
                                 SourceRange range) {
  size_t min = size_t(info.minArgs), max = info.maxArgs < 0 ? SIZE_MAX : size_t(info.maxArgs);
  if (args.size() >= min && args.size() <= max)
    return true;
  auto error = diag_.error(range);
  error << "'" << info.name << "' takes ";
  if (min == max)
    error << min;
  else if (max == SIZE_MAX)
    error << min << " or more";
  else
    error << min << " to " << max;
  error << " argument" << (max == 1 ? "" : "s") << ", found " << args.size()
        << missingArguments(info.builtin, args.size());
  return false;
}

std::optional<TypeRef> TypeChecker::asTensor(const Arg &arg, const char *what, bool requireFloat) {
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
TypeRef TypeChecker::checkBuiltinCall(Builtin builtin, std::vector<Arg> args, SourceRange range,
                                      const Arg *axis) {
  for (const Arg &a : args)
    if (a.type->isError())
      return a.type;
  const BuiltinInfo &info = builtinInfo(builtin);
  if (info.role == BuiltinRole::Combinator && isPartialApplication(builtin, args))
    return partialApplication(builtin, args);
  if (!expectArgCount(info, args, range))
    return types::errorType();
  switch (builtin) {
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) case Builtin::Kind:
#include "passes/builtins/Ops.def"
    return checkElementwise(info, args[0]);
  case Builtin::Sum:
  case Builtin::Mean:
  case Builtin::Max:
  case Builtin::Min:
    return checkReduction(info, args[0], axis);
  case Builtin::Softmax:
  case Builtin::LogSoftmax:
    return checkSoftmax(info, args[0], axis);
  case Builtin::Dot:
    return checkDot(args, range);
  case Builtin::Concat:
    return checkConcat(args, axis);
  case Builtin::Argmax:
    return checkArgmax(args[0], axis);
  case Builtin::Transpose:
    return checkTranspose(args[0]);
  case Builtin::Outer:
    return checkOuter(args);
  case Builtin::Reshape:
    return checkReshape(args);
  case Builtin::SegmentSum:
  case Builtin::SegmentMean:
  case Builtin::SegmentMax:
    return checkSegment(info, args);
  case Builtin::Range:
    return checkRange(args[0]);
  case Builtin::Gather:
    return checkGather(args);
  case Builtin::TopK:
    return checkTopK(args);
  case Builtin::OneHot:
    return checkOneHot(args);
  case Builtin::Zeros:
  case Builtin::Ones:
    return checkFill(args);
  case Builtin::Dropout:
    return checkDropout(args);
  case Builtin::Xent:
    return checkXent(args);
  case Builtin::SigmoidXent:
  case Builtin::Mse:
    return checkEqualShapeLoss(info, args);
  case Builtin::Tensor:
    return checkTensor(args[0]);
  case Builtin::Vector:
    return checkVector(args);
  case Builtin::Length:
    return listElement(args[0], "'length'") ? types::intType() : types::errorType();
  case Builtin::Reverse:
    return listElement(args[0], "'reverse'") ? args[0].type : types::errorType();
  case Builtin::Nth:
    return checkNth(args);
  case Builtin::Item:
    return checkItem(args[0]);
  case Builtin::Loop:
    return checkLoop(args);
  case Builtin::Beam:
    return checkBeam(args);
  case Builtin::Ngrams:
    return checkNgrams(args);
  case Builtin::Zip: {
    auto x = listElement(args[0], "'zip'"), y = listElement(args[1], "'zip'");
    return x && y ? types::list(types::tuple({*x, *y})) : types::errorType();
  }
  case Builtin::Map:
  case Builtin::ZipWith:
  case Builtin::Fold:
  case Builtin::Rnn:
  case Builtin::Reduce:
    return checkBlockCombinator(builtin, args);
  }
  return types::errorType();
}

//===----------------------------------------------------- tensor functions
TypeRef TypeChecker::checkElementwise(const BuiltinInfo &info, const Arg &arg) {
  std::string quoted = "'" + std::string(info.name) + "'";
  auto t = asTensor(arg, quoted.c_str(), info.accepts == Accepts::Float);
  return t ? *t : types::errorType();
}

std::optional<int> TypeChecker::axisOf(const Arg *axis, size_t rank, const std::string &what) {
  if (!axis)
    return int(rank) - 1;
  if (axis->type->isError())
    return std::nullopt;
  auto v = axis->expr ? consts_.evaluate(*axis->expr, nullptr) : std::nullopt;
  if (!v || !v->isInt) {
    diag_.error(axis->range) << "the axis of " << what
                             << " is a constant int (shapes are static), found "
                             << (v                        ? v->toString()
                                 : axis->type->isTensor() ? "the computed " + toString(axis->type)
                                                          : "a value known only at unfold time");
    return std::nullopt;
  }
  long long k = v->intValue < 0 ? v->intValue + (long long)rank : v->intValue;
  if (k < 0 || k >= (long long)rank) {
    diag_.error(axis->range) << "axis " << v->intValue << " is outside a tensor of rank " << rank
                             << " (axes 0 to " << rank - 1 << ", or -1 for the last)";
    return std::nullopt;
  }
  program_.callAxes[axis->expr] = int(k);
  return int(k);
}

/// `shape` without axis `axis`.
static std::vector<int64_t> withoutAxis(std::vector<int64_t> shape, int axis) {
  shape.erase(shape.begin() + axis);
  return shape;
}

/// sum/mean/max/min: over a sequence of tensors (element-wise), or along an
/// axis (the last by default) of one tensor.
TypeRef TypeChecker::checkReduction(const BuiltinInfo &info, const Arg &arg, const Arg *axis) {
  std::string quoted = "'" + std::string(info.name) + "'";
  if (arg.type->kind == TypeKind::List) {
    if (axis) {
      diag_.error(axis->range) << quoted
                               << " of a sequence combines its elements: it takes no axis";
      return types::errorType();
    }
    TypeRef element = arg.type->element0();
    if (!element->isTensor()) {
      diag_.error(arg.range) << quoted << " of a sequence needs tensors, found "
                             << toString(arg.type);
      return types::errorType();
    }
    return element;
  }
  auto t = asTensor(arg, quoted.c_str(), false);
  if (!t)
    return types::errorType();
  if ((*t)->shape.empty()) {
    diag_.error(arg.range) << quoted << " needs a tensor of rank 1 or more or a sequence, "
                           << "found " << toString(*t);
    return types::errorType();
  }
  auto k = axisOf(axis, (*t)->shape.size(), quoted);
  return k ? types::tensor((*t)->element, withoutAxis((*t)->shape, *k)) : types::errorType();
}

TypeRef TypeChecker::checkSoftmax(const BuiltinInfo &info, const Arg &arg, const Arg *axis) {
  std::string quoted = "'" + std::string(info.name) + "'";
  const TypeRef &t = arg.type;
  if (t->kind == TypeKind::List && t->element0()->isScalarTensor() &&
      t->element0()->element == ElementType::F32 && !axis)
    return t; // normalised across the sequence (attention)
  auto tensor = asTensor(arg, quoted.c_str());
  if (!tensor)
    return types::errorType();
  if ((*tensor)->shape.empty()) {
    diag_.error(arg.range) << quoted << " needs a tensor of rank 1 or more or a sequence of f32 "
                           << "scalars, found " << toString(t);
    return types::errorType();
  }
  return axisOf(axis, (*tensor)->shape.size(), quoted) ? *tensor : types::errorType();
}

TypeRef TypeChecker::checkDot(const std::vector<Arg> &args, SourceRange range) {
  auto a = asTensor(args[0], "'dot'"), b = asTensor(args[1], "'dot'");
  if (!a || !b)
    return types::errorType();
  if ((*a)->shape.size() != 1 || !sameType(*a, *b)) {
    diag_.error(range) << "'dot' needs two vectors of one length, found " << toString(*a) << " and "
                       << toString(*b);
    return types::errorType();
  }
  return types::f32();
}

TypeRef TypeChecker::checkConcat(const std::vector<Arg> &args, const Arg *axis) {
  if (args[0].type->kind == TypeKind::List) { // lists, one after another
    if (axis) {
      diag_.error(axis->range) << "'concat' of lists takes no axis";
      return types::errorType();
    }
    for (const Arg &a : args)
      if (!sameType(a.type, args[0].type)) {
        diag_.error(a.range) << "'concat' of lists needs lists of one type: expected "
                             << toString(args[0].type) << ", found " << toString(a.type);
        return types::errorType();
      }
    return args[0].type;
  }
  std::vector<TypeRef> tensors;
  for (const Arg &a : args) {
    auto t = asTensor(a, "'concat'", false);
    if (!t)
      return types::errorType();
    if ((*t)->shape.empty()) {
      diag_.error(a.range) << "'concat' joins tensors of rank 1 or more, found " << toString(*t);
      return types::errorType();
    }
    tensors.push_back(*t);
  }
  const TypeRef &first = tensors[0];
  auto k = axisOf(axis, first->shape.size(), "'concat'");
  if (!k)
    return types::errorType();
  std::vector<int64_t> shape = first->shape;
  shape[size_t(*k)] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TypeRef &t = tensors[i];
    bool fits = t->element == first->element && t->shape.size() == first->shape.size();
    for (size_t d = 0; fits && d < t->shape.size(); ++d)
      fits = int(d) == *k || t->shape[d] == first->shape[d];
    if (!fits) {
      diag_.error(args[i].range) << "'concat' along axis " << *k
                                 << " needs one element type and the other dimensions equal: "
                                 << "expected like " << toString(first) << ", found "
                                 << toString(t);
      return types::errorType();
    }
    shape[size_t(*k)] += t->shape[size_t(*k)];
  }
  return types::tensor(first->element, shape);
}

TypeRef TypeChecker::checkArgmax(const Arg &arg, const Arg *axis) {
  auto t = asTensor(arg, "'argmax'", false);
  if (!t)
    return types::errorType();
  if ((*t)->shape.empty()) {
    diag_.error(arg.range) << "'argmax' needs a tensor of rank 1 or more, found " << toString(*t);
    return types::errorType();
  }
  auto k = axisOf(axis, (*t)->shape.size(), "'argmax'");
  return k ? types::i32(withoutAxis((*t)->shape, *k)) : types::errorType();
}

TypeRef TypeChecker::checkTranspose(const Arg &arg) {
  auto t = asTensor(arg, "'transpose'", false);
  if (!t)
    return types::errorType();
  if ((*t)->shape.size() != 2) {
    diag_.error(arg.range) << "'transpose' needs a matrix (rank 2), found " << toString(*t);
    return types::errorType();
  }
  return types::tensor((*t)->element, {(*t)->shape[1], (*t)->shape[0]});
}

TypeRef TypeChecker::checkOuter(const std::vector<Arg> &args) {
  auto a = asTensor(args[0], "'outer'"), b = asTensor(args[1], "'outer'");
  if (!a || !b)
    return types::errorType();
  for (size_t i = 0; i < 2; ++i)
    if ((i == 0 ? *a : *b)->shape.size() != 1) {
      diag_.error(args[i].range) << "'outer' multiplies two vectors, found "
                                 << toString(i == 0 ? *a : *b);
      return types::errorType();
    }
  return types::f32({(*a)->shape[0], (*b)->shape[0]});
}

TypeRef TypeChecker::checkReshape(const std::vector<Arg> &args) {
  auto t = asTensor(args[0], "'reshape'", false);
  if (!t)
    return types::errorType();
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (size_t i = 1; i < args.size(); ++i) {
    auto n = constInt(args[i], "a dimension of 'reshape'");
    if (!n)
      return types::errorType();
    shape.push_back(*n);
    count *= *n;
  }
  int64_t width = 1;
  for (int64_t d : (*t)->shape)
    width *= d;
  if (count != width) {
    diag_.error(args[1].range) << "'reshape' keeps the number of elements: " << toString(*t)
                               << " has " << width << ", the new shape " << count;
    return types::errorType();
  }
  return types::tensor((*t)->element, shape);
}

bool TypeChecker::expectHostInts(const Arg &list, const TypeRef &element, const std::string &what) {
  if (element->kind == TypeKind::Int)
    return true;
  if (element->isTensor())
    structuralError(list.range, what, list.type);
  else
    diag_.error(list.range) << what << ": expected [int], found " << toString(list.type);
  return false;
}

TypeRef TypeChecker::checkSegment(const BuiltinInfo &info, const std::vector<Arg> &args) {
  std::string quoted = "'" + std::string(info.name) + "'";
  auto values = listElement(args[0], quoted + " values:");
  auto ids = listElement(args[1], quoted + " segment ids:");
  if (!values || !ids)
    return types::errorType();
  if (!(*values)->isTensor() || (*values)->element != ElementType::F32) {
    diag_.error(args[0].range) << quoted << " values: expected a list of f32 tensors, found "
                               << toString(args[0].type);
    return types::errorType();
  }
  if (!expectHostInts(args[1], *ids, quoted + " segment ids"))
    return types::errorType();
  if (args[2].type->kind != TypeKind::Int) {
    if (args[2].type->isTensor())
      structuralError(args[2].range, "the segment count of " + quoted, args[2].type);
    else
      diag_.error(args[2].range) << "the segment count of " << quoted << " is an int, found "
                                 << toString(args[2].type);
    return types::errorType();
  }
  return args[0].type;
}

TypeRef TypeChecker::checkRange(const Arg &arg) {
  if (arg.type->kind == TypeKind::Int)
    return types::list(types::intType());
  if (arg.type->isTensor())
    structuralError(arg.range, "the length of 'range'", arg.type);
  else
    diag_.error(arg.range) << "'range' takes an int, found " << toString(arg.type);
  return types::errorType();
}

TypeRef TypeChecker::checkGather(const std::vector<Arg> &args) {
  auto values = listElement(args[0], "'gather' values:");
  auto ids = listElement(args[1], "'gather' indices:");
  if (!values || !ids)
    return types::errorType();
  return expectHostInts(args[1], *ids, "'gather' indices") ? args[0].type : types::errorType();
}

TypeRef TypeChecker::checkTopK(const std::vector<Arg> &args) {
  auto k = constInt(args[0], "the k of 'top_k'");
  auto x = asTensor(args[1], "'top_k'");
  if (!k || !x)
    return types::errorType();
  if ((*x)->shape.size() != 1) {
    diag_.error(args[1].range) << "'top_k' picks from a vector f32[n], found " << toString(*x);
    return types::errorType();
  }
  if (*k > (*x)->shape[0]) {
    diag_.error(args[0].range) << "'top_k' cannot pick " << *k << " of " << (*x)->shape[0]
                               << " values";
    return types::errorType();
  }
  return types::tuple({types::f32({*k}), types::i32({*k})});
}

/// An `int` or an `i32` scalar: a label or an index.
static bool isIndex(const TypeRef &t) {
  return t->kind == TypeKind::Int || (t->isScalarTensor() && t->element == ElementType::I32);
}

TypeRef TypeChecker::checkOneHot(const std::vector<Arg> &args) {
  auto n = constInt(args[0], "the size of 'one_hot'");
  if (!isIndex(args[1].type)) {
    diag_.error(args[1].range) << "'one_hot' index: expected int, found " << toString(args[1].type);
    return types::errorType();
  }
  return n ? types::f32({*n}) : types::errorType();
}

TypeRef TypeChecker::checkFill(const std::vector<Arg> &args) {
  std::vector<int64_t> shape;
  for (const Arg &a : args) {
    auto n = constInt(a, "a dimension");
    if (!n)
      return types::errorType();
    shape.push_back(*n);
  }
  return types::f32(shape);
}

TypeRef TypeChecker::checkDropout(const std::vector<Arg> &args) {
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

TypeRef TypeChecker::checkXent(const std::vector<Arg> &args) {
  auto logits = asTensor(args[0], "'xent' logits");
  if (!logits)
    return types::errorType();
  if ((*logits)->shape.size() != 1) {
    diag_.error(args[0].range) << "'xent' logits are a vector f32[K], found " << toString(*logits);
    return types::errorType();
  }
  if (!isIndex(args[1].type)) {
    diag_.error(args[1].range) << "'xent' label: expected int, found " << toString(args[1].type);
    return types::errorType();
  }
  return types::f32();
}

/// sigmoid_xent(logit, target) and mse(a, b): one shape, scalars lifted.
TypeRef TypeChecker::checkEqualShapeLoss(const BuiltinInfo &info, const std::vector<Arg> &args) {
  std::string quoted = "'" + std::string(info.name) + "'";
  auto a = asTensor(args[0], quoted.c_str());
  auto b = asTensor(args[1], quoted.c_str());
  if (!a || !b)
    return types::errorType();
  if (!sameType(*a, *b)) {
    diag_.error(args[1].range) << quoted << " compares equal shapes: expected " << toString(*a)
                               << ", found " << toString(*b);
    return types::errorType();
  }
  return types::f32();
}

TypeRef TypeChecker::checkTensor(const Arg &arg) {
  if (!arg.type->isHostNumber()) {
    diag_.error(arg.range) << "'tensor' makes an f32 from a host number, found "
                           << toString(arg.type);
    return types::errorType();
  }
  return types::f32();
}

TypeRef TypeChecker::checkVector(const std::vector<Arg> &args) {
  auto n = constInt(args[0], "the length of 'vector'");
  const TypeRef &xs = args[1].type;
  if (xs->kind != TypeKind::List || !xs->element0()->isHostNumber()) {
    diag_.error(args[1].range) << "'vector' takes a host list of numbers, found " << toString(xs);
    return types::errorType();
  }
  return n ? types::f32({*n}) : types::errorType();
}

//===---------------------------------------------------------- combinators
bool TypeChecker::isPartialApplication(Builtin combinator, const std::vector<Arg> &args) const {
  // reduce(f, x) is a full call when x is a list, a partial reduce(f, default) otherwise.
  if (combinator == Builtin::Reduce)
    return args.size() == 2 && args[1].type->kind != TypeKind::List;
  if (combinator == Builtin::Item || combinator == Builtin::Loop || combinator == Builtin::Beam)
    return false;
  return args.size() + 1 == size_t(builtinInfo(combinator).maxArgs);
}

/// Without its data argument a combinator is a block: map(words), fold(f, s).
TypeRef TypeChecker::partialApplication(Builtin combinator, const std::vector<Arg> &args) {
  auto value = std::make_shared<BlockValue>();
  value->kind = BlockValue::Kind::Partial;
  value->builtin = combinator;
  for (const Arg &a : args) {
    value->boundArgTypes.push_back(a.type);
    value->boundArgs.push_back(a.expr);
  }
  return makeBlock(value, nullptr);
}

TypeRef TypeChecker::checkNth(const std::vector<Arg> &args) {
  auto x = listElement(args[1], "'nth'");
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

TypeRef TypeChecker::checkItem(const Arg &arg) {
  if (!arg.type->isScalarTensor()) {
    diag_.error(arg.range) << "'item' reads a computed scalar (f32 or i32), found "
                           << toString(arg.type);
    return types::errorType();
  }
  return arg.type->element == ElementType::I32 ? types::intType() : types::floatType();
}

bool TypeChecker::expectHostInt(const Arg &arg, const std::string &what) {
  if (arg.type->kind == TypeKind::Int)
    return true;
  if (arg.type->isTensor())
    structuralError(arg.range, what, arg.type);
  else
    diag_.error(arg.range) << what << ": expected int, found " << toString(arg.type);
  return false;
}

TypeRef TypeChecker::checkLoop(std::vector<Arg> &args) {
  if (args[0].type->kind != TypeKind::Block) {
    diag_.error(args[0].range) << "'loop' expected a block, found " << toString(args[0].type);
    return types::errorType();
  }
  if (!expectHostInt(args[2], "the bound of 'loop' (its most iterations)"))
    return types::errorType();
  TypeRef state = args[1].type;
  // The state is the init's: a mismatch is reported there, not at the step.
  TypeRef out = apply(args[0].type, {Arg{state, args[1].expr, args[1].range}}, args[0].range);
  if (out->isError())
    return out;
  if (out->kind != TypeKind::Tuple || out->elements.size() != 3 || !isCondition(out->elements[0]) ||
      !sameType(out->elements[2], state)) {
    diag_.error(args[0].range) << "the step of 'loop' must return (go on, output, state) with a "
                               << "bool or computed scalar first and the state " << toString(state)
                               << " last, found " << toString(out);
    return types::errorType();
  }
  return types::tuple({types::list(out->elements[1]), state});
}

TypeRef TypeChecker::checkBeam(std::vector<Arg> &args) {
  if (args[0].type->kind != TypeKind::Block) {
    diag_.error(args[0].range) << "'beam' expected a block, found " << toString(args[0].type);
    return types::errorType();
  }
  const char *roles[] = {"",
                         "",
                         "the start token of 'beam'",
                         "the end token of 'beam'",
                         "the width of 'beam'",
                         "the bound of 'beam' (its most steps)"};
  for (size_t i = 2; i < args.size(); ++i)
    if (!expectHostInt(args[i], roles[i]))
      return types::errorType();
  TypeRef state = args[1].type;
  const TypeRef &step = args[0].type;
  if (step->hasSignature && step->params.size() != 2) {
    diag_.error(args[0].range) << "the step of 'beam' takes the state and the previous token "
                               << "(state, int), found a block of " << step->params.size()
                               << " parameter" << (step->params.size() == 1 ? "" : "s")
                               << (step->params.size() == 1 ? ": add the token, an int" : "");
    return types::errorType();
  }
  TypeRef out = apply(
      step,
      {Arg{state, args[1].expr, args[1].range}, Arg{types::intType(), nullptr, args[0].range}},
      args[0].range);
  if (out->isError())
    return out;
  if (out->kind != TypeKind::Tuple || out->elements.size() != 2 || !out->elements[0]->isTensor() ||
      out->elements[0]->element != ElementType::F32 || out->elements[0]->shape.size() != 1 ||
      !sameType(out->elements[1], state)) {
    diag_.error(args[0].range) << "the step of 'beam' must return (log-probabilities f32[V], "
                               << "state) with the state " << toString(state) << ", found "
                               << toString(out);
    return types::errorType();
  }
  return types::list(types::intType());
}

TypeRef TypeChecker::checkNgrams(const std::vector<Arg> &args) {
  auto n = constInt(args[0], "the n of 'ngrams'");
  auto x = listElement(args[1], "'ngrams'");
  if (!n || !x)
    return types::errorType();
  return types::list(types::tuple(std::vector<TypeRef>(size_t(*n), *x)));
}

/// map, zip_with, fold, rnn and reduce: a block applied to elements (and a state).
TypeRef TypeChecker::checkBlockCombinator(Builtin combinator, std::vector<Arg> &args) {
  std::string quoted = "'" + std::string(builtinInfo(combinator).name) + "'";
  if (args[0].type->kind != TypeKind::Block) {
    diag_.error(args[0].range) << quoted << " expected a block, found " << toString(args[0].type);
    return types::errorType();
  }
  auto x = listElement(args.back(), quoted);
  if (!x)
    return types::errorType();
  const TypeRef &f = args[0].type;
  auto element = [&](const TypeRef &t) { return Arg{t, nullptr, args[0].range}; };
  switch (combinator) {
  case Builtin::Map: {
    TypeRef y = apply(f, {element(*x)}, args[0].range);
    return y->isError() ? y : types::list(y);
  }
  case Builtin::ZipWith: {
    auto first = listElement(args[1], quoted);
    if (!first)
      return types::errorType();
    TypeRef z = apply(f, {element(*first), element(*x)}, args[0].range);
    return z->isError() ? z : types::list(z);
  }
  case Builtin::Fold: {
    TypeRef state = args[1].type;
    TypeRef next = apply(f, {element(state), element(*x)}, args[0].range);
    if (!next->isError() && !sameType(next, state)) {
      diag_.error(args[0].range) << "the block of 'fold' must return its state type: expected "
                                 << toString(state) << ", found " << toString(next);
      return types::errorType();
    }
    return next->isError() ? next : state;
  }
  case Builtin::Rnn: {
    TypeRef state = args[1].type;
    TypeRef out = apply(f, {element(*x), element(state)}, args[0].range);
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
  case Builtin::Reduce: {
    // reduce(f, xs) or reduce(f, default, xs)
    if (args.size() == 3 && !expectType(*x, args[1], "the default of 'reduce'"))
      return types::errorType();
    TypeRef r = apply(f, {element(*x), element(*x)}, args[0].range);
    if (!r->isError() && !sameType(r, *x)) {
      diag_.error(args[0].range) << "the block of 'reduce' must combine two elements into one: "
                                 << "expected " << toString(*x) << ", found " << toString(r);
      return types::errorType();
    }
    return r->isError() ? r : *x;
  }
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) case Builtin::Kind:
#include "passes/builtins/Ops.def"
#define FOLDC_FUNCTION(Kind, Name, MinArgs, MaxArgs, Operands) case Builtin::Kind:
#include "passes/builtins/Builtins.def"
  case Builtin::Zip:
  case Builtin::Ngrams:
  case Builtin::Nth:
  case Builtin::Length:
  case Builtin::Reverse:
  case Builtin::Range:
  case Builtin::Gather:
  case Builtin::Item:
  case Builtin::Loop:
  case Builtin::Beam:
    break; // checkBuiltinCall sends only the block combinators here
  }
  return types::errorType();
}

} // namespace foldc
