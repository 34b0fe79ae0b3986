// Lowering builtins and combinators: loops as unfolding steps with their
// own contexts, and the helper kernels of sum/mean/max/min/softmax across a
// sequence (see Lowering.h).
#include "passes/batching/Lowering.h"

#include "frontend/ASTPrinter.h"
#include "passes/sema/Builtins.h"

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
  static const char *names[] = {"sum", "mean", "max", "min", "softmax"};
  std::string prefix = context + ".seq_" + names[int(kind)] + ".";
  auto add = [&] { return helperKernel(prefix + "add", at, OpKind::Add, {element, element}, element); };
  auto zeros = [&] { return helperKernel(prefix + "zeros", at, OpKind::Zeros, {}, element); };
  switch (kind) {
  case SequenceKind::Sum:
    return {add(), zeros()};
  case SequenceKind::Mean: {
    HostInput n{"length", types::floatType(), nullptr, 1};
    return {add(), zeros(), helperKernel(prefix + "scale", at, OpKind::Div, {element}, element, {n})};
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

AVal Lowering::builtin(const std::string &name, std::vector<AVal> args, const TypeRef &type,
                       const Expr &site, Context &ctx) {
  const BuiltinInfo *info = findBuiltin(name);
  if (info->kind == BuiltinKind::Combinator)
    return combinator(name, args, type, site, ctx);
  for (const AVal &a : args)
    if (a.kind == AVal::Kind::None)
      return AVal::none(type);
  bool sequence = !args.empty() && args[0].type && args[0].type->kind == TypeKind::List;
  if (sequence) { // sum/mean/max/min/softmax across a sequence
    static const std::pair<const char *, SequenceKind> kinds[] = {
        {"sum", SequenceKind::Sum}, {"mean", SequenceKind::Mean}, {"max", SequenceKind::Max},
        {"min", SequenceKind::Min}, {"softmax", SequenceKind::Softmax}};
    UnfoldStep s = structuralStep(ListOp::List, {args[0]});
    s.kind = UnfoldStep::Kind::Sequence;
    s.range = site.range();
    for (auto [n, kind] : kinds)
      if (name == n)
        s.sequence = kind;
    s.text = "seq_" + name + "(" + s.values[0].text + ") pairwise, depth ceil(log2 n)";
    s.helpers = sequenceKernels(s.sequence, args[0].type->element0(), ctx.name, site.range());
    return structural(ctx, std::move(s), type, maxStage(args));
  }
  std::optional<OpKind> op = opNamed(name);
  if (!op)
    return notSupported(site.range(), "'" + name + "' here", type);
  switch (opInfo(*op).family) {
  case OpFamily::Reduce: case OpFamily::Argmax: case OpFamily::Softmax:
  case OpFamily::LogSoftmax: case OpFamily::Concat: case OpFamily::Dot:
    for (const AVal &a : args)
      if (a.type->isTensor() && a.type->shape.size() >= 2)
        return notSupported(site.range(), "'" + name + "' of a tensor of rank 2 or more", type);
    break;
  default:
    break;
  }
  OpAttrs attrs;
  std::vector<AVal> operands;
  switch (*op) {
  case OpKind::Zeros: case OpKind::Ones:
    break; // the sizes are in the type
  case OpKind::OneHot: case OpKind::Vector:
    operands = {args[1]}; // one_hot(D, i), vector(n, xs): the size is in the type
    break;
  case OpKind::Dropout:
    if (!args[1].constant)
      return notSupported(site.range(), "a dropout rate that is not a constant", type);
    attrs.rate = args[1].number;
    operands = {args[0]};
    break;
  default:
    operands = args;
  }
  return emit(ctx, *op, operands, type, site.range(), attrs);
}

std::vector<HostExprRef> Lowering::hostOperands(const std::vector<AVal> &args) {
  std::vector<HostExprRef> operands;
  for (const AVal &a : args) {
    if (a.kind == AVal::Kind::Handle) { // a list of tensors: a vector of handles at unfold time
      auto e = hostExpr(HostExpr::Kind::Local, a.type);
      e->handle = a.handle;
      operands.push_back(e);
    } else {
      operands.push_back(a.expr); // null for what unfolding cannot hold: the verifier reports it
    }
  }
  return operands;
}

AVal Lowering::combinator(const std::string &name, std::vector<AVal> args, const TypeRef &type,
                          const Expr &site, Context &ctx) {
  int stage = maxStage(args);
  static const std::pair<const char *, ListOp> listOps[] = {
      {"length", ListOp::Length}, {"nth", ListOp::Nth}, {"zip", ListOp::Zip},
      {"ngrams", ListOp::Ngrams}};
  for (auto [n, op] : listOps) {
    if (name != n)
      continue;
    if (!type->isHost())
      return structural(ctx, structuralStep(op, args), type, stage);
    std::string shown;
    for (const AVal &a : args)
      shown += (shown.empty() ? "" : ", ") + a.text;
    auto call = hostExpr(HostExpr::Kind::Call, type, hostOperands(args));
    call->listOp = op;
    return AVal::host(name + "(" + shown + ")", type, call);
  }
  static const std::pair<const char *, CombinatorKind> loops[] = {
      {"map", CombinatorKind::Map}, {"zip_with", CombinatorKind::ZipWith},
      {"fold", CombinatorKind::Fold}, {"rnn", CombinatorKind::Rnn},
      {"reduce", CombinatorKind::Reduce}};
  UnfoldStep loop = makeStep(UnfoldStep::Kind::Combinator, "");
  for (auto [n, kind] : loops)
    if (name == n)
      loop.combinator = kind;
  if (!args[0].block)
    return notSupported(site.range(), "the block given to '" + name + "'", type);
  auto elementOf = [](const AVal &list) {
    return list.type && list.type->kind == TypeKind::List ? list.type->element0()
                                                          : types::errorType();
  };
  std::string how = name == "fold" || name == "rnn" ? "sequential: depth n"
                    : name == "reduce"              ? "balanced: depth ceil(log2 n)"
                                                    : "one instance per element";
  loop.target = newLocal(PlanLocal::Kind::StepResult, type);
  std::string id = shown(loop.target);
  loop.type = type;
  loop.range = site.range();
  for (size_t i = 1; i < args.size(); ++i)
    loop.values.push_back(valueOf(args[i]));
  std::string over = loop.values.back().text;
  if (loop.combinator == CombinatorKind::ZipWith)
    over = loop.values[0].text + ", " + over;
  if (loop.values.size() == 2 && loop.combinator != CombinatorKind::ZipWith)
    over += " from " + loop.values[0].text;
  loop.text = id + " = " + name + " over " + over + " (" + how + ")";
  Context body(ctx.name + "." + name + std::to_string(loops_++), &loop.children);
  // The block's arguments: locals of their own, so nested loops stay apart.
  auto arg = [&](const char *what, const TypeRef &t) {
    loop.loopLocals.push_back(newLocal(PlanLocal::Kind::LoopVariable, t, "", id + "." + what));
    return fromHandle({loop.loopLocals.back(), {}}, id + "." + what, t, 0);
  };
  std::vector<AVal> blockArgs;
  switch (loop.combinator) {
  case CombinatorKind::Map: blockArgs = {arg("x", elementOf(args[1]))}; break;
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
  }
  // What one application gives out is a result of its kernels.
  TypeRef each = type;
  if (loop.combinator == CombinatorKind::Map || loop.combinator == CombinatorKind::ZipWith)
    each = type->element0();
  else if (loop.combinator == CombinatorKind::Rnn)
    each = types::tuple({type->elements[0]->element0(), type->elements[1]});
  AVal result = apply(args[0].block, blockArgs, each, site, body);
  if (result.kind != AVal::Kind::None) {
    StepValue yielded = valueOf(result);
    finish(body);
    loop.children.push_back(makeStep(UnfoldStep::Kind::Yield, "yield " + yielded.text, {yielded}));
  }
  ctx.steps->push_back(std::move(loop));
  return fromHandle({ctx.steps->back().target, {}}, id, type, stage + 1);
}

} // namespace foldc::lowering
