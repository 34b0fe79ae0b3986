// libFuzzer target: source text through every pass (parse, imports, names,
// constants, types, batching, verify, emit) to C++ text in memory. Any input
// must end in diagnostics or C++: a crash, a sanitizer report or an
// exception escaping the pipeline (an emitter's precondition) is a bug.
#include "pipeline/Pipeline.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  foldc::SourceManager sources;
  uint32_t file =
      sources.addFile("fuzz.fold", std::string(reinterpret_cast<const char *>(data), size));
  std::ostringstream diagnostics;
  foldc::DiagnosticEngine diag(sources, diagnostics, 20);
  foldc::PipelineOptions options;
  foldc::Compilation result;
  foldc::compile(sources, file, diag, options, result);
  return 0;
}
