// Name resolution: binds every name in expressions and types to its declaration.
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "passes/builtins/Builtins.h"
#include "passes/sema/HeaderImport.h"

#include <string>
#include <unordered_map>

namespace foldc {

/// What a name in an expression refers to.
struct Symbol {
  enum class Kind { Const, Param, Layer, Def, Model, Builtin, Local, HostFunction };
  Kind kind = Kind::Builtin;
  const Decl *decl = nullptr; ///< Const, Param, Layer, Def, Model
  /// Local: the binding site, one of NamePattern*, Parameter*, MatchArm*
  /// (its binder) or ParamDecl* (a param inside a def).
  const void *binding = nullptr;
  BuiltinName builtin;   ///< Builtin: the row of its table
  int hostFunction = -1; ///< HostFunction: its index
};

/// A variant of a data type, found by its name.
struct VariantRef {
  const DataDecl *data = nullptr;
  int index = -1;
};

/// The side table name resolution fills; later passes read it.
struct ResolvedNames {
  std::unordered_map<std::string, const Decl *> globals; ///< const/param/layer/def/model
  std::unordered_map<std::string, const DataDecl *> dataTypes;
  std::unordered_map<std::string, int> hostFunctions;   ///< imported C++ functions
  std::unordered_map<std::string, VariantRef> variants; ///< union variants by name
  std::unordered_map<const NameExpr *, Symbol> names;
  /// Every named argument whose name is an option of the FOLDC_OPTION table
  /// (the checker reports the others, where it knows what the call takes).
  std::unordered_map<const Argument *, Option> options;
  std::unordered_map<const NamedTypeExpr *, const DataDecl *> typeNames;
  const FunctionDecl *model = nullptr;
};

/// Resolves every name of `module`: globals in any order, locals in lexical
/// scope (parameters, def-local params, `let`, lambda parameters, match
/// binders). Unknown and duplicate names are errors, duplicates with a note
/// at the first declaration. Locals shadow globals, which shadow builtins.
ResolvedNames resolveNames(const Module &module, const std::vector<HostFunction> &hostFunctions,
                           DiagnosticEngine &diag);

} // namespace foldc
