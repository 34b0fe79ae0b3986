// Lowering builtins and combinators: loops as unfolding steps with their
// own contexts, and the helper kernels of sum/mean/max/min/softmax across a
// sequence (see Lowering.h).
#include "passes/batching/Lowering.h"

#include "frontend/ASTPrinter.h"
#include "passes/sema/Builtins.h"

namespace foldc::lowering {

int Lowering::helperKernel(const std::string &name, SourceRange at, const std::string &op,
                           std::vector<TypeRef> args, const TypeRef &type,
                           std::vector<HostInput> hosts) {
  KernelPlan k;
  k.id = int(plan_.kernels.size());
  k.name = name;
  k.range = at;
  PlanOp o;
  o.name = op;
  o.type = type;
  o.flops = op == "zeros" ? 0 : double(width(type));
  for (size_t i = 0; i < args.size(); ++i) {
    k.argSources.push_back("%a" + std::to_string(i));
    o.operands.push_back({PlanOperand::Kind::Argument, int(i), ""});
  }
  for (size_t h = 0; h < hosts.size(); ++h)
    o.operands.push_back({PlanOperand::Kind::Host, int(h), ""});
  k.args = std::move(args);
  k.hostInputs = std::move(hosts);
  k.ops.push_back(std::move(o));
  k.results.push_back({0, "value"});
  plan_.kernels.push_back(std::move(k));
  return plan_.kernels.back().id;
}

std::vector<int> Lowering::sequenceKernels(const std::string &name, const TypeRef &element,
                                           const std::string &context, SourceRange at) {
  std::string prefix = context + ".seq_" + name + ".";
  auto add = [&] { return helperKernel(prefix + "add", at, "add", {element, element}, element); };
  auto zeros = [&] { return helperKernel(prefix + "zeros", at, "zeros", {}, element); };
  if (name == "sum")
    return {add(), zeros()};
  if (name == "mean") {
    HostInput n{"length", types::floatType(), nullptr};
    return {add(), zeros(), helperKernel(prefix + "scale", at, "div", {element}, element, {n})};
  }
  if (name == "softmax")
    return {helperKernel(prefix + "exp", at, "exp", {element}, element), add(), zeros(),
            helperKernel(prefix + "divide", at, "div", {element, element}, element)};
  // max, min: element-wise maximum/minimum of neighbours.
  return {helperKernel(prefix + (name == "max" ? "maximum" : "minimum"), at,
                       name == "max" ? "maximum" : "minimum", {element, element}, element),
          zeros()};
}

AVal Lowering::builtin(const std::string &name, std::vector<AVal> args, const TypeRef &type,
                       const Expr &site, Context &ctx) {
  const BuiltinInfo *info = findBuiltin(name);
  if (info->kind == BuiltinKind::Combinator)
    return combinator(name, args, type, site, ctx);
  bool anyTensor = false;
  for (const AVal &a : args)
    anyTensor |= a.isTensorLike() || a.kind == AVal::Kind::Tuple;
  bool sequence = !args.empty() && args[0].type && args[0].type->kind == TypeKind::List;
  if (sequence) { // sum/mean/max/min/softmax across a sequence
    UnfoldStep s = structuralStep(name, {args[0]}, ctx);
    s.kind = UnfoldStep::Kind::Sequence;
    s.text = "seq_" + s.text + " pairwise, depth ceil(log2 n)";
    s.helpers = sequenceKernels(name, args[0].type->element0(), ctx.name, site.range());
    return structural(ctx, std::move(s), type, maxStage(args));
  }
  std::vector<AVal> operands;
  for (const AVal &a : args)
    if (a.isTensorLike() || a.kind == AVal::Kind::Host)
      operands.push_back(a);
  if (!anyTensor && (name == "zeros" || name == "ones" || name == "one_hot" || name == "tensor" ||
                     name == "vector"))
    return emit(ctx, name, operands, type, 0, site.range());
  return emit(ctx, name, operands, type, double(width(type)) * 2, site.range());
}

std::vector<HostExprRef> Lowering::hostOperands(const std::vector<AVal> &args) {
  std::vector<HostExprRef> operands;
  for (const AVal &a : args)
    operands.push_back(a.kind == AVal::Kind::Host ? a.expr
                                                  : hostExpr(HostExpr::Kind::Name, a.text, a.type));
  return operands;
}

AVal Lowering::combinator(const std::string &name, std::vector<AVal> args, const TypeRef &type,
                          const Expr &site, Context &ctx) {
  int stage = maxStage(args);
  if (name == "length" || name == "nth" || name == "zip" || name == "ngrams") {
    if (!type->isHost())
      return structural(ctx, structuralStep(name, args, ctx), type, stage);
    std::string shown;
    for (const AVal &a : args)
      shown += (shown.empty() ? "" : ", ") + a.text;
    return AVal::host(name + "(" + shown + ")", type,
                      hostExpr(HostExpr::Kind::Call, name, type, hostOperands(args)));
  }
  std::string id = "%" + std::to_string(handles_++);
  auto elementOf = [](const AVal &list) {
    return list.type && list.type->kind == TypeKind::List ? list.type->element0()
                                                          : types::errorType();
  };
  std::string how = name == "fold" || name == "rnn" ? "sequential: depth n"
                    : name == "reduce"              ? "balanced: depth ceil(log2 n)"
                                                    : "one instance per element";
  UnfoldStep loop = makeStep(UnfoldStep::Kind::Combinator, "", name);
  loop.target = id;
  loop.type = type;
  for (size_t i = 1; i < args.size(); ++i)
    loop.values.push_back(valueOf(args[i]));
  std::string over = textOf(loop.values.back());
  if (name == "zip_with")
    over = textOf(loop.values[0]) + ", " + over;
  if (loop.values.size() == 2 && name != "zip_with")
    over += " from " + textOf(loop.values[0]);
  loop.text = id + " = " + name + " over " + over + " (" + how + ")";
  Context body(ctx.name + "." + name + std::to_string(loops_++), &loop.children);
  // The block's arguments, named after this step so nested loops stay apart.
  auto arg = [&](const char *what, const TypeRef &t) { return handleFor(id + "." + what, t, 0); };
  std::vector<AVal> blockArgs;
  if (name == "map")
    blockArgs = {arg("x", elementOf(args[1]))};
  else if (name == "zip_with")
    blockArgs = {arg("x", elementOf(args[1])), arg("y", elementOf(args[2]))};
  else if (name == "fold")
    blockArgs = {arg("state", args[1].type), arg("x", elementOf(args.back()))};
  else if (name == "rnn")
    blockArgs = {arg("x", elementOf(args.back())), arg("state", args[1].type)};
  else // reduce
    blockArgs = {arg("a", elementOf(args.back())), arg("b", elementOf(args.back()))};
  if (args[0].block) { // what one application gives out is a result of its kernels
    StepValue each = valueOf(apply(args[0].block, blockArgs, types::errorType(), site, body));
    finish(body);
    loop.children.push_back(makeStep(UnfoldStep::Kind::Yield, "yield " + textOf(each), "", {each}));
  }
  ctx.steps->push_back(std::move(loop));
  return handleFor(id, type, stage + 1);
}

} // namespace foldc::lowering
