// The builtin table.
#include "passes/sema/Builtins.h"


namespace foldc {

namespace {
using K = BuiltinKind;
constexpr BuiltinInfo kBuiltins[] = {
// The element-wise functions come from the batch plan's op table.
#define FOLDC_UNARY(Kind, Name, Builtin) {Builtin ? Name : "", K::TensorFunction, 0, Builtin},
#define FOLDC_OP(Kind, Name, Family, Attr, Flops)
#include "passes/batching/Ops.def"
    {"softmax", K::TensorFunction}, {"log_softmax", K::TensorFunction},
    {"sum", K::TensorFunction}, {"mean", K::TensorFunction}, {"max", K::TensorFunction},
    {"min", K::TensorFunction}, {"dot", K::TensorFunction}, {"concat", K::TensorFunction},
    {"argmax", K::TensorFunction}, {"one_hot", K::TensorFunction}, {"zeros", K::TensorFunction},
    {"ones", K::TensorFunction}, {"dropout", K::TensorFunction}, {"xent", K::TensorFunction},
    {"sigmoid_xent", K::TensorFunction}, {"mse", K::TensorFunction},
    {"tensor", K::TensorFunction}, {"vector", K::TensorFunction},
    {"map", K::Combinator, 2}, {"fold", K::Combinator, 3}, {"rnn", K::Combinator, 3},
    {"reduce", K::Combinator, 3}, {"zip", K::Combinator, 2}, {"zip_with", K::Combinator, 3},
    {"ngrams", K::Combinator, 2}, {"nth", K::Combinator, 2}, {"length", K::Combinator, 1},
    {"fc", K::LayerConstructor}, {"embedding", K::LayerConstructor},
    {"lstm", K::LayerConstructor}, {"gru", K::LayerConstructor},
    {"uniform", K::Initializer}, {"normal", K::Initializer}, {"glorot", K::Initializer},
    {"constant", K::Initializer}, {"none", K::Activation},
};
} // namespace

const BuiltinInfo *findBuiltin(std::string_view name) {
  for (const BuiltinInfo &b : kBuiltins)
    if (!b.name.empty() && b.name == name)
      return &b;
  return nullptr;
}

bool isInitializerName(std::string_view name) {
  return name == "zeros" || name == "ones" || name == "uniform" || name == "normal" ||
         name == "glorot" || name == "constant";
}

} // namespace foldc
