// The GEMMs of linear layers, through OpenBLAS: at the Tree-LSTM's shapes
// (a few to a thousand rows, 256 x 640 weights) its sgemm ran 1.3-2x faster
// than Eigen's on this project's machines (bench/README.md).
#pragma once

#include <cstdint>

namespace foldc::rt {

enum class Transpose : bool { No, Yes };

/// C = op(A) op(B) + beta C for row-major matrices: op(A) is m x k, op(B) is
/// k x n, C is m x n; lda, ldb and ldc are the row lengths as stored.
void gemm(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/// Threads the GEMMs may use (rt::configureProcess sets it).
void setGemmThreads(int threads);

} // namespace foldc::rt
