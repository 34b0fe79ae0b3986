// Row-major sgemm through OpenBLAS's CBLAS interface.
#include "runtime/Gemm.h"

#include "runtime/GemmClock.h"

#include <cblas.h>

// OpenBLAS's own; declared here so that any cblas.h will do.
extern "C" void openblas_set_num_threads(int threads);

namespace foldc::rt {

void gemm(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  GemmClock::Scope timing;
  auto op = [](Transpose t) { return t == Transpose::Yes ? CblasTrans : CblasNoTrans; };
  cblas_sgemm(CblasRowMajor, op(ta), op(tb), int(m), int(n), int(k), 1.0f, a, int(lda), b,
              int(ldb), beta, c, int(ldc));
}

void setGemmThreads(int threads) { openblas_set_num_threads(threads < 1 ? 1 : threads); }

} // namespace foldc::rt
