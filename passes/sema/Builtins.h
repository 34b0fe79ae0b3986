// The builtin names of the language (docs/language.md) and what kind each is.
#pragma once

#include <string_view>

namespace foldc {

enum class BuiltinKind {
  TensorFunction, ///< tanh, concat, xent, ... (also usable as blocks)
  Combinator,     ///< map, fold, rnn, reduce, ...: the data argument comes last
  LayerConstructor, ///< fc, embedding, lstm, gru: only in `layer` declarations
  Initializer,    ///< zeros, ones, uniform, normal, glorot, constant: in `param`
  Activation,     ///< tanh, relu, sigmoid, none: the `act:` of fc
};

struct BuiltinInfo {
  std::string_view name;
  BuiltinKind kind;
  /// Combinators: the number of arguments of a full call (the last is the data).
  int arity = 0;
  /// An element-wise function of one tensor (`tanh`, `exp`, ...): shape in, shape out.
  bool elementwise = false;
};

/// The builtin called `name`, or null. `zeros`/`ones` are tensor functions
/// that are also initialisers.
const BuiltinInfo *findBuiltin(std::string_view name);
bool isInitializerName(std::string_view name);

} // namespace foldc
