// C++ for the kernels of a batch plan: one rt::Kernel class per kernel, whose
// forward calls runtime primitives in op order and whose backward recomputes
// the forward and sweeps the ops in reverse. Also the model's parameters.
#pragma once

#include "codegen/Emitter.h"
#include "passes/batching/BatchPlan.h"

#include <string>
#include <vector>

namespace foldc {

/// Where a host input of a kernel lives in an instance's host values.
struct HostSlot {
  bool isInt; ///< ints (int, bool) or floats (float, lists read by `vector`)
  int slot;   ///< first column among the instance's ints / floats
  int count;  ///< columns (a list read by `vector` has several)
};

/// The host values of each instance of `kernel`, in hostInputs order.
std::vector<HostSlot> hostLayout(const KernelPlan &kernel);

/// A shape as a C++ braced list: `{150, 5}`.
std::string shapeList(const std::vector<int64_t> &shape);

/// Declares `declareParams(ParamStore&)` and `makeKernels(const ParamStore&)`
/// in `header` and defines them, with a class per kernel, in `source`.
/// Returns, for each kernel of the plan, its index in makeKernels's vector
/// (merged kernels share their first's); helper kernels are included.
std::vector<int> emitKernels(const BatchPlan &plan, Emitter &header, Emitter &source);

} // namespace foldc
