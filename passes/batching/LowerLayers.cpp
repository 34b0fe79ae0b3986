// Lowering the built-in layer: embedding, a gather of its table's rows (see
// Lowering.h). The layers written in the language (fc, lstm, gru) are the
// prelude's layer definitions, inlined as any def is.
#include "passes/batching/Lowering.h"

namespace foldc::lowering {

LoweredValue Lowering::layer(const LayerDecl &decl, std::vector<LoweredValue> args,
                             const Expr &site, Context &ctx) {
  const LayerInfo &info = program_.layers.at(&decl);
  fusing_.push_back(decl.name);
  LoweredValue result;
  switch (info.kind) {
  case LayerKind::Embedding:
    result = emitWithParam(ctx, OpKind::Gather, {args[0]}, info.blockType->result, site.range(),
                           decl.name + ".E");
    break;
  }
  fusing_.pop_back();
  return result;
}

} // namespace foldc::lowering
