// Lowering layers: fc and embedding, and lstm/gru cells as the primitives of
// their formulas (see Lowering.h).
#include "passes/batching/Lowering.h"

namespace foldc::lowering {

LoweredValue Lowering::layer(const LayerDecl &decl, std::vector<LoweredValue> args,
                             const Expr &site, Context &ctx) {
  const LayerInfo &info = program_.layers.at(&decl);
  TypeRef type = info.blockType->result;
  fusing_.push_back(decl.name);
  LoweredValue x = args[0];
  LoweredValue result;
  SourceRange at = site.range();
  auto param = [&](const char *p) { return decl.name + "." + p; };
  switch (info.kind) {
  case LayerKind::Embedding:
    result = emitWithParam(ctx, OpKind::Gather, {x}, type, at, param("E"));
    break;
  case LayerKind::FullyConnected: {
    TypeRef out = types::f32({info.out});
    result = emitWithParam(ctx, OpKind::Linear, {x}, out, at, param("W"));
    result = emitWithParam(ctx, OpKind::BiasAdd, {result}, out, at, param("b"));
    if (std::optional<OpKind> act = opOf(info.activation))
      result = emit(ctx, *act, {result}, out, at);
    break;
  }
  case LayerKind::LSTM:
    result = lstmCell(decl, info, x, args[1], ctx, at);
    break;
  case LayerKind::GRU:
    result = gruCell(decl, info, x, args[1], ctx, at);
    break;
  }
  fusing_.pop_back();
  return result;
}

LoweredValue Lowering::linearOf(const LoweredValue &x, const std::string &param, int64_t out,
                                Context &ctx, SourceRange at) {
  return emitWithParam(ctx, OpKind::Linear, {x}, types::f32({out}), at, param);
}

LoweredValue Lowering::linearColumns(const LoweredValue &x, const std::string &param, int64_t lo,
                                     int64_t hi, Context &ctx, SourceRange at) {
  OpAttrs attrs;
  attrs.param = paramIndex(param);
  attrs.lo = lo;
  attrs.hi = hi;
  return emit(ctx, OpKind::Linear, {x}, types::f32({hi - lo}), at, attrs);
}

LoweredValue Lowering::sliceOf(const LoweredValue &x, int64_t lo, int64_t hi, Context &ctx,
                               SourceRange at) {
  OpAttrs range;
  range.lo = lo;
  range.hi = hi;
  return emit(ctx, OpKind::Slice, {x}, types::f32({hi - lo}), at, range);
}

LoweredValue Lowering::elementwise(OpKind op, std::vector<LoweredValue> xs, int64_t h, Context &ctx,
                                   SourceRange at) {
  return emit(ctx, op, xs, types::f32({h}), at);
}

LoweredValue Lowering::lstmCell(const LayerDecl &decl, const LayerInfo &info, const LoweredValue &x,
                                const LoweredValue &state, Context &ctx, SourceRange at) {
  int64_t h = info.out;
  LoweredValue gates = elementwise(OpKind::Add,
                                   {linearOf(x, decl.name + ".W", 4 * h, ctx, at),
                                    linearOf(element(state, 0), decl.name + ".U", 4 * h, ctx, at)},
                                   4 * h, ctx, at);
  gates = emitWithParam(ctx, OpKind::BiasAdd, {gates}, types::f32({4 * h}), at, decl.name + ".b");
  auto gate = [&](int k, OpKind act, double bias = 0) {
    LoweredValue g = sliceOf(gates, k * h, (k + 1) * h, ctx, at);
    if (bias != 0)
      g = elementwise(OpKind::Add,
                      {g, constant(ConstValue{false, 0, bias}.toString(),
                                   ConstValue{false, 0, bias}, types::floatType())},
                      h, ctx, at);
    return elementwise(act, {g}, h, ctx, at);
  };
  LoweredValue i = gate(0, OpKind::Sigmoid), f = gate(1, OpKind::Sigmoid, info.forgetBias),
               o = gate(2, OpKind::Sigmoid), u = gate(3, OpKind::Tanh);
  LoweredValue c = elementwise(OpKind::Add,
                               {elementwise(OpKind::Mul, {i, u}, h, ctx, at),
                                elementwise(OpKind::Mul, {f, element(state, 1)}, h, ctx, at)},
                               h, ctx, at);
  LoweredValue next =
      elementwise(OpKind::Mul, {o, elementwise(OpKind::Tanh, {c}, h, ctx, at)}, h, ctx, at);
  return tuple({next, tuple({next, c})});
}

LoweredValue Lowering::gruCell(const LayerDecl &decl, const LayerInfo &info, const LoweredValue &x,
                               const LoweredValue &s, Context &ctx, SourceRange at) {
  int64_t h = info.out;
  std::string U = decl.name + ".U";
  LoweredValue gx =
      emitWithParam(ctx, OpKind::BiasAdd, {linearOf(x, decl.name + ".W", 3 * h, ctx, at)},
                    types::f32({3 * h}), at, decl.name + ".b");
  // s @ U for the gates z and r only; the candidate multiplies (r * s) by
  // U's last third: each column of U is used once.
  LoweredValue gs = linearColumns(s, U, 0, 2 * h, ctx, at);
  auto gate = [&](int k) {
    return elementwise(OpKind::Sigmoid,
                       {elementwise(OpKind::Add,
                                    {sliceOf(gx, k * h, (k + 1) * h, ctx, at),
                                     sliceOf(gs, k * h, (k + 1) * h, ctx, at)},
                                    h, ctx, at)},
                       h, ctx, at);
  };
  LoweredValue z = gate(0), r = gate(1);
  LoweredValue grs =
      linearColumns(elementwise(OpKind::Mul, {r, s}, h, ctx, at), U, 2 * h, 3 * h, ctx, at);
  LoweredValue candidate =
      elementwise(OpKind::Add, {sliceOf(gx, 2 * h, 3 * h, ctx, at), grs}, h, ctx, at);
  LoweredValue n = elementwise(OpKind::Tanh, {candidate}, h, ctx, at);
  LoweredValue keep =
      elementwise(OpKind::Mul, {z, elementwise(OpKind::Sub, {s, n}, h, ctx, at)}, h, ctx, at);
  LoweredValue next = elementwise(OpKind::Add, {n, keep}, h, ctx, at);
  return tuple({next, next});
}

} // namespace foldc::lowering
