// foldc: the command-line driver. Reads one .fold file, runs the pipeline up
// to the requested stage and prints that stage. Exit: 0 ok, 1 errors in the
// program, 2 bad usage or unreadable input. `foldc run FILE.fold COMMAND ...`
// runs the model's driver from the compile cache (RunCommand.h).
#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "passes/sema/TypesPrinter.h"
#include "pipeline/Pipeline.h"
#include "runtime/support/Threads.h"
#include "tools/RunCommand.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace {

enum class EmitStage { Tokens, AST, Types, Plan, Dot, Cpp };

constexpr int kExitProgramErrors = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string input = "-";
  EmitStage emit = EmitStage::AST;
  std::string outputPath;
  unsigned errorLimit = 20;
  std::string cppNamespace;
  foldc::PipelineOptions pipeline;
  bool driver = false;
  std::string outputName;    ///< NAME of NAME.h etc. (default: the model's name)
  std::string depfile;       ///< Make-style dependencies of the generated files
  std::string depfileTarget; ///< the depfile's target (default: the header written)
};

/// `OUTPUT: FOLD HEADERS...` for the build system (CMake's DEPFILE), so
/// generated code is remade when the .fold file or an imported header changes.
bool writeDepfile(const std::string &path, const std::string &target, const std::string &input,
                  const foldc::TypedProgram &program) {
  std::error_code error;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty())
    std::filesystem::create_directories(parent, error);
  std::ofstream out(path);
  auto escaped = [](const std::string &file) {
    std::string e;
    for (char c : file)
      e += c == ' ' ? std::string("\\ ") : std::string(1, c);
    return e;
  };
  out << escaped(target) << ": " << escaped(input);
  std::set<std::string> headers;
  for (const foldc::HostFunction &f : program.hostFunctions)
    if (headers.insert(f.header).second)
      out << " \\\n  " << escaped(f.header);
  out << '\n';
  return bool(out);
}

/// True when `path` holds exactly `text` (then it is not rewritten, so a
/// build does not recompile unchanged generated code).
bool sameContents(const std::filesystem::path &path, const std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream old;
  old << in.rdbuf();
  return old.str() == text;
}

/// Writes NAME.h, NAME.cpp and, with `driver`, NAME_main.cpp into `dir`
/// (created if missing).
bool writeCpp(const foldc::GeneratedCpp &code, const std::string &dir, bool driver) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  std::vector<std::pair<std::string, const std::string *>> files = {
      {code.name + ".h", &code.header}, {code.name + ".cpp", &code.source}};
  if (driver)
    files.push_back({code.name + "_main.cpp", &code.driver});
  for (const auto &[file, text] : files) {
    std::filesystem::path path = std::filesystem::path(dir) / file;
    if (sameContents(path, *text))
      continue;
    std::ofstream out(path);
    out << *text;
    if (!out) {
      std::cerr << "foldc: error: cannot write '" << path.string() << "'\n";
      return false;
    }
  }
  return true;
}

/// The parser, the passes and the AST's destructors recurse once per level
/// of nesting in the source (`-(-(...))`, a sum of 10^5 terms), so a program
/// that a generator wrote can need far more than the main thread's 8 MB:
/// measured, 10^5 levels need up to 256 MB and 10^6 about 2.5 GB. Reserved,
/// touched only as used: 4 GB, or half the machine's memory when that is
/// less, so that the reservation itself is not refused.
size_t compilerStackBytes() {
  size_t memory = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE));
  return std::clamp(memory / 2, size_t(256) << 20, size_t(4) << 30);
}

int run(const Options &options) {
  foldc::SourceManager sources;
  uint32_t file = 0;
  if (!sources.loadFile(options.input, file)) {
    std::cerr << "foldc: error: cannot read '" << options.input << "'\n";
    return kExitUsage;
  }
  std::ofstream outFile;
  if (!options.outputPath.empty() && options.emit != EmitStage::Cpp) {
    outFile.open(options.outputPath);
    if (!outFile) {
      std::cerr << "foldc: error: cannot write '" << options.outputPath << "'\n";
      return kExitUsage;
    }
  }
  std::ostream &out = options.outputPath.empty() ? std::cout : outFile;
  foldc::DiagnosticEngine diag(sources, std::cerr, options.errorLimit);

  if (options.emit == EmitStage::Tokens) {
    return foldc::dumpTokens(sources, file, diag, out) ? 0 : kExitProgramErrors;
  }
  static const std::map<EmitStage, foldc::Pass> lastPass = {
      {EmitStage::AST, foldc::Pass::Parse},
      {EmitStage::Types, foldc::Pass::TypeCheck},
      {EmitStage::Plan, foldc::Pass::Verify},
      {EmitStage::Dot, foldc::Pass::Verify},
      {EmitStage::Cpp, foldc::Pass::Emit}};
  foldc::PipelineOptions pipeline = options.pipeline;
  pipeline.log = &std::cerr;
  pipeline.last = lastPass.at(options.emit);
  pipeline.cppNamespace = options.cppNamespace;
  pipeline.outputName = options.outputName;
  foldc::Compilation result;
  try {
    if (!foldc::compile(sources, file, diag, pipeline, result))
      return kExitProgramErrors;
  } catch (const std::exception &e) { // an emitter's precondition: a bug, reported as one
    std::cerr << options.input << ": internal compiler error: " << e.what() << '\n';
    return kExitProgramErrors;
  }
  switch (options.emit) {
  case EmitStage::AST:
    foldc::dumpAST(*result.module, out);
    return 0;
  case EmitStage::Types:
    foldc::printTypes(*result.program, out);
    return 0;
  case EmitStage::Plan:
    foldc::printPlan(result.plan, out);
    return 0;
  case EmitStage::Dot:
    foldc::printPlanDot(result.plan, out);
    return 0;
  case EmitStage::Tokens: // printed before the pipeline ran
  case EmitStage::Cpp:
    break;
  }
  const foldc::GeneratedCpp &code = result.code;
  if (options.driver && code.driver.empty()) {
    std::cerr << options.input << ": error: --driver needs a `model`\n";
    return kExitProgramErrors;
  }
  std::string depfileTarget =
      !options.depfileTarget.empty()
          ? options.depfileTarget
          : (std::filesystem::path(options.outputPath) / (code.name + ".h")).string();
  if (!options.depfile.empty() &&
      !writeDepfile(options.depfile, depfileTarget, options.input, *result.program)) {
    std::cerr << "foldc: error: cannot write '" << options.depfile << "'\n";
    return kExitUsage;
  }
  if (!options.outputPath.empty())
    return writeCpp(code, options.outputPath, options.driver) ? 0 : kExitUsage;
  out << code.header << '\n' << code.source;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && std::string(argv[1]) == "run")
    return foldc::tools::runModel(argc, argv);
  CLI::App app{"foldc: compiles Fold block programs to batched C++ models"};
  app.set_version_flag("--version", std::string("foldc ") + FOLDC_VERSION);
  Options options;
  app.add_option("FILE", options.input, "the .fold file ('-' reads standard input)");
  const std::map<std::string, EmitStage> stages{
      {"tokens", EmitStage::Tokens}, {"ast", EmitStage::AST}, {"types", EmitStage::Types},
      {"plan", EmitStage::Plan},     {"dot", EmitStage::Dot}, {"cpp", EmitStage::Cpp}};
  std::string emit;
  app.add_option("--emit", emit,
                 "what to print: tokens, ast, types (the default without -o), plan, dot (the "
                 "plan for Graphviz) or cpp (the default with -o DIR: writes DIR/NAME.h and "
                 "DIR/NAME.cpp)")
      ->check(CLI::IsMember({"tokens", "ast", "types", "plan", "dot", "cpp"}));
  app.add_option(
      "--output-name", options.outputName,
      "with -o DIR: name the files NAME.h, NAME.cpp, NAME_main.cpp (default: the model's)");
  app.add_option("--depfile", options.depfile,
                 "write the generated files' dependencies (the .fold file, imported headers) here");
  app.add_option("--depfile-target", options.depfileTarget,
                 "the file the depfile's dependencies are of (default: the header written); "
                 "Ninja wants the first output of the build step");
  app.add_flag("--driver", options.driver,
               "with -o DIR, also write DIR/NAME_main.cpp: the model's command line");
  app.add_option("--namespace", options.cppNamespace, "C++ namespace of generated code");
  app.add_option("-I", options.pipeline.includeDirs, "folders where `import` finds headers")
      ->allow_extra_args(false);
  app.add_flag("--print-after-all", options.pipeline.printAfterAll,
               "print each pass's result on stderr");
  app.add_flag("--time-passes", options.pipeline.timePasses, "print each pass's time on stderr");
  app.add_option("-o", options.outputPath, "write the output to this file instead of stdout");
  app.add_option("--error-limit", options.errorLimit, "stop after this many errors (default 20)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int status = app.exit(e);
    return status == 0 ? 0 : kExitUsage;
  }
  if (emit.empty())
    emit = options.outputPath.empty() ? "types" : "cpp";
  options.emit = stages.at(emit);
  if (options.driver && (options.outputPath.empty() || options.emit != EmitStage::Cpp)) {
    std::cerr << "foldc: error: --driver writes NAME_main.cpp into the -o DIR of C++ output\n";
    return kExitUsage;
  }
  int status = 0;
  std::exception_ptr error =
      foldc::rt::onThreads(compilerStackBytes(), 1, [&](int) { status = run(options); })[0];
  if (error)
    std::rethrow_exception(error);
  return status;
}
