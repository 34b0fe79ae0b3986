// The builtin tables of Builtins.def as data.
#include "passes/builtins/Builtins.h"

namespace foldc {

namespace {

constexpr BuiltinInfo kBuiltins[] = {
#define FOLDC_ELEMENTWISE(Kind, Name, Takes)                                                       \
  {Builtin::Kind, Name, BuiltinRole::Elementwise, 1, 1, Accepts::Takes, Operands::All},
#include "passes/builtins/Ops.def"
#define FOLDC_FUNCTION(Kind, Name, MinArgs, MaxArgs, Ops)                                          \
  {Builtin::Kind, Name, BuiltinRole::Function, MinArgs, MaxArgs, Accepts::Float, Operands::Ops},
#define FOLDC_COMBINATOR(Kind, Name, MinArgs, Arity)                                               \
  {Builtin::Kind, Name, BuiltinRole::Combinator, MinArgs, Arity, Accepts::Float, Operands::All},
#include "passes/builtins/Builtins.def"
};

constexpr OptionInfo kOptions[] = {
#define FOLDC_OPTION(Kind, Name, TakenBy, Takes)                                                   \
  {Option::Kind, Name, OptionTakenBy::TakenBy, OptionTakes::Takes},
#include "passes/builtins/Builtins.def"
};

/// The option column of FOLDC_LAYER rows: an option's Kind, or None (which
/// no row uses today: embedding takes init:).
namespace layer_option {
[[maybe_unused]] inline constexpr std::optional<Option> None = std::nullopt;
#define FOLDC_OPTION(Kind, Name, TakenBy, Takes)                                                   \
  inline constexpr std::optional<Option> Kind = Option::Kind;
#include "passes/builtins/Builtins.def"
} // namespace layer_option

constexpr LayerKindInfo kLayerKinds[] = {
#define FOLDC_LAYER(Kind, Name, Option) {LayerKind::Kind, Name, layer_option::Option},
#include "passes/builtins/Builtins.def"
};

constexpr InitKindInfo kInitKinds[] = {
#define FOLDC_INITIALIZER(Kind, Name, Arity) {InitKind::Kind, Name, Arity, #Kind},
#include "passes/builtins/Builtins.def"
};

constexpr std::pair<Activation, std::string_view> kActivations[] = {
    {Activation::None, "none"},
#define FOLDC_ACTIVATION(Kind, Name) {Activation::Kind, Name},
#include "passes/builtins/Builtins.def"
};

/// The row of `table` whose `key` field equals `value`; rows are in enum
/// order, which the static_asserts below hold the tables to.
template <typename Row, size_t N, typename Key>
std::optional<Key> findNamed(const Row (&table)[N], std::string_view name, Key Row::*key,
                             std::string_view Row::*field) {
  for (const Row &row : table)
    if (row.*field == name)
      return row.*key;
  return std::nullopt;
}

template <typename Row, size_t N, typename Key>
constexpr bool inEnumOrder(const Row (&table)[N], Key Row::*key) {
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(table[i].*key) != i)
      return false;
  return true;
}
static_assert(inEnumOrder(kBuiltins, &BuiltinInfo::builtin));
static_assert(inEnumOrder(kLayerKinds, &LayerKindInfo::kind));
static_assert(inEnumOrder(kInitKinds, &InitKindInfo::kind));
static_assert(inEnumOrder(kOptions, &OptionInfo::option));

} // namespace

const BuiltinInfo &builtinInfo(Builtin builtin) { return kBuiltins[static_cast<int>(builtin)]; }

std::optional<Builtin> builtinNamed(std::string_view name) {
  return findNamed(kBuiltins, name, &BuiltinInfo::builtin, &BuiltinInfo::name);
}

std::optional<OpKind> opOf(Builtin builtin) {
  switch (builtin) {
#define FOLDC_ELEMENTWISE(Kind, Name, Takes)                                                       \
  case Builtin::Kind:                                                                              \
    return OpKind::Kind;
#include "passes/builtins/Ops.def"
#define FOLDC_FUNCTION(Kind, Name, MinArgs, MaxArgs, Operands)                                     \
  case Builtin::Kind:                                                                              \
    return OpKind::Kind;
#define FOLDC_COMBINATOR(Kind, Name, MinArgs, Arity)                                               \
  case Builtin::Kind:                                                                              \
    return std::nullopt;
#include "passes/builtins/Builtins.def"
  }
  return std::nullopt;
}

const LayerKindInfo &layerKindInfo(LayerKind kind) { return kLayerKinds[static_cast<int>(kind)]; }

std::optional<LayerKind> layerKindNamed(std::string_view name) {
  return findNamed(kLayerKinds, name, &LayerKindInfo::kind, &LayerKindInfo::name);
}

const InitKindInfo &initKindInfo(InitKind kind) { return kInitKinds[static_cast<int>(kind)]; }

std::optional<InitKind> initKindNamed(std::string_view name) {
  return findNamed(kInitKinds, name, &InitKindInfo::kind, &InitKindInfo::name);
}

std::string_view activationName(Activation activation) {
  for (auto [kind, name] : kActivations)
    if (kind == activation)
      return name;
  return "";
}

std::optional<Activation> activationNamed(std::string_view name) {
  for (auto [kind, spelt] : kActivations)
    if (spelt == name)
      return kind;
  return std::nullopt;
}

std::optional<OpKind> opOf(Activation activation) {
  switch (activation) {
  case Activation::None:
    return std::nullopt;
#define FOLDC_ACTIVATION(Kind, Name)                                                               \
  case Activation::Kind:                                                                           \
    return OpKind::Kind;
#include "passes/builtins/Builtins.def"
  }
  return std::nullopt;
}

const OptionInfo &optionInfo(Option option) { return kOptions[static_cast<int>(option)]; }

std::optional<Option> optionNamed(std::string_view name) {
  return findNamed(kOptions, name, &OptionInfo::option, &OptionInfo::name);
}

std::vector<Option> optionsTakenBy(OptionTakenBy who) {
  std::vector<Option> taken;
  for (const OptionInfo &row : kOptions)
    if (row.takenBy == who)
      taken.push_back(row.option);
  return taken;
}

bool takesAxis(Builtin builtin) {
  std::optional<OpKind> op = opOf(builtin);
  return op && opInfo(*op).attr == OpAttr::Axis;
}

std::optional<BuiltinName> builtinIn(BuiltinName::Table table, std::string_view name) {
  BuiltinName found;
  found.table = table;
  switch (table) {
  case BuiltinName::Table::Callable:
    if (std::optional<Builtin> callable = builtinNamed(name)) {
      found.callable = *callable;
      return found;
    }
    return std::nullopt;
  case BuiltinName::Table::LayerConstructor:
    if (std::optional<LayerKind> layer = layerKindNamed(name)) {
      found.layer = *layer;
      return found;
    }
    return std::nullopt;
  case BuiltinName::Table::Initializer:
    if (std::optional<InitKind> initializer = initKindNamed(name)) {
      found.initializer = *initializer;
      return found;
    }
    return std::nullopt;
  case BuiltinName::Table::Activation:
    if (std::optional<Activation> activation = activationNamed(name)) {
      found.activation = *activation;
      return found;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<BuiltinName> resolveBuiltinName(std::string_view name) {
  for (BuiltinName::Table table :
       {BuiltinName::Table::Callable, BuiltinName::Table::LayerConstructor,
        BuiltinName::Table::Initializer, BuiltinName::Table::Activation})
    if (std::optional<BuiltinName> found = builtinIn(table, name))
      return found;
  return std::nullopt;
}

} // namespace foldc
