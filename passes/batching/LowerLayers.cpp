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
    result = emit(ctx, "gather", {x}, type, 0, at, param("E"));
    plan_.kernels[size_t(result.kernel)].params.insert(param("E"));
    break;
  case LayerKind::FullyConnected: {
    TypeRef out = types::f32({info.out});
    result = emit(ctx, "linear", {x}, out, 2.0 * double(info.in * info.out), at, param("W"));
    result = emit(ctx, "bias_add", {result}, out, double(info.out), at, param("b"));
    static const char *acts[] = {"", "tanh", "relu", "sigmoid"};
    if (info.activation != Activation::None)
      result = emit(ctx, acts[int(info.activation)], {result}, out, double(info.out), at);
    plan_.kernels[size_t(result.kernel)].params.insert({param("W"), param("b")});
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

AVal Lowering::linearOf(const AVal &x, const std::string &param, int64_t in, int64_t out,
                        Context &ctx, SourceRange at) {
  AVal v = emit(ctx, "linear", {x}, types::f32({out}), 2.0 * double(in * out), at, param);
  plan_.kernels[size_t(v.kernel)].params.insert(param);
  return v;
}

AVal Lowering::sliceOf(const AVal &x, int64_t lo, int64_t hi, Context &ctx, SourceRange at) {
  return emit(ctx, "slice", {x}, types::f32({hi - lo}), 0, at,
              std::to_string(lo) + ":" + std::to_string(hi));
}

AVal Lowering::elementwise(const std::string &op, std::vector<AVal> xs, int64_t h, Context &ctx,
                           SourceRange at) {
  return emit(ctx, op, xs, types::f32({h}), double(h), at);
}

AVal Lowering::lstmCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x,
                        const AVal &state, Context &ctx, SourceRange at) {
  int64_t h = info.out;
  AVal gates = elementwise("add",
                           {linearOf(x, decl.name + ".W", info.in, 4 * h, ctx, at),
                            linearOf(element(state, 0), decl.name + ".U", h, 4 * h, ctx, at)},
                           4 * h, ctx, at);
  gates = emit(ctx, "bias_add", {gates}, types::f32({4 * h}), double(4 * h), at, decl.name + ".b");
  plan_.kernels[size_t(gates.kernel)].params.insert(decl.name + ".b");
  auto gate = [&](int k, const char *act) {
    return elementwise(act, {sliceOf(gates, k * h, (k + 1) * h, ctx, at)}, h, ctx, at);
  };
  AVal i = gate(0, "sigmoid"), f = gate(1, "sigmoid"), o = gate(2, "sigmoid"), u = gate(3, "tanh");
  AVal c = elementwise("add",
                       {elementwise("mul", {i, u}, h, ctx, at),
                        elementwise("mul", {f, element(state, 1)}, h, ctx, at)},
                       h, ctx, at);
  AVal next = elementwise("mul", {o, elementwise("tanh", {c}, h, ctx, at)}, h, ctx, at);
  return tuple({next, tuple({next, c})});
}

AVal Lowering::gruCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x, const AVal &s,
                       Context &ctx, SourceRange at) {
  int64_t h = info.out;
  std::string U = decl.name + ".U";
  AVal gx = emit(ctx, "bias_add", {linearOf(x, decl.name + ".W", info.in, 3 * h, ctx, at)},
                 types::f32({3 * h}), double(3 * h), at, decl.name + ".b");
  plan_.kernels[size_t(gx.kernel)].params.insert(decl.name + ".b");
  AVal gs = linearOf(s, U, h, 3 * h, ctx, at);
  auto gate = [&](int k) {
    return elementwise("sigmoid",
                       {elementwise("add",
                                    {sliceOf(gx, k * h, (k + 1) * h, ctx, at),
                                     sliceOf(gs, k * h, (k + 1) * h, ctx, at)},
                                    h, ctx, at)},
                       h, ctx, at);
  };
  AVal z = gate(0), r = gate(1);
  AVal grs = linearOf(elementwise("mul", {r, s}, h, ctx, at), U, h, 3 * h, ctx, at);
  AVal n = elementwise(
      "tanh",
      {elementwise("add", {sliceOf(gx, 2 * h, 3 * h, ctx, at), sliceOf(grs, 2 * h, 3 * h, ctx, at)},
                   h, ctx, at)},
      h, ctx, at);
  AVal next = elementwise(
      "add", {n, elementwise("mul", {z, elementwise("sub", {s, n}, h, ctx, at)}, h, ctx, at)}, h,
      ctx, at);
  return tuple({next, next});
}

} // namespace foldc::lowering
