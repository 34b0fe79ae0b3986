// The bf16 panel GEMM (see Bf16Gemm.h): a 6 x 32 block of C in twelve fp32
// accumulators per pair of k, A's pair of bf16 broadcast as one 32-bit lane.
#include "runtime/engine/Bf16Gemm.h"

#include "runtime/engine/PanelGemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

namespace foldc::rt {

namespace {

/// One float rounded to bf16 as vcvtne2ps2bf16 does: to nearest, ties to
/// even; denormals to signed zero; NaN stays a (quiet) NaN.
uint16_t toBf16(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) == 0)
    return uint16_t((bits >> 16) & 0x8000u);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

int64_t pairsOf(int64_t k) { return (k + 1) / 2; }

} // namespace

int64_t bf16PanelSize(int64_t k, int64_t n) { return pairsOf(k) * 2 * kPanelWidth * panelCount(n); }

void packBf16Panels(bool transposed, int64_t k, int64_t n, const float *b, int64_t ldb,
                    uint16_t *panels) {
  auto at = [&](int64_t row, int64_t column) {
    if (row >= k || column >= n)
      return uint16_t(0);
    return toBf16(transposed ? b[column * ldb + row] : b[row * ldb + column]);
  };
  const int64_t pairs = pairsOf(k);
  for (int64_t p = 0; p < panelCount(n); ++p) {
    uint16_t *panel = panels + p * pairs * 2 * kPanelWidth;
    for (int64_t q = 0; q < pairs; ++q)
      for (int64_t j = 0; j < kPanelWidth; ++j) {
        panel[(q * kPanelWidth + j) * 2] = at(2 * q, p * kPanelWidth + j);
        panel[(q * kPanelWidth + j) * 2 + 1] = at(2 * q + 1, p * kPanelWidth + j);
      }
  }
}

#if defined(__AVX512BF16__) && defined(__AVX512BW__)

bool bf16GemmAvailable() { return __builtin_cpu_supports("avx512bf16"); }

namespace {

constexpr int kBlockRows = 6;

/// A's rows rounded to bf16, each padded to an even length with a zero: row
/// r's pair q is the 32-bit word r * pairs + q.
void roundRows(int64_t m, int64_t k, const float *a, int64_t lda, std::vector<uint32_t> &out) {
  const int64_t pairs = pairsOf(k);
  out.resize(size_t(m * pairs));
  for (int64_t r = 0; r < m; ++r) {
    const float *row = a + r * lda;
    uint16_t *to = reinterpret_cast<uint16_t *>(out.data() + r * pairs);
    for (int64_t kk = 0; kk < k; kk += 32) {
      const int64_t count = std::min<int64_t>(32, k - kk);
      const __mmask32 mask = count == 32 ? ~__mmask32(0) : (__mmask32(1) << count) - 1;
      __m512 low = _mm512_maskz_loadu_ps(__mmask16(mask), row + kk);
      __m512 high = _mm512_maskz_loadu_ps(__mmask16(mask >> 16), row + kk + 16);
      __m512bh rounded = _mm512_cvtne2ps_pbh(high, low);
      _mm512_mask_storeu_epi16(to + kk, mask, __m512i(rounded));
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
  for (int r = 0; r < Rows; ++r) {
    float *row = c + r * ldc;
    if (width == kPanelWidth) {
      _mm512_storeu_ps(row, Accumulate ? _mm512_add_ps(_mm512_loadu_ps(row), left[r]) : left[r]);
      _mm512_storeu_ps(row + 16,
                       Accumulate ? _mm512_add_ps(_mm512_loadu_ps(row + 16), right[r]) : right[r]);
      continue;
    }
    float sums[kPanelWidth]; // a narrower last panel: only C's columns are written
    _mm512_storeu_ps(sums, left[r]);
    _mm512_storeu_ps(sums + 16, right[r]);
    for (int64_t j = 0; j < width; ++j)
      row[j] = Accumulate ? row[j] + sums[j] : sums[j];
  }
}

/// The rows of A in blocks of six, then the last 1-5, against one panel.
template <bool Accumulate>
void panelColumns(int64_t m, const uint32_t *a, int64_t pairs, const uint16_t *panel, int64_t width,
                  float *c, int64_t ldc) {
  int64_t r = 0;
  for (; r + kBlockRows <= m; r += kBlockRows)
    block<kBlockRows, Accumulate>(a + r * pairs, pairs, panel, width, c + r * ldc, ldc);
  const uint32_t *rest = a + r * pairs;
  float *out = c + r * ldc;
  switch (m - r) {
  case 1:
    return block<1, Accumulate>(rest, pairs, panel, width, out, ldc);
  case 2:
    return block<2, Accumulate>(rest, pairs, panel, width, out, ldc);
  case 3:
    return block<3, Accumulate>(rest, pairs, panel, width, out, ldc);
  case 4:
    return block<4, Accumulate>(rest, pairs, panel, width, out, ldc);
  case 5:
    return block<5, Accumulate>(rest, pairs, panel, width, out, ldc);
  default:
    return;
  }
}

} // namespace

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
