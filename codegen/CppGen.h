// C++ code generation: a typed program to NAME.h and NAME.cpp.
#pragma once

#include "passes/TypedProgram.h"

#include <string>

namespace foldc {

struct GeneratedCpp {
  std::string name;   ///< the model's name (or the file's stem): NAME.h, NAME.cpp
  std::string header; ///< NAME.h
  std::string source; ///< NAME.cpp
};

/// Generates the C++ of `program` in namespace `ns` (the name when empty).
/// So far: the data types and their JSONL readers; the model class, kernels
/// and unfolding come with the batching analysis (issue 5).
GeneratedCpp generateCpp(const TypedProgram &program, const std::string &ns);

} // namespace foldc
