// Constant evaluation: the values of `const` declarations and of constant
// expressions in shapes and layer arguments.
#pragma once

#include "frontend/Diagnostics.h"
#include "passes/sema/NameResolution.h"

#include <optional>
#include <string>
#include <unordered_map>

namespace foldc {

/// An integer or float constant.
struct ConstValue {
  bool isInt = true;
  long long intValue = 0;
  double floatValue = 0;

  double asDouble() const { return isInt ? double(intValue) : floatValue; }
  std::string toString() const;
};

/// The values of every `const`, and evaluation of constant expressions.
class ConstTable {
public:
  ConstTable(const ResolvedNames &names) : names_(names) {}

  /// Evaluates `expr` (literals, consts, unary minus, + - * /). Reports at the
  /// first part that is not constant, unless `diag` is null.
  std::optional<ConstValue> evaluate(const Expr &expr, DiagnosticEngine *diag) const;
  /// A positive integer (a dimension or a size): reports what it found otherwise.
  std::optional<long long> positiveInt(const Expr &expr, const char *what,
                                       DiagnosticEngine &diag) const;
  const std::unordered_map<const ConstDecl *, ConstValue> &values() const { return values_; }

private:
  friend ConstTable evaluateConsts(const Module &, const ResolvedNames &, DiagnosticEngine &);
  std::optional<ConstValue> evaluateConst(const ConstDecl &decl, DiagnosticEngine *diag) const;
  bool fitsRequiredKind(const ConstDecl &decl, ConstValue &value, DiagnosticEngine *diag) const;
  std::optional<ConstValue> evaluateCall(const CallExpr &call, DiagnosticEngine *diag) const;

  const ResolvedNames &names_;
  mutable std::unordered_map<const ConstDecl *, ConstValue> values_;
  mutable std::unordered_map<const ConstDecl *, bool> inProgress_;
  mutable std::unordered_map<const ConstDecl *, bool> failed_;
};

/// Evaluates every `const` of the module in dependency order; a cycle or a
/// non-constant initialiser is an error at the const.
ConstTable evaluateConsts(const Module &module, const ResolvedNames &names, DiagnosticEngine &diag);

} // namespace foldc
