// The panel sgemm (see PanelGemm.h): a 6 x 32 register block of C (12
// AVX-512 accumulators) per step along k, with op(A)'s six elements
// broadcast and the panel's row of 32 loaded once for all six rows.
#include "runtime/engine/PanelGemm.h"

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

// A GCC/Clang vector type: one AVX-512 register. Loads and stores go
// through memcpy, which compiles to unaligned moves: C comes at any offset
// (a pointer to an under-aligned vector typedef is not enough: GCC 12 still
// emitted aligned stores through one).
typedef float Vector __attribute__((vector_size(64)));

Vector load(const float *from) {
  Vector v;
  std::memcpy(&v, from, sizeof v);
  return v;
}

void store(float *to, Vector v) { std::memcpy(to, &v, sizeof v); }

constexpr int kBlockRows = 6;

/// Rows [0, Rows) and columns [0, width) of C (at `c`) from the same rows
/// of op(A) (element (r, kk) at a[r * rowStride + kk * kStride]) and one panel.
template <int Rows, bool Accumulate>
void block(const float *a, int64_t rowStride, int64_t kStride, const float *panel, int64_t k,
           int64_t width, float *c, int64_t ldc) {
  Vector left[Rows], right[Rows];
  for (int r = 0; r < Rows; ++r)
    left[r] = right[r] = Vector{};
  for (int64_t kk = 0; kk < k; ++kk) {
    Vector b0 = load(panel + kk * kPanelWidth), b1 = load(panel + kk * kPanelWidth + 16);
    for (int r = 0; r < Rows; ++r) {
      float x = a[r * rowStride + kk * kStride];
      left[r] += x * b0;
      right[r] += x * b1;
    }
  }
  for (int r = 0; r < Rows; ++r) {
    float *row = c + r * ldc;
    if (width == kPanelWidth) {
      store(row, Accumulate ? load(row) + left[r] : left[r]);
      store(row + 16, Accumulate ? load(row + 16) + right[r] : right[r]);
      continue;
    }
    float sums[kPanelWidth]; // a narrower last panel: only C's columns are written
    store(sums, left[r]);
    store(sums + 16, right[r]);
    for (int64_t j = 0; j < width; ++j)
      row[j] = Accumulate ? row[j] + sums[j] : sums[j];
  }
}

/// The rows of op(A) in blocks of six, then the last 1-5, against one panel.
template <bool Accumulate>
void panelColumns(int64_t m, int64_t k, const float *a, int64_t rowStride, int64_t kStride,
                  const float *panel, int64_t width, float *c, int64_t ldc) {
  int64_t r = 0;
  for (; r + kBlockRows <= m; r += kBlockRows)
    block<kBlockRows, Accumulate>(a + r * rowStride, rowStride, kStride, panel, k, width,
                                  c + r * ldc, ldc);
  const float *rest = a + r * rowStride;
  float *out = c + r * ldc;
  switch (m - r) {
  case 1:
    return block<1, Accumulate>(rest, rowStride, kStride, panel, k, width, out, ldc);
  case 2:
    return block<2, Accumulate>(rest, rowStride, kStride, panel, k, width, out, ldc);
  case 3:
    return block<3, Accumulate>(rest, rowStride, kStride, panel, k, width, out, ldc);
  case 4:
    return block<4, Accumulate>(rest, rowStride, kStride, panel, k, width, out, ldc);
  case 5:
    return block<5, Accumulate>(rest, rowStride, kStride, panel, k, width, out, ldc);
  default:
    return;
  }
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
