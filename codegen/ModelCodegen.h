// C++ for the model class: one unfolding function per def of the batch plan
// (its steps become host code that records kernel instances in a
// BatchGraph), the model's output as JSON, and the constructor that declares
// the parameters and makes the kernels. Training, inference and evaluation
// come from runtime/Model.h.
#pragma once

#include "codegen/Emitter.h"
#include "passes/batching/BatchPlan.h"
#include "passes/sema/TypedProgram.h"

#include <stdexcept>
#include <vector>

namespace foldc {

/// A construct the code generator does not handle yet.
class CodegenError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Declares `class Model` in `header` and defines it in `source`.
/// `kernelIndex` maps each kernel of `plan` to its place in makeKernels's
/// vector (emitKernels). Throws CodegenError for what is not generated yet.
void emitModel(const TypedProgram &program, const BatchPlan &plan,
               const std::vector<int> &kernelIndex, Emitter &header, Emitter &source);

} // namespace foldc
