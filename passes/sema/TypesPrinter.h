// The `--emit=types` dump: every signature and the type of every `let`.
#pragma once

#include "passes/sema/TypedProgram.h"

#include <ostream>

namespace foldc {

/// Prints consts, data, params, layers, defs and the model with their types,
/// and under each def the type of each `let` and def-local `param`.
void printTypes(const TypedProgram &program, std::ostream &out);

} // namespace foldc
