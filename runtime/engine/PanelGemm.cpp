// The panel sgemm (see PanelGemm.h): a 6 x 32 register block of C (12
// AVX-512 accumulators) per step along k, with op(A)'s six elements
// broadcast and the panel's row of 32 loaded once for all six rows.
#include "runtime/engine/PanelGemm.h"

#include "runtime/engine/PanelBlocks.h"

#include <algorithm>
#include <cstring>

namespace foldc::rt {

namespace {

/// Packs op(B) into panels, op(B)'s row kk, columns [column, column + width)
/// copied by copy(kk, column, width, to).
template <class Copy> void pack(int64_t k, int64_t n, float *panels, const Copy &copy) {
  for (int64_t p = 0; p < panelCount(n); ++p) {
    float *panel = panels + p * k * kPanelWidth;
    int64_t column = p * kPanelWidth, width = std::min(kPanelWidth, n - column);
    for (int64_t kk = 0; kk < k; ++kk) {
      float *row = panel + kk * kPanelWidth;
      std::fill(row + width, row + kPanelWidth, 0.0f); // a last, narrower panel: zero columns
      copy(kk, column, width, row);
    }
  }
}

} // namespace

void packPanels(Transpose tb, int64_t k, int64_t n, const float *b, int64_t ldb, float *panels) {
  pack(k, n, panels, [&](int64_t kk, int64_t column, int64_t width, float *to) {
    if (tb == Transpose::No)
      return (void)std::memcpy(to, b + kk * ldb + column, size_t(width) * sizeof(float));
    for (int64_t j = 0; j < width; ++j)
      to[j] = b[(column + j) * ldb + kk];
  });
}

void packPointedRows(int64_t k, int64_t n, const float *const *bRows, float *panels) {
  pack(k, n, panels, [&](int64_t kk, int64_t column, int64_t width, float *to) {
    std::memcpy(to, bRows[kk] + column, size_t(width) * sizeof(float));
  });
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
    panel::holdForRows<Rows>(b0, b1);
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

/// block() for an op(A) = A^T whose rows lie anywhere: element (r, kk) at
/// aRows[kk][column + r]. Its own loop, not block() over an accessor: with
/// one, the strided kernel's loop ran out of registers and reloaded its row
/// offsets from the stack at every step (10-15% of its speed).
template <int Rows, bool Accumulate>
void pointedBlock(const float *const *aRows, int64_t column, const float *panel, int64_t k,
                  int64_t width, float *c, int64_t ldc) {
  Vector left[Rows], right[Rows];
  for (int r = 0; r < Rows; ++r)
    left[r] = right[r] = Vector{};
  for (int64_t kk = 0; kk < k; ++kk) {
    Vector b0 = panel::load(panel + kk * kPanelWidth),
           b1 = panel::load(panel + kk * kPanelWidth + 16);
    panel::holdForRows<Rows>(b0, b1);
    const float *a = aRows[kk] + column;
    for (int r = 0; r < Rows; ++r) {
      left[r] += a[r] * b0;
      right[r] += a[r] * b1;
    }
  }
  for (int r = 0; r < Rows; ++r)
    panel::storeRow<Accumulate>(c + r * ldc, left[r], right[r], width);
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

void panelGemmPointedRows(int64_t m, int64_t n, int64_t k, const float *const *aRows,
                          int64_t column, const float *panels, float beta, float *c, int64_t ldc) {
  for (int64_t p = 0; p < panelCount(n); ++p) {
    const float *panel = panels + p * k * kPanelWidth;
    int64_t width = std::min(kPanelWidth, n - p * kPanelWidth);
    panel::forEachRowBlock(m, [&](auto rows, int64_t first) {
      float *block = c + first * ldc + p * kPanelWidth;
      if (beta == 0.0f)
        pointedBlock<rows(), false>(aRows, column + first, panel, k, width, block, ldc);
      else
        pointedBlock<rows(), true>(aRows, column + first, panel, k, width, block, ldc);
    });
  }
}

#endif

} // namespace foldc::rt
