// C++ code generation: a typed program to NAME.h and NAME.cpp.
#pragma once

#include "passes/sema/TypedProgram.h"

#include <string>

namespace foldc {

struct GeneratedCpp {
  std::string name;   ///< the model's name (or the file's stem): NAME.h, NAME.cpp
  std::string header; ///< NAME.h
  std::string source; ///< NAME.cpp
  std::string driver; ///< NAME_main.cpp: the command line (empty without a model)
};

/// Generates the C++ of `program` in namespace `ns` (the model's name when
/// empty), in files named `fileName` (the model's name when empty).
/// The data types and their JSONL readers, the parameters, one kernel class
/// per kernel of the batch plan, and the model class with its unfolding.
/// Throws CodegenError for constructs not generated yet.
GeneratedCpp generateCpp(const TypedProgram &program, const std::string &ns,
                         const std::string &fileName = "");

} // namespace foldc
