// Products in bf16 (runtime/engine/Bf16Gemm.h, gemmWithWeights under
// PrecisionScope(Bf16)): exactly vdpbf16ps's arithmetic, emulated here in
// scalar code, and a row's result independent of its batch.
#include "runtime/engine/Bf16Gemm.h"
#include "runtime/engine/Gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace foldc::rt {
namespace {

std::vector<float> randomMatrix(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(std::max<size_t>(size, 1));
  for (float &v : values)
    v = uniform(random);
  return values;
}

/// `value` rounded to bf16 (to nearest, ties to even) and back to float.
float roundedToBf16(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  float rounded = 0;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

/// C = A op(B) + beta C as vdpbf16ps computes it: inputs rounded to bf16,
/// for each pair of k (in order) the odd product added to the fp32 sum, then
/// the even one, each addition rounded to fp32 (the products of two bf16 are
/// exact in fp32).
std::vector<float> emulated(int64_t m, int64_t n, int64_t k, const std::vector<float> &a,
                            const std::vector<float> &b, bool transposed, float beta,
                            const std::vector<float> &c) {
  auto bAt = [&](int64_t row, int64_t column) {
    return roundedToBf16(transposed ? b[size_t(column * k + row)] : b[size_t(row * n + column)]);
  };
  std::vector<float> out(size_t(m * n));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t kk = 0; kk < k; kk += 2) {
        if (kk + 1 < k) {
          volatile float odd = roundedToBf16(a[size_t(r * k + kk + 1)]) * bAt(kk + 1, j);
          sum = sum + odd;
        }
        volatile float even = roundedToBf16(a[size_t(r * k + kk)]) * bAt(kk, j);
        sum = sum + even;
      }
      out[size_t(r * n + j)] = beta == 0.0f ? sum : c[size_t(r * n + j)] + sum;
    }
  return out;
}

TEST(Bf16Gemm, IsVdpbf16psArithmeticForEveryShape) {
  if (!bf16Available())
    GTEST_SKIP() << "no AVX-512 BF16 here";
  PrecisionScope bf16(Precision::Bf16);
  for (bool transposed : {false, true})
    for (int64_t m : {1, 5, 6, 7, 13})
      for (int64_t n : {32, 64, 75})
        for (int64_t k : {1, 17, 32, 33, 300})
          for (float beta : {0.0f, 1.0f}) {
            std::vector<float> a = randomMatrix(size_t(m * k), 1),
                               b = randomMatrix(size_t(k * n), 2),
                               c = randomMatrix(size_t(m * n), 3);
            std::vector<float> expected = emulated(m, n, k, a, b, transposed, beta, c);
            WeightPass pass;
            gemmWithWeights(Transpose::No, transposed ? Transpose::Yes : Transpose::No, m, n, k,
                            a.data(), k, b.data(), transposed ? k : n, beta, c.data(), n);
            ASSERT_EQ(c, expected) << "m " << m << " n " << n << " k " << k << " transposed "
                                   << transposed << " beta " << beta;
          }
}

TEST(Bf16Gemm, ARowsProductDoesNotDependOnTheOtherRowsOfItsBatch) {
  if (!bf16Available())
    GTEST_SKIP() << "no AVX-512 BF16 here";
  const int64_t m = 1000, n = 450, k = 300;
  std::vector<float> a = randomMatrix(size_t(m * k), 4), w = randomMatrix(size_t(k * n), 5);
  std::vector<float> batched(size_t(m * n)), alone(static_cast<size_t>(n));
  PrecisionScope bf16(Precision::Bf16);
  setGemmThreads(2); // rows split over threads, too
  gemmWithWeights(Transpose::No, Transpose::No, m, n, k, a.data(), k, w.data(), n, 0.0f,
                  batched.data(), n);
  setGemmThreads(1);
  for (int64_t r = 0; r < m; r += 37) {
    gemmWithWeights(Transpose::No, Transpose::No, 1, n, k, a.data() + r * k, k, w.data(), n, 0.0f,
                    alone.data(), n);
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(batched[size_t(r * n + j)], alone[size_t(j)]) << "row " << r << ", column " << j;
  }
}

TEST(Bf16Gemm, OnlyTheScopeUsesBf16) {
  const int64_t k = 3, n = 32;
  // 1 + 2^-10 is not a bf16: rounded, the product of ones is 3, not 3 + 3 * 2^-10.
  std::vector<float> x(size_t(k), 1.0f + 1.0f / 1024), w(size_t(k * n), 1.0f), y(32);
  auto product = [&] {
    gemmWithWeights(Transpose::No, Transpose::No, 1, n, k, x.data(), k, w.data(), n, 0.0f, y.data(),
                    n);
    return y[0];
  };
  const float exact = 3.0f * (1.0f + 1.0f / 1024);
  EXPECT_EQ(product(), exact);
  if (!bf16Available())
    GTEST_SKIP() << "no AVX-512 BF16 here";
  {
    PrecisionScope bf16(Precision::Bf16);
    EXPECT_EQ(product(), 3.0f);
  }
  EXPECT_EQ(product(), exact);
}

} // namespace
} // namespace foldc::rt
