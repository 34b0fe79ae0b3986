// Entry points of the frontend: source text -> tokens -> AST.
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

#include <memory>
#include <ostream>

namespace foldc {

/// Parses file `file` of `sources`. Syntax errors are reported through `diag`
/// (several per run, each located); returns null when there were any.
std::unique_ptr<Module> parseModule(const SourceManager &sources, uint32_t file,
                                    DiagnosticEngine &diag);

/// Prints one line per token, `LINE:COL KIND text`, for `foldc --emit=tokens`.
/// False (with an error) when the file is not valid UTF-8.
bool dumpTokens(const SourceManager &sources, uint32_t file, DiagnosticEngine &diag,
                std::ostream &out);

} // namespace foldc
