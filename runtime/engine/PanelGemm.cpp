// The panel sgemm (see PanelGemm.h): a 6 x 32 register block of C (12
// AVX-512 accumulators) per step along k, with op(A)'s six elements
// broadcast and the panel's row of 32 loaded once for all six rows.
#include "runtime/engine/PanelGemm.h"

#include "runtime/engine/PanelBlocks.h"

#include <algorithm>
#include <cstring>

namespace foldc::rt {

void packPanels(Transpose tb, int64_t k, int64_t n, const float *b, int64_t ldb, float *panels) {
  for (int64_t p = 0; p < panelCount(n); ++p) {
    float *panel = panels + p * k * kPanelWidth;
    int64_t column = p * kPanelWidth, width = std::min(kPanelWidth, n - column);
    for (int64_t kk = 0; kk < k; ++kk) {
      float *row = panel + kk * kPanelWidth;
      std::fill(row + width, row + kPanelWidth, 0.0f); // a last, narrower panel: zero columns
      if (tb == Transpose::No) {
        std::memcpy(row, b + kk * ldb + column, size_t(width) * sizeof(float));
        continue;
      }
      for (int64_t j = 0; j < width; ++j)
        row[j] = b[(column + j) * ldb + kk];
    }
  }
}

#if defined(__AVX512F__)

namespace {

using panel::Vector;

/// Rows [0, Rows) and columns [0, width) of C (at `c`) from the same rows
/// of op(A) (element (r, kk) at a[r * rowStride + kk * kStride]) and one panel.
template <int Rows, bool Accumulate>
void block(const float *a, int64_t rowStride, int64_t kStride, const float *panel, int64_t k,
           int64_t width, float *c, int64_t ldc) {
  Vector left[Rows], right[Rows];
  for (int r = 0; r < Rows; ++r)
    left[r] = right[r] = Vector{};
  for (int64_t kk = 0; kk < k; ++kk) {
    Vector b0 = panel::load(panel + kk * kPanelWidth),
           b1 = panel::load(panel + kk * kPanelWidth + 16);
    for (int r = 0; r < Rows; ++r) {
      float x = a[r * rowStride + kk * kStride];
      left[r] += x * b0;
      right[r] += x * b1;
    }
  }
  for (int r = 0; r < Rows; ++r)
    panel::storeRow<Accumulate>(c + r * ldc, left[r], right[r], width);
}

/// The rows of op(A) in register blocks, against one panel.
template <bool Accumulate>
void panelColumns(int64_t m, int64_t k, const float *a, int64_t rowStride, int64_t kStride,
                  const float *panel, int64_t width, float *c, int64_t ldc) {
  panel::forEachRowBlock(m, [&](auto rows, int64_t first) {
    block<rows(), Accumulate>(a + first * rowStride, rowStride, kStride, panel, k, width,
                              c + first * ldc, ldc);
  });
}

} // namespace

void panelGemm(Transpose ta, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
               const float *panels, float beta, float *c, int64_t ldc) {
  // op(A)(r, kk) is a[r * lda + kk], or a[kk * lda + r] when transposed.
  int64_t rowStride = ta == Transpose::No ? lda : 1, kStride = ta == Transpose::No ? 1 : lda;
  for (int64_t p = 0; p < panelCount(n); ++p) {
    const float *panel = panels + p * k * kPanelWidth;
    float *columns = c + p * kPanelWidth;
    int64_t width = std::min(kPanelWidth, n - p * kPanelWidth);
    if (beta == 0.0f)
      panelColumns<false>(m, k, a, rowStride, kStride, panel, width, columns, ldc);
    else
      panelColumns<true>(m, k, a, rowStride, kStride, panel, width, columns, ldc);
  }
}

#endif

} // namespace foldc::rt
