// The list of semantic passes, with --print-after-all and --time-passes.
#include "passes/Pipeline.h"

#include "passes/sema/TypeCheck.h"
#include "passes/sema/TypesPrinter.h"

#include <chrono>
#include <functional>

namespace foldc {

namespace {
void runPass(const char *name, const PipelineOptions &options, const std::function<void()> &pass,
             const std::function<void(std::ostream &)> &dump) {
  auto start = std::chrono::steady_clock::now();
  pass();
  auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  if (options.timePasses && options.log)
    *options.log << "pass " << name << ": " << elapsed.count() << " ms\n";
  if (options.printAfterAll && options.log) {
    *options.log << "// ----- after " << name << " -----\n";
    dump(*options.log);
  }
}
} // namespace

std::unique_ptr<TypedProgram> analyze(const Module &module, SourceManager &sources,
                                      DiagnosticEngine &diag, const PipelineOptions &options) {
  auto program = std::make_unique<TypedProgram>();
  program->module = &module;
  runPass("header-import", options,
          [&] {
            program->hostFunctions = importHeaders(module, sources, options.includeDirs, diag);
          },
          [&](std::ostream &out) {
            for (const HostFunction &f : program->hostFunctions)
              out << f.qualifiedName << " from " << f.header << '\n';
          });
  runPass("name-resolution", options,
          [&] {
            program->names =
                std::make_unique<ResolvedNames>(resolveNames(module, program->hostFunctions, diag));
          },
          [&](std::ostream &out) {
            out << program->names->names.size() << " names resolved, "
                << program->names->globals.size() << " globals, "
                << program->names->dataTypes.size() << " data types\n";
          });
  runPass("const-eval", options,
          [&] {
            program->consts =
                std::make_unique<ConstTable>(evaluateConsts(module, *program->names, diag));
          },
          [&](std::ostream &out) {
            for (const auto &[decl, value] : program->consts->values())
              out << decl->name << " = " << value.toString() << '\n';
          });
  runPass("type-check", options, [&] { checkTypes(*program, diag); },
          [&](std::ostream &out) { printTypes(*program, out); });
  return program;
}

} // namespace foldc
