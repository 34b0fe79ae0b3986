// The compiler's pipeline: every pass from source text to C++, in order.
#pragma once

#include "codegen/CppGen.h"
#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "passes/batching/BatchPlan.h"
#include "passes/sema/TypedProgram.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace foldc {

/// The passes, in the order they run.
enum class Pass {
  Parse,
  Instantiate,
  HeaderImport,
  NameResolution,
  ConstEval,
  TypeCheck,
  Batching,
  Verify,
  Emit
};

struct PipelineOptions {
  std::vector<std::string> includeDirs; ///< where `import` looks after the file's folder
  bool printAfterAll = false;           ///< dump each pass's result to `log`
  bool timePasses = false;              ///< report each pass's wall time to `log`
  std::ostream *log = nullptr;
  Pass last = Pass::Emit;   ///< stop after this pass
  std::string cppNamespace; ///< Emit: the namespace (default: the model's name)
  std::string outputName;   ///< Emit: NAME of NAME.h (default: the model's name)
};

/// What the passes made, each once its pass has run.
struct Compilation {
  std::unique_ptr<Module> module;
  std::unique_ptr<TypedProgram> program;
  BatchPlan plan;
  GeneratedCpp code;
};

/// Runs the passes over file `file` up to `options.last`. The semantic passes
/// all run even after errors in an earlier one (errors never cascade: an
/// unresolved name has the error type), so independent mistakes are all
/// reported; batching runs only on a program without errors, and emission
/// only on a plan the verifier accepts. Returns false when `diag` got errors.
bool compile(SourceManager &sources, uint32_t file, DiagnosticEngine &diag,
             const PipelineOptions &options, Compilation &result);

} // namespace foldc
