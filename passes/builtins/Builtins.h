// The builtin names of the language as enums and data, from Builtins.def
// (and Ops.def's element-wise rows). Every phase dispatches on these enums:
// a switch without a default is how the compiler points at every place a
// new row needs.
#pragma once

#include "passes/builtins/Ops.h"

#include <array>
#include <optional>
#include <string_view>
#include <vector>

namespace foldc {

/// A builtin that an expression can call: an element-wise function, another
/// tensor function, or a combinator.
enum class Builtin {
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) Kind,
#include "passes/builtins/Ops.def"
#define FOLDC_FUNCTION(Kind, Name, MinArgs, MaxArgs, Operands) Kind,
#define FOLDC_COMBINATOR(Kind, Name, MinArgs, Arity) Kind,
#include "passes/builtins/Builtins.def"
};

inline constexpr int kBuiltinCount = 0
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) +1
#include "passes/builtins/Ops.def"
#define FOLDC_FUNCTION(Kind, Name, MinArgs, MaxArgs, Operands) +1
#define FOLDC_COMBINATOR(Kind, Name, MinArgs, Arity) +1
#include "passes/builtins/Builtins.def"
    ;

enum class BuiltinRole {
  Elementwise, ///< a function of one tensor, shape in, shape out
  Function,    ///< another tensor function
  Combinator,  ///< map, fold, ...: the data argument comes last
};

/// What an element-wise function takes.
enum class Accepts {
  Float,  ///< f32 tensors (numbers are lifted to f32)
  Number, ///< f32 or i32 tensors; the result keeps the element type
};

/// Which arguments of a tensor function are its op's operands (the others
/// are host values its result's type or its op's attribute holds).
enum class Operands { All, First, Last, NoOperand };

struct BuiltinInfo {
  Builtin builtin;
  std::string_view name;
  BuiltinRole role;
  int minArgs, maxArgs; ///< maxArgs -1: any number
  Accepts accepts;      ///< element-wise functions: their argument
  Operands operands;    ///< tensor functions: which arguments the op takes
};

const BuiltinInfo &builtinInfo(Builtin builtin);
std::optional<Builtin> builtinNamed(std::string_view name);
/// The kernel op of an element-wise or tensor function; none for a combinator.
std::optional<OpKind> opOf(Builtin builtin);

/// A named argument (`axis: 0`, `trainable: false`, `init: glorot`).
enum class Option {
#define FOLDC_OPTION(Kind, Name, TakenBy, Takes) Kind,
#include "passes/builtins/Builtins.def"
};
/// Which calls take an option.
enum class OptionTakenBy {
  AxisCalls, ///< builtins whose op has the Axis attribute, as their last argument
  Layers,    ///< every layer constructor
  ItsLayers, ///< the layer constructors whose row names it
};
/// What an option's value is.
enum class OptionTakes { Value, Bool, Initializer };
struct OptionInfo {
  Option option;
  std::string_view name;
  OptionTakenBy takenBy;
  OptionTakes takes;
};
const OptionInfo &optionInfo(Option option);
/// The options `who` takes, in table order.
std::vector<Option> optionsTakenBy(OptionTakenBy who);
std::optional<Option> optionNamed(std::string_view name);

enum class LayerKind {
#define FOLDC_LAYER(Kind, Name, Option) Kind,
#include "passes/builtins/Builtins.def"
};
struct LayerKindInfo {
  LayerKind kind;
  std::string_view name;
  std::optional<Option> option; ///< its own named option (`init`), if any
};
const LayerKindInfo &layerKindInfo(LayerKind kind);
std::optional<LayerKind> layerKindNamed(std::string_view name);

/// How a parameter is initialised (`param ... = uniform(a, b)`, layer defaults).
enum class InitKind {
#define FOLDC_INITIALIZER(Kind, Name, Arity) Kind,
#include "passes/builtins/Builtins.def"
};
struct InitKindInfo {
  InitKind kind;
  std::string_view name;
  int arity;                ///< its constant arguments
  std::string_view runtime; ///< the runtime's InitKind enumerator
};
const InitKindInfo &initKindInfo(InitKind kind);
/// An initialiser as written: its kind and constant arguments, in order
/// (uniform(low, high), normal(std), constant(value)).
struct Initializer {
  InitKind kind = InitKind::Zeros;
  std::array<double, 2> args{};
};
std::optional<InitKind> initKindNamed(std::string_view name);

enum class Activation {
  None,
#define FOLDC_ACTIVATION(Kind, Name) Kind,
#include "passes/builtins/Builtins.def"
};
std::string_view activationName(Activation activation);
std::optional<Activation> activationNamed(std::string_view name);
/// The op an activation applies; none for `none`.
std::optional<OpKind> opOf(Activation activation);

/// Whether builtin `builtin` takes an `axis:` (its op has the Axis attribute).
bool takesAxis(Builtin builtin);

/// A builtin name resolved to its row: name resolution finds it once, and
/// later phases read the enum, never the name.
struct BuiltinName {
  enum class Table { Callable, LayerConstructor, Initializer, Activation };
  Table table = Table::Callable;
  Builtin callable{};      ///< Callable
  LayerKind layer{};       ///< LayerConstructor
  InitKind initializer{};  ///< Initializer
  Activation activation{}; ///< Activation
};
/// The row `name` names in `table`, if any.
std::optional<BuiltinName> builtinIn(BuiltinName::Table table, std::string_view name);
/// The row `name` names in the first table that has it (callables, layer
/// constructors, initialisers, activations), if any: a name that resolves
/// to nothing else resolves to it.
std::optional<BuiltinName> resolveBuiltinName(std::string_view name);

} // namespace foldc
