// What the two panel GEMMs share (PanelGemm.cpp in fp32, Bf16Gemm.cpp in
// bf16): C's rows in register blocks of six, and a block row's 32 sums
// stored into C.
#pragma once

#include "runtime/engine/PanelGemm.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__AVX512F__)

namespace foldc::rt::panel {

// A GCC/Clang vector type: one AVX-512 register (__m512 is one too). Loads
// and stores go through memcpy, which compiles to unaligned moves: C comes
// at any offset (a pointer to an under-aligned vector typedef is not enough:
// GCC 12 still emitted aligned stores through one).
typedef float Vector __attribute__((vector_size(64)));

inline Vector load(const float *from) {
  Vector v;
  std::memcpy(&v, from, sizeof v);
  return v;
}

inline void store(float *to, Vector v) { std::memcpy(to, &v, sizeof v); }

/// Rows of C per register block.
inline constexpr int kBlockRows = 6;

/// Keeps a panel row's two vectors in registers for a block of 2-4 rows.
/// There GCC 12 otherwise folds their loads into every row's multiply-add,
/// loading the panel row once per row of the block: 4 rows then ran at a
/// third of the FMA rate, load-bound (79 -> 170 GFLOP/s in a 4-row block,
/// the same sums in the same order). One row needs the row once anyway, and
/// 5-6 rows already keep it: there the barrier costs a little.
template <int Rows> inline void holdForRows(Vector &left, Vector &right) {
  if constexpr (Rows >= 2 && Rows <= 4)
    asm("" : "+v"(left), "+v"(right));
}

/// Writes (Accumulate: adds) one block row's 32 sums, `left` and `right`, to
/// C's row at `row`: all 32 columns, or the first `width` of a narrower last panel.
template <bool Accumulate> void storeRow(float *row, Vector left, Vector right, int64_t width) {
  if (width == kPanelWidth) {
    store(row, Accumulate ? load(row) + left : left);
    store(row + 16, Accumulate ? load(row + 16) + right : right);
    return;
  }
  float sums[kPanelWidth]; // only C's columns are written
  store(sums, left);
  store(sums + 16, right);
  for (int64_t j = 0; j < width; ++j)
    row[j] = Accumulate ? row[j] + sums[j] : sums[j];
}

/// Calls block(std::integral_constant<int, Rows>{}, first) over C's m rows:
/// blocks of six from row 0, then one block of the last 1-5.
template <class Block> void forEachRowBlock(int64_t m, const Block &block) {
  int64_t r = 0;
  for (; r + kBlockRows <= m; r += kBlockRows)
    block(std::integral_constant<int, kBlockRows>{}, r);
  switch (m - r) {
  case 1:
    return block(std::integral_constant<int, 1>{}, r);
  case 2:
    return block(std::integral_constant<int, 2>{}, r);
  case 3:
    return block(std::integral_constant<int, 3>{}, r);
  case 4:
    return block(std::integral_constant<int, 4>{}, r);
  case 5:
    return block(std::integral_constant<int, 5>{}, r);
  default:
    return;
  }
}

} // namespace foldc::rt::panel

#endif
