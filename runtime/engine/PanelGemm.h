// A single-threaded sgemm for AVX-512 CPUs whose right-hand matrix is packed
// into panels of 32 columns. Debian's OpenBLAS runs its AVX2 kernel on these
// CPUs and packs both operands on every call, most of a few-row GEMM's time;
// packing a layer's weights once and keeping a 6 x 32 block of C in
// registers is faster at every row count of a tree's levels (the figures:
// bench/README.md, "GEMM").
#pragma once

#include "runtime/engine/Gemm.h"

#include <cstdint>

namespace foldc::rt {

#if defined(__AVX512F__)
inline constexpr bool kPanelGemmBuilt = true;
#else
inline constexpr bool kPanelGemmBuilt = false; // the kernel's registers need AVX-512
#endif

/// Columns per panel: two 16-float vectors.
inline constexpr int64_t kPanelWidth = 32;

/// Panels of n columns: the last one narrower when 32 does not divide n.
constexpr int64_t panelCount(int64_t n) { return (n + kPanelWidth - 1) / kPanelWidth; }

/// Packs op(B), a k x n matrix with B stored row-major with row length ldb,
/// into `panels` (k * 32 * panelCount(n) floats): panel p holds columns
/// [32p, 32p + 32) of op(B), a row of 32 floats per k, zeros past column n.
void packPanels(Transpose tb, int64_t k, int64_t n, const float *b, int64_t ldb, float *panels);

/// packPanels() of a B (not transposed) whose k rows lie anywhere (bRows[kk]).
void packPointedRows(int64_t k, int64_t n, const float *const *bRows, float *panels);

/// C = op(A) B + beta C (beta 0 or 1) for a B packed by packPanels; op(A)
/// is m x k, A and C row-major with row lengths lda and ldc. Each element
/// of C is one sum over k in order, whatever m: a row's result does not
/// depend on the other rows of its batch.
void panelGemm(Transpose ta, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
               const float *panels, float beta, float *c, int64_t ldc);

/// panelGemm() with op(A) = A^T for an A whose k rows lie anywhere:
/// op(A)(r, kk) is aRows[kk][column + r]. A weight's gradient x^T dy over
/// the rows of x a pass kept, where they are, in the same order of sums.
void panelGemmPointedRows(int64_t m, int64_t n, int64_t k, const float *const *aRows,
                          int64_t column, const float *panels, float beta, float *c, int64_t ldc);

} // namespace foldc::rt
