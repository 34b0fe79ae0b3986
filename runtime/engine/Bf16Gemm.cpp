// The bf16 panel GEMM (see Bf16Gemm.h): a 6 x 32 block of C in twelve fp32
// accumulators per pair of k, A's pair of bf16 broadcast as one 32-bit lane.
#include "runtime/engine/Bf16Gemm.h"

#include "runtime/engine/PanelBlocks.h"
#include "runtime/engine/PanelGemm.h"

#include <algorithm>
#include <vector>

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

namespace foldc::rt {

namespace {

int64_t pairsOf(int64_t k) { return (k + 1) / 2; }

} // namespace

int64_t bf16PanelSize(int64_t k, int64_t n) { return pairsOf(k) * 2 * kPanelWidth * panelCount(n); }

#if defined(__AVX512BF16__) && defined(__AVX512BW__)

bool bf16GemmAvailable() { return __builtin_cpu_supports("avx512bf16"); }

namespace {

/// The floats at `from` that `mask` selects (of 32), rounded to bf16 (to
/// nearest, ties to even); zeros elsewhere.
__m512i roundedBf16(const float *from, __mmask32 mask) {
  __m512 low = _mm512_maskz_loadu_ps(__mmask16(mask), from);
  __m512 high = _mm512_maskz_loadu_ps(__mmask16(mask >> 16), from + 16);
  return __m512i(_mm512_cvtne2ps_pbh(high, low));
}

/// Packs 32 columns (the first `width` of them, at `row0` and `row1`; `row1`
/// null past k) of two rows of B into one panel row: for columns 0-15 then
/// 16-31, each column's two values side by side.
void packPair(const float *row0, const float *row1, int64_t width, uint16_t *to) {
  // Lanes 0-15 of the rounded pair: row 0's first 16 columns; 16-31: row 1's.
  static const __m512i kInterleave =
      _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                       21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  for (int half = 0; half < 2; ++half) {
    const int64_t count = std::clamp<int64_t>(width - 16 * half, 0, 16);
    __m512 first = _mm512_maskz_loadu_ps(__mmask16((1u << count) - 1), row0 + 16 * half);
    __m512 second = row1 ? _mm512_maskz_loadu_ps(__mmask16((1u << count) - 1), row1 + 16 * half)
                         : _mm512_setzero_ps();
    __m512i both = __m512i(_mm512_cvtne2ps_pbh(second, first));
    _mm512_storeu_si512(to + 32 * half, _mm512_permutexvar_epi16(kInterleave, both));
  }
}

/// A's rows rounded to bf16, each padded to an even length with a zero: row
/// r's pair q is the 32-bit word r * pairs + q.
void roundRows(int64_t m, int64_t k, const float *a, int64_t lda, std::vector<uint32_t> &out) {
  const int64_t pairs = pairsOf(k);
  out.resize(size_t(m * pairs));
  for (int64_t r = 0; r < m; ++r) {
    uint16_t *to = reinterpret_cast<uint16_t *>(out.data() + r * pairs);
    for (int64_t kk = 0; kk < k; kk += 32) {
      const int64_t count = std::min<int64_t>(32, k - kk);
      const __mmask32 mask = count == 32 ? ~__mmask32(0) : (__mmask32(1) << count) - 1;
      _mm512_mask_storeu_epi16(to + kk, mask, roundedBf16(a + r * lda + kk, mask));
    }
    if (k % 2 != 0)
      to[k] = 0;
  }
}

/// Rows [0, Rows) and columns [0, width) of C from the same rows of A (as
/// pairs, row stride `pairs`) and one panel.
template <int Rows, bool Accumulate>
void block(const uint32_t *a, int64_t pairs, const uint16_t *panel, int64_t width, float *c,
           int64_t ldc) {
  __m512 left[Rows], right[Rows];
  for (int r = 0; r < Rows; ++r)
    left[r] = right[r] = _mm512_setzero_ps();
  for (int64_t q = 0; q < pairs; ++q) {
    const __m512bh b0 = __m512bh(_mm512_loadu_si512(panel + q * 2 * kPanelWidth));
    const __m512bh b1 = __m512bh(_mm512_loadu_si512(panel + q * 2 * kPanelWidth + kPanelWidth));
    for (int r = 0; r < Rows; ++r) {
      const __m512bh x = __m512bh(_mm512_set1_epi32(int(a[r * pairs + q])));
      left[r] = _mm512_dpbf16_ps(left[r], x, b0);
      right[r] = _mm512_dpbf16_ps(right[r], x, b1);
    }
  }
  for (int r = 0; r < Rows; ++r)
    panel::storeRow<Accumulate>(c + r * ldc, left[r], right[r], width);
}

/// The rows of A in register blocks, against one panel.
template <bool Accumulate>
void panelColumns(int64_t m, const uint32_t *a, int64_t pairs, const uint16_t *panel, int64_t width,
                  float *c, int64_t ldc) {
  panel::forEachRowBlock(m, [&](auto rows, int64_t first) {
    block<rows(), Accumulate>(a + first * pairs, pairs, panel, width, c + first * ldc, ldc);
  });
}

} // namespace

void packBf16Panels(bool transposed, int64_t k, int64_t n, const float *b, int64_t ldb,
                    uint16_t *panels) {
  thread_local std::vector<float> rows; // a transposed B, row-major
  if (transposed) {
    rows.resize(size_t(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j)
        rows[size_t(kk * n + j)] = b[j * ldb + kk];
    b = rows.data();
    ldb = n;
  }
  const int64_t pairs = pairsOf(k);
  for (int64_t p = 0; p < panelCount(n); ++p) {
    uint16_t *panel = panels + p * pairs * 2 * kPanelWidth;
    const int64_t column = p * kPanelWidth, width = std::min(kPanelWidth, n - column);
    for (int64_t q = 0; q < pairs; ++q) {
      const float *row0 = b + 2 * q * ldb + column;
      const float *row1 = 2 * q + 1 < k ? row0 + ldb : nullptr;
      packPair(row0, row1, width, panel + q * 2 * kPanelWidth);
    }
  }
}

void bf16PanelGemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                   const uint16_t *panels, float beta, float *c, int64_t ldc) {
  thread_local std::vector<uint32_t> rounded;
  roundRows(m, k, a, lda, rounded);
  const int64_t pairs = pairsOf(k);
  for (int64_t p = 0; p < panelCount(n); ++p) {
    const uint16_t *panel = panels + p * pairs * 2 * kPanelWidth;
    float *columns = c + p * kPanelWidth;
    const int64_t width = std::min(kPanelWidth, n - p * kPanelWidth);
    if (beta == 0.0f)
      panelColumns<false>(m, rounded.data(), pairs, panel, width, columns, ldc);
    else
      panelColumns<true>(m, rounded.data(), pairs, panel, width, columns, ldc);
  }
}

#else

bool bf16GemmAvailable() { return false; }

#endif

} // namespace foldc::rt
