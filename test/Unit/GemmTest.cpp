// The runtime's GEMMs (runtime/engine/Gemm.h): the panel kernel on AVX-512 builds
// and OpenBLAS for the shapes it leaves, against a double-precision sum; the
// bf16 kernel against an emulation of its instruction.
#include "runtime/engine/Gemm.h"
#include "runtime/engine/PanelGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace foldc::rt {
namespace {

struct Shape {
  Transpose ta, tb;
  int64_t m, n, k;
  float beta;
};

std::vector<float> randomMatrix(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(std::max<size_t>(size, 1));
  for (float &v : values)
    v = uniform(random);
  return values;
}

/// C = op(A) op(B) + beta C in double precision, for the same storage.
std::vector<double> reference(const Shape &s, const std::vector<float> &a, int64_t lda,
                              const std::vector<float> &b, int64_t ldb,
                              const std::vector<float> &c) {
  std::vector<double> out(size_t(s.m * s.n));
  for (int64_t r = 0; r < s.m; ++r)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = s.beta * double(c[size_t(r * s.n + j)]);
      for (int64_t kk = 0; kk < s.k; ++kk) {
        double x = s.ta == Transpose::No ? a[size_t(r * lda + kk)] : a[size_t(kk * lda + r)];
        double y = s.tb == Transpose::No ? b[size_t(kk * ldb + j)] : b[size_t(j * ldb + kk)];
        sum += x * y;
      }
      out[size_t(r * s.n + j)] = sum;
    }
  return out;
}

/// Runs `multiply` (gemm or gemmWithWeights) on random matrices of shape `s`
/// and checks every element against reference() to float rounding.
template <class Multiply> void expectProduct(const Shape &s, Multiply multiply) {
  int64_t lda = s.ta == Transpose::No ? s.k : s.m, ldb = s.tb == Transpose::No ? s.n : s.k;
  std::vector<float> a = randomMatrix(size_t(s.m * s.k), 1), b = randomMatrix(size_t(s.k * s.n), 2);
  std::vector<float> c = randomMatrix(size_t(s.m * s.n), 3);
  std::vector<double> expected =
      reference(s, a, std::max<int64_t>(lda, 1), b, std::max<int64_t>(ldb, 1), c);
  multiply(s.ta, s.tb, s.m, s.n, s.k, a.data(), std::max<int64_t>(lda, 1), b.data(),
           std::max<int64_t>(ldb, 1), s.beta, c.data(), s.n);
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(c[i], expected[i], 1e-6 * (1.0 + double(s.k)))
        << "element " << i << " of m " << s.m << " n " << s.n << " k " << s.k << " ta " << int(s.ta)
        << " tb " << int(s.tb) << " beta " << s.beta;
}

/// Every transpose and beta, row counts around the kernel's 6-row blocks,
/// widths of whole 32-column panels, of a narrower last panel (75) and one
/// (5) that OpenBLAS takes, and empty, short and long sums.
std::vector<Shape> shapes() {
  std::vector<Shape> all;
  for (Transpose ta : {Transpose::No, Transpose::Yes})
    for (Transpose tb : {Transpose::No, Transpose::Yes})
      for (int64_t m : {1, 5, 6, 7, 13})
        for (int64_t n : {32, 64, 75, 5})
          for (int64_t k : {0, 1, 17, 256})
            for (float beta : {0.0f, 1.0f})
              all.push_back({ta, tb, m, n, k, beta});
  return all;
}

TEST(Gemm, MatchesADoublePrecisionSumForEveryLayout) {
  for (const Shape &s : shapes())
    expectProduct(s, gemm);
}

TEST(Gemm, WeightsPackedOncePerPassGiveTheSameProducts) {
  WeightPass pass;
  for (const Shape &s : shapes())
    expectProduct(s, gemmWithWeights);
}

TEST(Gemm, ANewPassSeesWeightsChangedSinceTheLast) {
  const int64_t k = 8, n = 32;
  std::vector<float> x(size_t(k), 1.0f), w(size_t(k * n), 1.0f), y(static_cast<size_t>(n));
  {
    WeightPass pass;
    gemmWithWeights(Transpose::No, Transpose::No, 1, n, k, x.data(), k, w.data(), n, 0.0f, y.data(),
                    n);
  }
  EXPECT_EQ(y[0], 8.0f);
  std::fill(w.begin(), w.end(), 2.0f); // an optimizer step, between passes
  WeightPass next;
  gemmWithWeights(Transpose::No, Transpose::No, 1, n, k, x.data(), k, w.data(), n, 0.0f, y.data(),
                  n);
  EXPECT_EQ(y[0], 16.0f);
}

TEST(Gemm, ARowsProductDoesNotDependOnTheOtherRowsOfItsBatch) {
  if (!kPanelGemmBuilt)
    GTEST_SKIP() << "OpenBLAS (no AVX-512 here) promises no such thing";
  // 1-13 rows: every register block size (1-6 rows), alone and as the last
  // block after full ones.
  const int64_t n = 64, k = 256;
  for (int64_t m = 1; m <= 13; ++m) {
    std::vector<float> a = randomMatrix(size_t(m * k), 4), b = randomMatrix(size_t(k * n), 5);
    std::vector<float> batched(size_t(m * n)), alone(static_cast<size_t>(n));
    gemm(Transpose::No, Transpose::No, m, n, k, a.data(), k, b.data(), n, 0.0f, batched.data(), n);
    for (int64_t r = 0; r < m; ++r) {
      gemm(Transpose::No, Transpose::No, 1, n, k, a.data() + r * k, k, b.data(), n, 0.0f,
           alone.data(), n);
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(batched[size_t(r * n + j)], alone[size_t(j)])
            << m << " rows: row " << r << ", column " << j;
    }
  }
}

TEST(Gemm, RowsReadThroughPointersGiveTheProductOfTheCopiedMatrixBitForBit) {
  // A weight's deferred gradient x^T dy reads x's rows where the pass kept
  // them: in any order in memory, at any thread count.
  for (int64_t m : {1, 7, 130})
    for (int64_t n : {5, 64, 75})
      for (int threads : {1, 2}) {
        const int64_t k = 41;
        std::vector<float> a = randomMatrix(size_t(k * m), 9), b = randomMatrix(size_t(k * n), 10);
        std::vector<float> scatteredA(size_t(2 * k * m)), scatteredB(size_t(2 * k * n));
        std::vector<const float *> aRows, bRows;
        for (int64_t kk = 0; kk < k; ++kk) { // row kk at row 2 (k - 1 - kk) of each
          float *row = scatteredA.data() + 2 * (k - 1 - kk) * m;
          std::copy_n(a.begin() + kk * m, m, row);
          aRows.push_back(row);
          row = scatteredB.data() + 2 * (k - 1 - kk) * n;
          std::copy_n(b.begin() + kk * n, n, row);
          bRows.push_back(row);
        }
        std::vector<float> expected = randomMatrix(size_t(m * n), 11), pointed = expected;
        setGemmThreads(threads);
        gemm(Transpose::Yes, Transpose::No, m, n, k, a.data(), m, b.data(), n, 1.0f,
             expected.data(), n);
        gemmPointedRows(m, n, k, aRows.data(), bRows.data(), pointed.data(), n);
        setGemmThreads(1);
        ASSERT_EQ(pointed, expected) << "m " << m << " n " << n << " threads " << threads;
      }
}

/// C for shape `s` on random matrices (beta applied to a random C), by
/// gemm() with `threads` GEMM threads.
std::vector<float> productWithThreads(const Shape &s, int threads) {
  int64_t lda = s.ta == Transpose::No ? s.k : s.m, ldb = s.tb == Transpose::No ? s.n : s.k;
  std::vector<float> a = randomMatrix(size_t(s.m * s.k), 6), b = randomMatrix(size_t(s.k * s.n), 7);
  std::vector<float> c = randomMatrix(size_t(s.m * s.n), 8);
  setGemmThreads(threads);
  gemm(s.ta, s.tb, s.m, s.n, s.k, a.data(), std::max<int64_t>(lda, 1), b.data(),
       std::max<int64_t>(ldb, 1), s.beta, c.data(), s.n);
  setGemmThreads(1);
  return c;
}

TEST(Gemm, ResultsAreTheSameBitForBitAtEveryThreadCount) {
  for (Transpose ta : {Transpose::No, Transpose::Yes})
    for (Transpose tb : {Transpose::No, Transpose::Yes})
      for (int64_t m : {1, 127, 128, 200, 333})
        for (int64_t n : {5, 64, 75})
          for (float beta : {0.0f, 1.0f}) {
            Shape s{ta, tb, m, n, 300, beta};
            std::vector<float> one = productWithThreads(s, 1);
            for (int threads : {2, 3})
              ASSERT_EQ(productWithThreads(s, threads), one)
                  << threads << " threads, m " << m << " n " << n << " ta " << int(ta) << " tb "
                  << int(tb) << " beta " << beta;
          }
}

TEST(Gemm, ConcurrentCallersShareTheThreadsAndGetTheSameProducts) {
  const int64_t m = 256, n = 64, k = 128;
  std::vector<float> a = randomMatrix(size_t(m * k), 9), b = randomMatrix(size_t(k * n), 10);
  std::vector<float> expected(size_t(m * n));
  gemm(Transpose::No, Transpose::No, m, n, k, a.data(), k, b.data(), n, 0.0f, expected.data(), n);
  setGemmThreads(2);
  std::vector<std::vector<float>> results(4, std::vector<float>(size_t(m * n)));
  std::vector<std::thread> callers;
  for (std::vector<float> &c : results)
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round)
        gemm(Transpose::No, Transpose::No, m, n, k, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    });
  for (std::thread &t : callers)
    t.join();
  setGemmThreads(1);
  for (const std::vector<float> &c : results)
    EXPECT_EQ(c, expected);
}

// Products in bf16 (Bf16Gemm.h, gemmWithWeights under PrecisionScope(Bf16)):
// exactly vdpbf16ps's arithmetic, emulated here in scalar code, and a row's
// result independent of its batch.

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
