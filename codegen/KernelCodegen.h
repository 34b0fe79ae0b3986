// C++ for the kernels of a batch plan: one rt::Kernel class per kernel, whose
// forward calls runtime primitives in op order and whose backward recomputes
// the forward and sweeps the ops in reverse. Also the model's parameters.
#pragma once

#include "codegen/Emitter.h"
#include "passes/BatchPlan.h"
#include "passes/TypedProgram.h"

namespace foldc {

/// Declares `declareParams(ParamStore&)` and `makeKernels(const ParamStore&)`
/// in `header` and defines them, with a class per kernel, in `source`.
void emitKernels(const TypedProgram &program, const BatchPlan &plan, Emitter &header,
                 Emitter &source);

} // namespace foldc
