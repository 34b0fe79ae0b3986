// Lowering: the typed program to a batch plan.
#pragma once

#include "frontend/Diagnostics.h"
#include "passes/batching/BatchPlan.h"
#include "passes/sema/TypedProgram.h"

namespace foldc {

/// Splits every def and the model into kernels and unfolding steps.
///
/// Fusion: defs whose bodies are pure tensor computation (no match, if,
/// combinators, lambdas or recursion) and layers are inlined, so a kernel is
/// a maximal region of tensor operations. Regions are cut where structure
/// intervenes: a kernel holds the operations of one unfolding context (a
/// body, a match arm, a combinator's block) at one *stage*, where the stage
/// of a value is 0 for parameters and 1 + the stage of the inputs of the
/// structural step (call, match, combinator) that produced it. Each kernel is
/// its own batching key: instances from any example, call site or tree
/// position batch together; different regions never share a kernel.
/// What code generation cannot do yet is reported at the construct ("not
/// supported yet"); the plan is complete only when `diag` has no errors.
BatchPlan lowerToPlan(const TypedProgram &program, DiagnosticEngine &diag);

} // namespace foldc
