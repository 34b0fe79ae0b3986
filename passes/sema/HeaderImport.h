// Header import: reads the C++ headers named by `import "h.h";` with Clang's
// libTooling and turns their free functions into host functions (docs/language.md, "Imports").
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "passes/sema/Type.h"

#include <string>
#include <vector>

namespace foldc {

/// A C++ function usable as a host-side block.
struct HostFunction {
  std::string name;          ///< as called in Fold
  std::string qualifiedName; ///< as called from generated C++ (with namespaces)
  std::string header;        ///< the path found for the import
  std::vector<TypeRef> params;
  TypeRef result;
  const ImportDecl *import = nullptr;
  SourceRange declaration; ///< in the header (a file of the SourceManager)
};

/// Finds each imported header (next to the .fold file, then in
/// `includeDirs`), parses it as C++17 and maps the parameter and result types
/// of its free functions: integers -> int, double/float -> float, bool,
/// std::string -> string, std::vector<T> -> [T] (const and & are dropped). A
/// function that cannot be mapped is an error at the import with a note at
/// the C++ declaration; so is a header that cannot be found or parsed.
std::vector<HostFunction> importHeaders(const Module &module, SourceManager &sources,
                                        const std::vector<std::string> &includeDirs,
                                        DiagnosticEngine &diag);

} // namespace foldc
