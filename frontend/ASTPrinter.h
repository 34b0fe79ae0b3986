// Printing the AST: source-like text for expressions and types, and the
// indented tree dump of `foldc --emit=ast`.
#pragma once

#include "frontend/AST.h"

#include <ostream>
#include <string>

namespace foldc {

/// Source-like text of an expression, fully parenthesised where precedence
/// matters (`(a + b) * c`), for dumps and diagnostics.
std::string toSource(const Expr &expr);
/// The same, cut after `limit` characters and ended with "..." when longer:
/// its cost is bounded by `limit`, however large the expression.
std::string toSource(const Expr &expr, size_t limit);
/// Source-like text of a written type, e.g. `(f32[H], f32[H])`.
std::string toSource(const TypeExpr &type);
std::string toSource(const Pattern &pattern);

/// The `--emit=ast` dump: one node per line, children indented, each with
/// its source range as `<LINE:COL-LINE:COL>`.
void dumpAST(const Module &module, std::ostream &out);

} // namespace foldc
