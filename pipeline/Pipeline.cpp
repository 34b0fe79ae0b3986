// The list of passes, with --print-after-all and --time-passes.
#include "pipeline/Pipeline.h"

#include "frontend/ASTPrinter.h"
#include "frontend/Parser.h"
#include "passes/batching/LowerToPlan.h"
#include "passes/batching/PlanVerifier.h"
#include "passes/sema/InstantiateLayers.h"
#include "passes/sema/Prelude.h"
#include "passes/sema/TypeCheck.h"
#include "passes/sema/TypesPrinter.h"

#include <chrono>
#include <functional>
#include <stdexcept>

namespace foldc {

namespace {

class PassRunner {
public:
  explicit PassRunner(const PipelineOptions &options) : options_(options) {}

  /// Runs `pass` (unless an earlier pass was the last) and prints its
  /// result with `dump`; false when the pipeline stops here.
  bool run(Pass which, const char *name, const std::function<bool()> &pass,
           const std::function<void(std::ostream &)> &dump) {
    if (stopped_)
      return false;
    auto start = std::chrono::steady_clock::now();
    bool ok = pass();
    auto elapsed =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
    std::ostream *log = options_.log;
    if (options_.timePasses && log)
      *log << "pass " << name << ": " << elapsed.count() << " ms\n";
    if (options_.printAfterAll && log && ok) {
      *log << "// ----- after " << name << " -----\n";
      dump(*log);
    }
    stopped_ = !ok || which == options_.last;
    return !stopped_;
  }

private:
  const PipelineOptions &options_;
  bool stopped_ = false;
};

} // namespace

bool compile(SourceManager &sources, uint32_t file, DiagnosticEngine &diag,
             const PipelineOptions &options, Compilation &result) {
  PassRunner passes(options);
  auto noErrors = [&] { return !diag.hasErrors(); };
  passes.run(
      Pass::Parse, "parse",
      [&] {
        result.module = parseModule(sources, file, diag);
        result.program = std::make_unique<TypedProgram>();
        result.program->module = result.module.get();
        return result.module != nullptr;
      },
      [&](std::ostream &out) { dumpAST(*result.module, out); });
  passes.run(
      Pass::Instantiate, "instantiate",
      [&] {
        uint32_t prelude =
            sources.addFile(std::string(kPreludeFileName), std::string(preludeSource()));
        result.module =
            instantiateLayers(std::move(result.module), parseModule(sources, prelude, diag), diag);
        result.program->module = result.module.get();
        return true;
      },
      [&](std::ostream &out) { dumpAST(*result.module, out); });
  const Module *module = result.module.get();
  TypedProgram *program = result.program.get();
  // Semantic analysis: each pass runs even when an earlier one reported errors.
  passes.run(
      Pass::HeaderImport, "header-import",
      [&] {
        program->hostFunctions = importHeaders(*module, sources, options.includeDirs, diag);
        return true;
      },
      [&](std::ostream &out) {
        for (const HostFunction &f : program->hostFunctions)
          out << f.qualifiedName << " from " << f.header << '\n';
      });
  passes.run(
      Pass::NameResolution, "name-resolution",
      [&] {
        program->names =
            std::make_unique<ResolvedNames>(resolveNames(*module, program->hostFunctions, diag));
        return true;
      },
      [&](std::ostream &out) {
        out << program->names->names.size() << " names resolved, " << program->names->globals.size()
            << " globals, " << program->names->dataTypes.size() << " data types\n";
      });
  passes.run(
      Pass::ConstEval, "const-eval",
      [&] {
        program->consts =
            std::make_unique<ConstTable>(evaluateConsts(*module, *program->names, diag));
        return true;
      },
      [&](std::ostream &out) {
        for (const auto &[decl, value] : program->consts->values())
          out << decl->name << " = " << value.toString() << '\n';
      });
  passes.run(
      Pass::TypeCheck, "type-check",
      [&] {
        checkTypes(*program, diag);
        return noErrors();
      },
      [&](std::ostream &out) { printTypes(*program, out); });
  passes.run(
      Pass::Batching, "batching",
      [&] {
        result.plan = lowerToPlan(*program, diag);
        return noErrors();
      },
      [&](std::ostream &out) { printPlan(result.plan, out); });
  passes.run(
      Pass::Verify, "verify", [&] { return verifyPlan(result.plan, diag); },
      [&](std::ostream &out) { out << "plan verified\n"; });
  passes.run(
      Pass::Emit, "emit",
      [&] {
        result.code = generateCpp(result.plan, options.cppNamespace, options.outputName);
        return true;
      },
      [&](std::ostream &out) {
        out << result.code.name << ".h: " << result.code.header.size() << " bytes, "
            << result.code.name << ".cpp: " << result.code.source.size() << " bytes\n";
      });
  return noErrors();
}

} // namespace foldc
