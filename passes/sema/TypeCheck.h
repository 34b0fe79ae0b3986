// Type inference and checking: types every expression, def, layer and param,
// enforces the structural rule, and fills a TypedProgram's side tables.
#pragma once

#include "frontend/Diagnostics.h"
#include "passes/sema/TypedProgram.h"

namespace foldc {

/// Checks `program.module` (names and consts already in `program`), filling
/// its type tables. Errors are reported through `diag`, one per mistake.
void checkTypes(TypedProgram &program, DiagnosticEngine &diag);

} // namespace foldc
