// The GEMMs of linear layers: on AVX-512 CPUs a kernel of this runtime
// (PanelGemm.h); else, or with more than one GEMM thread, OpenBLAS, faster
// than Eigen's at these shapes (bench/README.md, "GEMM").
#pragma once

#include <cstdint>

namespace foldc::rt {

enum class Transpose : bool { No, Yes };

/// C = op(A) op(B) + beta C for row-major matrices: op(A) is m x k, op(B) is
/// k x n, C is m x n; lda, ldb and ldc are the row lengths as stored.
void gemm(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/// gemm() where B is a layer's weights, unchanged while a WeightPass lives
/// on this thread: each weight matrix is packed for the kernel once per
/// pass, not once per level of the batch.
void gemmWithWeights(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a,
                     int64_t lda, const float *weights, int64_t ldw, float beta, float *c,
                     int64_t ldc);

/// A forward or backward pass of one executor, on its thread: the weights
/// gemmWithWeights() is given do not change until it ends. Other threads
/// (workers running parts of a batch) pack their own, as gemm() does.
class WeightPass {
public:
  WeightPass();
  ~WeightPass();
  WeightPass(const WeightPass &) = delete;
  WeightPass &operator=(const WeightPass &) = delete;
};

/// Threads the GEMMs may use (rt::configureProcess sets it).
void setGemmThreads(int threads);

} // namespace foldc::rt
