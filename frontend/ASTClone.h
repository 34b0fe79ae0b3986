// Copies of AST nodes with some free names replaced: how the body of a layer
// definition becomes the body of one of its instances.
#pragma once

#include "frontend/AST.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace foldc {

/// Deep-copies nodes (ranges kept), asking `replace` what each free name
/// becomes. A name bound in the copied code (a def's parameters and local
/// params, `let`, lambda parameters, match binders) is not free where it is
/// in scope, so a body's own locals shadow the replaced names as they shadow
/// globals.
class ASTCloner {
public:
  /// What a free name becomes; null keeps it.
  using Replace = std::function<ExprPtr(const NameExpr &)>;
  explicit ASTCloner(Replace replace) : replace_(std::move(replace)) { scopes_.emplace_back(); }
  /// A cloner that replaces no name: an exact copy.
  static ASTCloner exact() {
    return ASTCloner([](const NameExpr &) { return nullptr; });
  }

  ExprPtr expr(const Expr &e);
  TypeExprPtr type(const TypeExpr &t);
  PatternPtr pattern(const Pattern &p);
  Argument argument(const Argument &a);
  ParamDecl param(const ParamDecl &p);
  /// A def's parameters, result and body, named `name`; `keep` says which
  /// statements of the body are copied.
  std::unique_ptr<FunctionDecl> function(const FunctionDecl &fn, std::string name,
                                         SourceRange nameRange,
                                         const std::function<bool(const Stmt &)> &keep);

private:
  StmtPtr stmt(const Stmt &s);
  std::vector<ExprPtr> exprs(const std::vector<ExprPtr> &es);
  ExprPtr optional(const ExprPtr &e) { return e ? expr(*e) : nullptr; }
  void bind(const Pattern &p);
  bool bound(const std::string &name) const;

  Replace replace_;
  std::vector<std::set<std::string>> scopes_;
};

} // namespace foldc
