// Lowering layers: fc and embedding, and lstm/gru cells as the primitives of
// their formulas (see Lowering.h).
#include "passes/batching/Lowering.h"

namespace foldc::lowering {

AVal Lowering::layer(const LayerDecl &decl, std::vector<AVal> args, const Expr &site,
                     Context &ctx) {
  const LayerInfo &info = program_.layers.at(&decl);
  TypeRef type = info.blockType->result;
  fusing_.push_back(decl.name);
  AVal x = args[0];
  AVal result;
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
    static const OpKind acts[] = {OpKind::Neg, OpKind::Tanh, OpKind::ReLU, OpKind::Sigmoid};
    if (info.activation != Activation::None)
      result = emit(ctx, acts[int(info.activation)], {result}, out, at);
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

AVal Lowering::linearOf(const AVal &x, const std::string &param, int64_t out, Context &ctx,
                        SourceRange at) {
  return emitWithParam(ctx, OpKind::Linear, {x}, types::f32({out}), at, param);
}

AVal Lowering::sliceOf(const AVal &x, int64_t lo, int64_t hi, Context &ctx, SourceRange at) {
  OpAttrs range;
  range.lo = lo;
  range.hi = hi;
  return emit(ctx, OpKind::Slice, {x}, types::f32({hi - lo}), at, range);
}

AVal Lowering::elementwise(OpKind op, std::vector<AVal> xs, int64_t h, Context &ctx,
                           SourceRange at) {
  return emit(ctx, op, xs, types::f32({h}), at);
}

AVal Lowering::lstmCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x,
                        const AVal &state, Context &ctx, SourceRange at) {
  int64_t h = info.out;
  AVal gates = elementwise(OpKind::Add,
                           {linearOf(x, decl.name + ".W", 4 * h, ctx, at),
                            linearOf(element(state, 0), decl.name + ".U", 4 * h, ctx, at)},
                           4 * h, ctx, at);
  gates = emitWithParam(ctx, OpKind::BiasAdd, {gates}, types::f32({4 * h}), at, decl.name + ".b");
  auto gate = [&](int k, OpKind act) {
    return elementwise(act, {sliceOf(gates, k * h, (k + 1) * h, ctx, at)}, h, ctx, at);
  };
  AVal i = gate(0, OpKind::Sigmoid), f = gate(1, OpKind::Sigmoid), o = gate(2, OpKind::Sigmoid),
       u = gate(3, OpKind::Tanh);
  AVal c = elementwise(OpKind::Add,
                       {elementwise(OpKind::Mul, {i, u}, h, ctx, at),
                        elementwise(OpKind::Mul, {f, element(state, 1)}, h, ctx, at)},
                       h, ctx, at);
  AVal next = elementwise(OpKind::Mul, {o, elementwise(OpKind::Tanh, {c}, h, ctx, at)}, h, ctx, at);
  return tuple({next, tuple({next, c})});
}

AVal Lowering::gruCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x, const AVal &s,
                       Context &ctx, SourceRange at) {
  int64_t h = info.out;
  std::string U = decl.name + ".U";
  AVal gx = emitWithParam(ctx, OpKind::BiasAdd, {linearOf(x, decl.name + ".W", 3 * h, ctx, at)},
                          types::f32({3 * h}), at, decl.name + ".b");
  AVal gs = linearOf(s, U, 3 * h, ctx, at);
  auto gate = [&](int k) {
    return elementwise(OpKind::Sigmoid,
                       {elementwise(OpKind::Add,
                                    {sliceOf(gx, k * h, (k + 1) * h, ctx, at),
                                     sliceOf(gs, k * h, (k + 1) * h, ctx, at)},
                                    h, ctx, at)},
                       h, ctx, at);
  };
  AVal z = gate(0), r = gate(1);
  AVal grs = linearOf(elementwise(OpKind::Mul, {r, s}, h, ctx, at), U, 3 * h, ctx, at);
  AVal candidate = elementwise(
      OpKind::Add, {sliceOf(gx, 2 * h, 3 * h, ctx, at), sliceOf(grs, 2 * h, 3 * h, ctx, at)}, h,
      ctx, at);
  AVal n = elementwise(OpKind::Tanh, {candidate}, h, ctx, at);
  AVal keep = elementwise(OpKind::Mul, {z, elementwise(OpKind::Sub, {s, n}, h, ctx, at)}, h, ctx, at);
  AVal next = elementwise(OpKind::Add, {n, keep}, h, ctx, at);
  return tuple({next, next});
}

} // namespace foldc::lowering
