// The semantic pipeline: the list of passes from AST to typed program.
#pragma once

#include "frontend/Diagnostics.h"
#include "passes/sema/TypedProgram.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace foldc {

struct PipelineOptions {
  std::vector<std::string> includeDirs; ///< where `import` looks after the file's folder
  bool printAfterAll = false; ///< dump each pass's result to `log`
  bool timePasses = false;    ///< report each pass's wall time to `log`
  std::ostream *log = nullptr;
};

/// Runs name resolution, constant evaluation and type checking. Every pass
/// runs even after errors in an earlier one (errors never cascade: an
/// unresolved name has the error type), so independent mistakes are all
/// reported. The result is complete only when `diag` has no errors.
std::unique_ptr<TypedProgram> analyze(const Module &module, SourceManager &sources,
                                      DiagnosticEngine &diag, const PipelineOptions &options = {});

} // namespace foldc
