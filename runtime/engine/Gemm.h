// The GEMMs of linear layers: on AVX-512 CPUs kernels of this runtime
// (PanelGemm.h; Bf16Gemm.h for inference in bf16); else OpenBLAS, faster
// than Eigen's at these shapes (bench/README.md, "GEMM").
#pragma once

#include <cstdint>

namespace foldc::rt {

enum class Transpose : bool { No, Yes };

/// C = op(A) op(B) + beta C for row-major matrices: op(A) is m x k, op(B) is
/// k x n, C is m x n; lda, ldb and ldc are the row lengths as stored.
void gemm(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/// C += A^T B where A's k rows of m floats and B's k rows of n floats lie
/// anywhere (aRows[kk], bRows[kk]): a weight's gradient x^T dy over the
/// rows a pass kept, read where they are. The same sums in the same order
/// as gemm() of A and B copied into matrices.
void gemmPointedRows(int64_t m, int64_t n, int64_t k, const float *const *aRows,
                     const float *const *bRows, float *c, int64_t ldc);

/// gemm() where B is a layer's weights, unchanged while a WeightPass lives
/// on this thread: each weight matrix is packed for the kernel once per
/// pass, not once per level of the batch. Under PrecisionScope(Bf16), in
/// bf16 where the bf16 kernel is built and A is not transposed.
void gemmWithWeights(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a,
                     int64_t lda, const float *weights, int64_t ldw, float beta, float *c,
                     int64_t ldc);

/// The arithmetic of gemmWithWeights: fp32, or (inference only) the weights
/// and the left operand's rows rounded to bfloat16 and their products summed
/// in fp32 (Bf16Gemm.h).
enum class Precision : uint8_t { F32, Bf16 };

/// Whether Precision::Bf16 can run on this host; when not, `why` says why.
bool bf16Available(const char **why = nullptr);

/// Sets this thread's gemmWithWeights precision for its lifetime (then
/// restores the one before). Each thread that runs a part of a pass sets its
/// own: the precision is a thread's, like its WeightPass.
class PrecisionScope {
public:
  explicit PrecisionScope(Precision precision);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope &) = delete;
  PrecisionScope &operator=(const PrecisionScope &) = delete;

private:
  Precision before_;
};

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
