// Lowering builtins and combinators: loops as unfolding steps with their
// own contexts, and the helper kernels of sum/mean/max/min/softmax across a
// sequence (see Lowering.h).
#include "passes/batching/Lowering.h"

#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"

namespace foldc::lowering {

int Lowering::helperKernel(const std::string &name, SourceRange at, OpKind op,
                           std::vector<TypeRef> args, const TypeRef &type,
                           std::vector<HostInput> hosts) {
  KernelPlan k;
  k.id = int(plan_.kernels.size());
  k.name = name;
  k.range = at;
  k.helper = true;
  PlanOp o;
  o.kind = op;
  o.type = type;
  o.range = at;
  o.flops = opInfo(op).flops == FlopRule::Zero ? 0 : double(widthOf(type));
  for (size_t i = 0; i < args.size(); ++i) {
    k.argSources.push_back("%a" + std::to_string(i));
    o.operands.push_back({PlanOperand::Kind::Argument, int(i), 0});
  }
  for (size_t h = 0; h < hosts.size(); ++h)
    o.operands.push_back({PlanOperand::Kind::Host, int(h), 0});
  k.args = std::move(args);
  k.hostInputs = std::move(hosts);
  k.ops.push_back(std::move(o));
  k.results.push_back({0, ResultRole::Value, -1});
  plan_.kernels.push_back(std::move(k));
  return plan_.kernels.back().id;
}

std::vector<int> Lowering::sequenceKernels(SequenceKind kind, const TypeRef &element,
                                           const std::string &context, SourceRange at) {
  std::string prefix = context + ".seq_" + std::string(sequenceKindName(kind)) + ".";
  auto add = [&] {
    return helperKernel(prefix + "add", at, OpKind::Add, {element, element}, element);
  };
  auto zeros = [&] { return helperKernel(prefix + "zeros", at, OpKind::Zeros, {}, element); };
  switch (kind) {
  case SequenceKind::Sum:
    return {add(), zeros()};
  case SequenceKind::Mean: {
    HostInput n{"length", types::floatType(), nullptr, 1};
    return {add(), zeros(),
            helperKernel(prefix + "scale", at, OpKind::Div, {element}, element, {n})};
  }
  case SequenceKind::Softmax:
    return {helperKernel(prefix + "exp", at, OpKind::Exp, {element}, element), add(), zeros(),
            helperKernel(prefix + "divide", at, OpKind::Div, {element, element}, element)};
  case SequenceKind::Max:
    return {helperKernel(prefix + "maximum", at, OpKind::Maximum, {element, element}, element),
            zeros()};
  case SequenceKind::Min:
    return {helperKernel(prefix + "minimum", at, OpKind::Minimum, {element, element}, element),
            zeros()};
  }
  return {};
}

LoweredValue Lowering::builtin(Builtin builtin, std::vector<LoweredValue> args, const TypeRef &type,
                               const Expr &site, Context &ctx) {
  switch (builtin) {
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) case Builtin::Kind:
#include "passes/builtins/Ops.def"
#define FOLDC_FUNCTION(Kind, Name, MinArgs, MaxArgs, Operands) case Builtin::Kind:
#include "passes/builtins/Builtins.def"
    return tensorFunction(builtin, std::move(args), type, site, ctx);
  case Builtin::Length:
    return listOperation(ListOp::Length, builtin, args, type, ctx);
  case Builtin::Nth:
    return listOperation(ListOp::Nth, builtin, args, type, ctx);
  case Builtin::Zip: // its source line, for the error of lists of two lengths
    args.push_back(constant(std::to_string(site.range().begin.line),
                            ConstValue{true, site.range().begin.line, 0}, types::intType()));
    return listOperation(ListOp::Zip, builtin, args, type, ctx);
  case Builtin::Ngrams:
    return listOperation(ListOp::Ngrams, builtin, args, type, ctx);
  case Builtin::Reverse:
    return listOperation(ListOp::Reverse, builtin, args, type, ctx);
  case Builtin::Range:
    return listOperation(ListOp::Range, builtin, args, type, ctx);
  case Builtin::Gather:
    return listOperation(ListOp::Gather, builtin, args, type, ctx);
  case Builtin::Map:
    return loop(CombinatorKind::Map, builtin, args, type, site, ctx);
  case Builtin::ZipWith:
    return loop(CombinatorKind::ZipWith, builtin, args, type, site, ctx);
  case Builtin::Fold:
    return loop(CombinatorKind::Fold, builtin, args, type, site, ctx);
  case Builtin::Rnn:
    return loop(CombinatorKind::Rnn, builtin, args, type, site, ctx);
  case Builtin::Reduce:
    return loop(CombinatorKind::Reduce, builtin, args, type, site, ctx);
  case Builtin::Item:
    return readScalar(args[0], sourceText(site), ctx, site.range());
  case Builtin::Loop:
    return loop(CombinatorKind::Loop, builtin, args, type, site, ctx);
  case Builtin::Beam:
    return loop(CombinatorKind::Beam, builtin, args, type, site, ctx);
  }
  return LoweredValue::none(type);
}

/// The builtin that computes `kind` across a sequence.
static Builtin builtinOf(SequenceKind kind) {
  switch (kind) {
  case SequenceKind::Sum:
    return Builtin::Sum;
  case SequenceKind::Mean:
    return Builtin::Mean;
  case SequenceKind::Max:
    return Builtin::Max;
  case SequenceKind::Min:
    return Builtin::Min;
  case SequenceKind::Softmax:
    return Builtin::Softmax;
  }
  return Builtin::Sum;
}

/// sum/mean/max/min/softmax across a sequence, rather than over a tensor's
/// axis (the type checker accepts no other function of a list).
static std::optional<SequenceKind> acrossSequence(Builtin builtin,
                                                  const std::vector<LoweredValue> &args) {
  if (args.empty() || !args[0].type || args[0].type->kind != TypeKind::List)
    return std::nullopt;
  for (SequenceKind kind : {SequenceKind::Sum, SequenceKind::Mean, SequenceKind::Max,
                            SequenceKind::Min, SequenceKind::Softmax})
    if (builtinOf(kind) == builtin)
      return kind;
  return std::nullopt;
}

/// The arguments of a call that are its op's operands (Builtins.def's
/// Operands column).
static std::vector<LoweredValue> operandsOf(Builtin builtin, std::vector<LoweredValue> args) {
  switch (builtinInfo(builtin).operands) {
  case Operands::All:
    return args;
  case Operands::First:
    return {args.front()};
  case Operands::Last:
    return {args.back()};
  case Operands::NoOperand:
    return {};
  }
  return args;
}

LoweredValue Lowering::tensorFunction(Builtin builtin, std::vector<LoweredValue> args,
                                      const TypeRef &type, const Expr &site, Context &ctx) {
  std::string name(builtinInfo(builtin).name);
  for (const LoweredValue &a : args)
    if (a.kind == LoweredValue::Kind::None)
      return LoweredValue::none(type);
  if (std::optional<SequenceKind> kind = acrossSequence(builtin, args)) {
    UnfoldStep s = structuralStep(ListOp::List, {args[0]});
    s.kind = UnfoldStep::Kind::Sequence;
    s.range = site.range();
    s.sequence = *kind;
    s.text = "seq_" + name + "(" + s.values[0].text + ") pairwise, depth ceil(log2 n)";
    s.helpers = sequenceKernels(s.sequence, args[0].type->element0(), ctx.name, site.range());
    return structural(ctx, std::move(s), type, maxStage(args));
  }
  if (builtin == Builtin::Concat && args[0].type->kind == TypeKind::List)
    return listOperation(ListOp::Concat, builtin, args, type, ctx);
  OpKind op = *opOf(builtin);
  if (opInfo(op).family == OpFamily::Segment)
    return segment(op, args, type, site, ctx);
  OpAttrs attrs;
  if (opInfo(op).attr == OpAttr::Axis)
    attrs.axis = axisOfCall(site, args[0].type);
  std::vector<LoweredValue> operands = operandsOf(builtin, args);
  if (op == OpKind::TopK) { // two ops: the values, then their positions
    attrs.hi = type->elements[0]->shape[0];
    LoweredValue values = emit(ctx, OpKind::TopK, operands, type->elements[0], site.range(), attrs);
    LoweredValue positions =
        emit(ctx, OpKind::TopKIndices, operands, type->elements[1], site.range(), attrs);
    return tuple({values, positions});
  }
  if (opInfo(op).attr == OpAttr::Rate) { // dropout(x, rate)
    if (!args[1].constant)
      return notSupported(site.range(), "a dropout rate that is not a constant", type);
    attrs.rate = args[1].number;
  }
  return emit(ctx, op, operands, type, site.range(), attrs);
}

LoweredValue Lowering::segment(OpKind op, const std::vector<LoweredValue> &args,
                               const TypeRef &type, const Expr &site, Context &ctx) {
  std::string name(opInfo(op).name);
  TypeRef element = type->element0();
  UnfoldStep s = structuralStep(ListOp::List, args);
  s.kind = UnfoldStep::Kind::Segment;
  s.range = site.range();
  s.text = name + "(" + commaSeparatedTexts(s.values) + "): one instance a segment";
  s.kernel = helperKernel(ctx.name + "." + name, site.range(), op, {element}, element);
  return structural(ctx, std::move(s), type, maxStage(args));
}

int Lowering::axisOfCall(const Expr &site, const TypeRef &tensor) const {
  auto *call = dyn_cast<CallExpr>(&site);
  if (!call)
    return -1;
  for (const Argument &a : call->args) // sema recorded the axis a call names
    if (auto axis = program_.callAxes.find(a.value.get()); axis != program_.callAxes.end())
      return planAxis(axis->second, tensor->shape.size());
  return -1;
}

std::vector<HostExprRef> Lowering::hostOperands(const std::vector<LoweredValue> &args) {
  std::vector<HostExprRef> operands;
  for (const LoweredValue &a : args) {
    if (a.kind ==
        LoweredValue::Kind::Handle) { // a list of tensors: a vector of handles at unfold time
      auto e = hostExpr(HostExpr::Kind::Local, a.type);
      e->handle = a.handle;
      operands.push_back(e);
    } else {
      operands.push_back(a.expr); // null for what unfolding cannot hold: the verifier reports it
    }
  }
  return operands;
}

LoweredValue Lowering::listOperation(ListOp op, Builtin builtin, std::vector<LoweredValue> args,
                                     const TypeRef &type, Context &ctx) {
  if (!type->isHost())
    return structural(ctx, structuralStep(op, args), type, maxStage(args));
  std::string shown;
  for (const LoweredValue &a : args)
    shown += (shown.empty() ? "" : ", ") + a.text;
  auto call = hostExpr(HostExpr::Kind::Call, type, hostOperands(args));
  call->listOp = op;
  return LoweredValue::host(std::string(builtinInfo(builtin).name) + "(" + shown + ")", type, call);
}

std::string Lowering::commaSeparatedTexts(const std::vector<StepValue> &values) {
  std::string out;
  for (const StepValue &v : values)
    out += (out.empty() ? "" : ", ") + v.text;
  return out;
}

TypeRef Lowering::stepResultType(const BlockValue &block) const {
  switch (block.kind) {
  case BlockValue::Kind::Def:
    return program_.signatures.at(block.def)->result;
  case BlockValue::Kind::Lambda:
    return program_.typeOf(*block.lambda->body);
  case BlockValue::Kind::Layer:
  case BlockValue::Kind::Builtin:
  case BlockValue::Kind::Accessor:
  case BlockValue::Kind::Partial:
  case BlockValue::Kind::Compose:
  case BlockValue::Kind::Typed:
  case BlockValue::Kind::Host:
    return types::errorType();
  }
  return types::errorType();
}

LoweredValue Lowering::loop(CombinatorKind combinator, Builtin builtin,
                            std::vector<LoweredValue> args, const TypeRef &type, const Expr &site,
                            Context &ctx) {
  int stage = maxStage(args);
  std::string name(builtinInfo(builtin).name);
  UnfoldStep loop = makeStep(UnfoldStep::Kind::Combinator, "");
  loop.combinator = combinator;
  if (!args[0].block)
    return notSupported(site.range(), "the block given to '" + name + "'", type);
  // The first block of `f >> g` is applied without a known result type
  // (Compose in apply), which a combinator needs for its results.
  if (type->isError())
    return notSupported(site.range(),
                        "'" + name + "' as the first block of a composition (write `|x| g(" + name +
                            "(..., x))` instead of `" + name + "(...) >> g`)",
                        type);
  auto elementOf = [](const LoweredValue &list) {
    return list.type && list.type->kind == TypeKind::List ? list.type->element0()
                                                          : types::errorType();
  };
  std::string how = combinator == CombinatorKind::Fold || combinator == CombinatorKind::Rnn
                        ? "sequential: depth n"
                    : combinator == CombinatorKind::Reduce ? "balanced: depth ceil(log2 n)"
                    : combinator == CombinatorKind::Loop   ? "until the step says stop, at most max"
                    : combinator == CombinatorKind::Beam
                        ? "width hypotheses a step, waits for their scores"
                        : "one instance per element";
  loop.target = newLocal(PlanLocal::Kind::StepResult, type);
  std::string id = shown(loop.target);
  loop.type = type;
  loop.range = site.range();
  for (size_t i = 1; i < args.size(); ++i)
    loop.values.push_back(valueOf(args[i]));
  std::string over = loop.values.back().text;
  if (combinator == CombinatorKind::Loop || combinator == CombinatorKind::Beam)
    over = "[" + commaSeparatedTexts(loop.values) + "]";
  else if (loop.combinator == CombinatorKind::ZipWith)
    over = loop.values[0].text + ", " + over;
  else if (loop.values.size() == 2)
    over += " from " + loop.values[0].text;
  loop.text = id + " = " + name + " over " + over + " (" + how + ")";
  Context body(ctx.name + "." + name + std::to_string(loops_++), &loop.children);
  // The block's arguments: locals of their own, so nested loops stay apart.
  auto arg = [&](const char *what, const TypeRef &t) {
    loop.loopLocals.push_back(newLocal(PlanLocal::Kind::LoopVariable, t, "", id + "." + what));
    return fromHandle({loop.loopLocals.back(), {}}, id + "." + what, t, 0);
  };
  std::vector<LoweredValue> blockArgs;
  switch (loop.combinator) {
  case CombinatorKind::Map:
    blockArgs = {arg("x", elementOf(args[1]))};
    break;
  case CombinatorKind::ZipWith:
    blockArgs = {arg("x", elementOf(args[1])), arg("y", elementOf(args[2]))};
    break;
  case CombinatorKind::Fold:
    blockArgs = {arg("state", args[1].type), arg("x", elementOf(args.back()))};
    break;
  case CombinatorKind::Rnn:
    blockArgs = {arg("x", elementOf(args.back())), arg("state", args[1].type)};
    break;
  case CombinatorKind::Reduce:
    blockArgs = {arg("a", elementOf(args.back())), arg("b", elementOf(args.back()))};
    break;
  case CombinatorKind::Loop:
    blockArgs = {arg("state", args[1].type)};
    break;
  case CombinatorKind::Beam:
    blockArgs = {arg("state", args[1].type), arg("token", types::intType())};
    break;
  }
  // What one application gives out is a result of its kernels.
  TypeRef each = type;
  if (loop.combinator == CombinatorKind::Map || loop.combinator == CombinatorKind::ZipWith)
    each = type->element0();
  else if (loop.combinator == CombinatorKind::Rnn)
    each = types::tuple({type->elements[0]->element0(), type->elements[1]});
  else if (loop.combinator == CombinatorKind::Loop || loop.combinator == CombinatorKind::Beam)
    each = stepResultType(*args[0].block);
  if (each->isError())
    return notSupported(site.range(), "a step of '" + name + "' that is not a def or a lambda",
                        type);
  LoweredValue result = apply(args[0].block, blockArgs, each, site, body);
  if (loop.combinator == CombinatorKind::Loop && result.kind == LoweredValue::Kind::Tuple) {
    // A computed go-on flag is read inside the body, every iteration.
    result.elements[0] =
        asCondition(result.elements[0], "the step's go-on flag", body, site.range());
    result = tuple(std::move(result.elements));
  }
  if (result.kind != LoweredValue::Kind::None) {
    StepValue yielded = valueOf(result);
    finish(body);
    loop.children.push_back(makeStep(UnfoldStep::Kind::Yield, "yield " + yielded.text, {yielded}));
  }
  ctx.steps->push_back(std::move(loop));
  return fromHandle({ctx.steps->back().target, {}}, id, type, stage + 1);
}

} // namespace foldc::lowering
