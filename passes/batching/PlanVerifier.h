// The batch plan's verifier: run after lowering in every build, so that no
// emitter ever sees a plan it cannot emit.
#pragma once

#include "frontend/Diagnostics.h"
#include "passes/batching/BatchPlan.h"

namespace foldc {

/// Checks operand kinds and counts, widths and shapes against each op's
/// rule (Ops.def), typed attributes, def-use inside kernels and across the
/// unfolding steps, and that every value a step reads is given out by its
/// kernel. Each violation is an "internal compiler error" naming the op (or
/// step) and its kernel, located at its source. Returns true when none.
bool verifyPlan(const BatchPlan &plan, DiagnosticEngine &diag);

} // namespace foldc
