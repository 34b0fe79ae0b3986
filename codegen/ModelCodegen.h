// C++ for the model class: one unfolding function per def of the batch plan
// (its steps become host code that records kernel instances in a
// BatchGraph), the model's output as JSON, and the constructor that declares
// the parameters and makes the kernels. Training, inference and evaluation
// come from runtime/model/Model.h.
#pragma once

#include "codegen/Emitter.h"
#include "codegen/Naming.h"
#include "passes/batching/BatchPlan.h"

#include <vector>

namespace foldc {

/// Declares `class Model` in `header` and defines it in `source`.
/// `kernelIndex` maps each kernel of `plan` to its place in makeKernels's
/// vector (emitKernels). The plan must have passed verifyPlan.
void emitModel(const BatchPlan &plan, const CppNames &names, const std::string &cppNamespace,
               const std::vector<int> &kernelIndex, Emitter &header, Emitter &source);

} // namespace foldc
