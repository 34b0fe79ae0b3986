// C++ code generation: a verified batch plan to NAME.h and NAME.cpp.
#pragma once

#include "passes/batching/BatchPlan.h"

#include <string>

namespace foldc {

struct GeneratedCpp {
  std::string name;   ///< the model's name (or the file's stem): NAME.h, NAME.cpp
  std::string header; ///< NAME.h
  std::string source; ///< NAME.cpp
  std::string driver; ///< NAME_main.cpp: the command line (empty without a model)
};

/// Generates the C++ of `plan` (which verifyPlan accepted) in namespace `ns`
/// (the model's name when empty), in files named `fileName` (the model's
/// name when empty): the data types and their JSONL readers, the parameters,
/// one kernel class per kernel, and the model class with its unfolding.
GeneratedCpp generateCpp(const BatchPlan &plan, const std::string &ns,
                         const std::string &fileName = "");

} // namespace foldc
