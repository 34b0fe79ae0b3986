// foldc: the command-line driver. Reads one .fold file, runs the pipeline up
// to the requested stage and prints that stage. Exit: 0 ok, 1 errors in the
// program, 2 bad usage or unreadable input.
#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "passes/Pipeline.h"
#include "passes/TypesPrinter.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <map>

namespace {

enum class EmitStage { Tokens, AST, Types };

constexpr int kExitProgramErrors = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string input = "-";
  EmitStage emit = EmitStage::AST;
  std::string outputPath;
  unsigned errorLimit = 20;
  foldc::PipelineOptions pipeline;
};

int run(const Options &options) {
  foldc::SourceManager sources;
  uint32_t file = 0;
  if (!sources.loadFile(options.input, file)) {
    std::cerr << "foldc: error: cannot read '" << options.input << "'\n";
    return kExitUsage;
  }
  std::ofstream outFile;
  if (!options.outputPath.empty()) {
    outFile.open(options.outputPath);
    if (!outFile) {
      std::cerr << "foldc: error: cannot write '" << options.outputPath << "'\n";
      return kExitUsage;
    }
  }
  std::ostream &out = options.outputPath.empty() ? std::cout : outFile;
  foldc::DiagnosticEngine diag(sources, std::cerr, options.errorLimit);

  if (options.emit == EmitStage::Tokens) {
    foldc::dumpTokens(sources, file, out);
    return 0;
  }
  auto module = foldc::parseModule(sources, file, diag);
  if (!module)
    return kExitProgramErrors;
  if (options.emit == EmitStage::AST) {
    foldc::dumpAST(*module, out);
    return 0;
  }
  foldc::PipelineOptions pipeline = options.pipeline;
  pipeline.log = &std::cerr;
  auto program = foldc::analyze(*module, diag, pipeline);
  if (diag.hasErrors())
    return kExitProgramErrors;
  foldc::printTypes(*program, out);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"foldc: compiles Fold block programs to batched C++ models"};
  app.set_version_flag("--version", std::string("foldc ") + FOLDC_VERSION);
  Options options;
  app.add_option("FILE", options.input, "the .fold file ('-' reads standard input)");
  const std::map<std::string, EmitStage> stages{
      {"tokens", EmitStage::Tokens}, {"ast", EmitStage::AST}, {"types", EmitStage::Types}};
  std::string emit = "types";
  app.add_option("--emit", emit, "what to print: tokens, ast or types (default)")
      ->check(CLI::IsMember({"tokens", "ast", "types"}));
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
  options.emit = stages.at(emit);
  return run(options);
}
