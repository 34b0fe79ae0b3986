// Checks every generated kernel of a model against finite differences, with
// the harness of the runtime's own kernel tests. MODEL is the generated
// namespace; host ints are 1 (a valid word id, op and label here).
#include MODEL_HEADER

#include "KernelHarness.h"

#include <cstdio>

TEST(GeneratedKernels, MatchFiniteDifferences) {
  foldc::rt::ParamStore params;
  MODEL::declareParams(params);
  params.initialize(3);
  auto kernels = MODEL::makeKernels(params);
  ASSERT_FALSE(kernels.empty());
  for (const auto &kernel : kernels) {
    SCOPED_TRACE(kernel->signature().name);
    foldc::rt::testing::KernelHarness harness(*kernel, params, 3, 7);
    harness.ints.assign(size_t(3 * kernel->signature().hostInts), 1);
    harness.checkGradients(1e-2, 3e-2);
    std::printf("checked %s\n", kernel->signature().name.c_str());
  }
}
