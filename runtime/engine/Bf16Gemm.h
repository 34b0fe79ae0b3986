// Products against a layer's weights in bfloat16 for inference: the weights
// and the rows of the left operand rounded to bf16 (8 bits of mantissa), the
// products of pairs summed in fp32 by AVX-512 BF16's vdpbf16ps, which does
// twice the multiply-adds of an fp32 FMA per instruction. The panel layout
// and register blocking are PanelGemm.h's, with each 32-bit lane holding a
// pair of k.
#pragma once

#include <cstdint>

namespace foldc::rt {

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
inline constexpr bool kBf16GemmBuilt = true;
#else
inline constexpr bool kBf16GemmBuilt = false; // built for CPUs without vdpbf16ps
#endif

/// Whether bf16 products can run here: the runtime was built for AVX-512
/// BF16 and this CPU has it.
bool bf16GemmAvailable();

/// uint16s of the packed panels of a k x n matrix: pairs of k rounded up.
int64_t bf16PanelSize(int64_t k, int64_t n);

/// Packs op(B), k x n, B row-major with row length ldb, rounded to bf16
/// (to nearest, ties to even): panel p holds columns [32p, 32p + 32), for
/// each pair of k rows the two values of a column side by side; zeros past
/// column n and past row k. Defined where kBf16GemmBuilt, as bf16PanelGemm.
void packBf16Panels(bool transposed, int64_t k, int64_t n, const float *b, int64_t ldb,
                    uint16_t *panels);

/// C = A B + beta C (beta 0 or 1), A m x k row-major (row length lda) and
/// rounded to bf16, B packed by packBf16Panels, C m x n row-major (ldc).
/// Each element of C sums the pairs of k in order: a row's result does not
/// depend on the other rows of its batch. Defined where kBf16GemmBuilt (its
/// callers are behind `if constexpr`); runs where bf16GemmAvailable().
void bf16PanelGemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                   const uint16_t *panels, float beta, float *c, int64_t ldc);

} // namespace foldc::rt
