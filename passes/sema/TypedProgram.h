// The result of semantic analysis: side tables over the (unchanged) AST.
#pragma once

#include "passes/builtins/Builtins.h"
#include "passes/sema/ConstEval.h"
#include "passes/sema/HeaderImport.h"
#include "passes/sema/NameResolution.h"
#include "passes/sema/Type.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace foldc {

/// How a block value is applied: what a call or a combinator argument runs.
struct BlockValue {
  enum class Kind {
    Def,      ///< a def by name
    Layer,    ///< a layer by name
    Builtin,  ///< a builtin function by name (`tanh`, `map(words)` is Partial)
    Lambda,   ///< `|x| ...`
    Accessor, ///< `.f` / `.0`
    Partial,  ///< a combinator without its data argument: `map(words)`
    Compose,  ///< `f >> g` of two blocks
    Typed,    ///< a def parameter of block type: only its signature is known
    Host,     ///< a C++ function from an imported header
  };
  Kind kind;
  const FunctionDecl *def = nullptr;
  const LayerDecl *layer = nullptr;
  Builtin builtin{}; ///< Builtin, Partial
  const LambdaExpr *lambda = nullptr;
  const Expr *source = nullptr;       ///< the expression that made this value
  Selector selector;                  ///< Accessor
  std::vector<TypeRef> boundArgTypes; ///< Partial: the arguments given
  std::vector<const Expr *> boundArgs;
  std::shared_ptr<const BlockValue> first, second; ///< Compose: first, then second
  TypeRef signature;                               ///< Typed
  int hostFunction = -1;                           ///< Host: index in TypedProgram::hostFunctions
};

/// How training treats the parameters of a layer or layer instance.
struct TrainingOptions {
  bool trainable = true;        ///< `trainable: false`: training leaves the parameters as they are
  double learningRateScale = 1; ///< `lr_scale:`: multiplies the optimizer's learning rate
};

/// A built-in layer's kind, sizes, and the parameters it owns (named
/// `LAYER.E`).
struct LayerInfo {
  LayerKind kind;
  long long in = 0, out = 0; ///< embedding: rows, width
  TypeRef blockType;         ///< e.g. (int) -> f32[300]
  TrainingOptions training;
  struct Param {
    std::string name; ///< "E"
    std::vector<int64_t> shape;
    /// An embedding's table: uniform(-0.05, 0.05) unless its `init:` says otherwise.
    Initializer init;
  };
  std::vector<Param> params;
};

/// A param's type and initialiser (defaulted by rank when not written).
struct ParamInfo {
  TypeRef type;
  Initializer init{InitKind::Glorot};
};

/// A tensor subscript that selects part of an axis: [lo, hi) of axis `axis`
/// of the subscripted tensor; an index (`drop`) also drops the axis.
struct AxisRange {
  int axis = 0;
  int64_t lo = 0, hi = 0;
  bool drop = false;
};

/// Everything semantic analysis learned. Keys are AST nodes; nothing in the
/// AST is modified.
struct TypedProgram {
  const Module *module = nullptr;
  std::vector<HostFunction> hostFunctions; ///< from `import`, in order
  std::unique_ptr<ResolvedNames> names;
  std::unique_ptr<ConstTable> consts;
  std::unordered_map<const Expr *, TypeRef> exprTypes;
  /// Binding sites (NamePattern*, Parameter*, MatchArm*, ParamDecl*) -> type.
  std::unordered_map<const void *, TypeRef> bindingTypes;
  /// Every def and the model: `(params) -> result` (the model's result is `()`).
  std::unordered_map<const FunctionDecl *, TypeRef> signatures;
  std::unordered_map<const LayerDecl *, LayerInfo> layers;
  /// The def of each instance of a layer definition: its `trainable:` and `lr_scale:`.
  std::unordered_map<const FunctionDecl *, TrainingOptions> instances;
  std::unordered_map<const ParamDecl *, ParamInfo> params;
  /// Every index or slice of a tensor (`x[i]`, `m[:, a:b]`): what it selects,
  /// in axis order; subscripts that take a whole axis are left out.
  std::unordered_map<const Expr *, std::vector<AxisRange>> tensorSubscripts;
  /// The `axis:` of a call (sum, mean, max, min, softmax, log_softmax,
  /// argmax, concat), in [0, rank) of its tensor argument.
  std::unordered_map<const Expr *, int> callAxes;
  /// The type of every field of every `data` declaration.
  std::unordered_map<const FieldDecl *, TypeRef> fieldTypes;

  TypeRef typeOf(const Expr &expr) const {
    auto it = exprTypes.find(&expr);
    return it == exprTypes.end() ? types::errorType() : it->second;
  }
};

} // namespace foldc
