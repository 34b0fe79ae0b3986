// The runtime's GEMM (runtime/engine/Gemm.h: its AVX-512 panel kernel where it
// applies) against OpenBLAS's cblas_sgemm on one thread, at the treenn
// Tree-LSTM's node-cell shapes: x (rows x 256) @ U (256 x 640) forward and
// dy (rows x 640) @ U^T backward, for the row counts a tree's levels have.
// The runtime's calls run inside one WeightPass, as an executor's pass over
// a schedule's levels: the weights are packed at the first call only.
// Prints microseconds and GFLOP/s per call and the ratio. Where the host has
// AVX-512 BF16, also the forward in bf16 (Bf16Gemm.h) and its speed-up over
// the runtime's fp32 forward.
#include "runtime/engine/Gemm.h"

#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

extern "C" void openblas_set_num_threads(int threads);

namespace {

using Clock = std::chrono::steady_clock;
using foldc::rt::Transpose;

/// Seconds per call of `multiply`, over enough calls for a millisecond or more.
template <class Multiply> double secondsPerCall(int64_t rows, Multiply multiply) {
  int calls = int(20000 / rows) + 10;
  multiply(); // warm: the panels' buffer, the caches
  auto start = Clock::now();
  for (int i = 0; i < calls; ++i)
    multiply();
  return std::chrono::duration<double>(Clock::now() - start).count() / calls;
}

std::vector<float> randomValues(size_t n) {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  std::vector<float> v(n);
  for (float &x : v)
    x = uniform(random);
  return v;
}

} // namespace

int main() {
  const int64_t in = 256, out = 640;
  foldc::rt::setGemmThreads(1);
  openblas_set_num_threads(1);
  std::vector<float> u = randomValues(size_t(in * out)), x = randomValues(256 * in),
                     dy = randomValues(256 * out), y(256 * out), dx(256 * in);
  std::printf("one thread, weights %lld x %lld; us per call (GFLOP/s)\n", (long long)in,
              (long long)out);
  const bool bf16 = foldc::rt::bf16Available();
  std::printf("%5s  %-28s %-28s %-28s %-28s %-28s\n", "rows", "forward OpenBLAS", "forward runtime",
              "backward OpenBLAS", "backward runtime",
              bf16 ? "forward runtime bf16" : "(no bf16 here)");
  for (int64_t rows : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    std::fprintf(stderr, "gemm_bench: %lld rows\n", (long long)rows);
    foldc::rt::WeightPass pass;
    double flops = 2.0 * double(rows * in * out);
    auto forward = [&] {
      foldc::rt::gemmWithWeights(Transpose::No, Transpose::No, rows, out, in, x.data(), in,
                                 u.data(), out, 0.0f, y.data(), out);
    };
    double times[5] = {
        secondsPerCall(rows,
                       [&] {
                         cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(out),
                                     int(in), 1.0f, x.data(), int(in), u.data(), int(out), 0.0f,
                                     y.data(), int(out));
                       }),
        secondsPerCall(rows, forward),
        secondsPerCall(rows,
                       [&] {
                         cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(rows), int(in),
                                     int(out), 1.0f, dy.data(), int(out), u.data(), int(out), 1.0f,
                                     dx.data(), int(in));
                       }),
        secondsPerCall(rows,
                       [&] {
                         foldc::rt::gemmWithWeights(Transpose::No, Transpose::Yes, rows, in, out,
                                                    dy.data(), out, u.data(), out, 1.0f, dx.data(),
                                                    in);
                       }),
        bf16 ? secondsPerCall(rows,
                              [&] {
                                foldc::rt::PrecisionScope scope(foldc::rt::Precision::Bf16);
                                forward();
                              })
             : 0.0,
    };
    std::printf("%5lld", (long long)rows);
    for (double t : times) {
      if (t == 0)
        continue;
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.1f (%.0f)", t * 1e6, flops / t / 1e9);
      std::printf("  %-27s", cell);
    }
    std::printf("  runtime/OpenBLAS: %.2fx forward, %.2fx backward", times[0] / times[1],
                times[2] / times[3]);
    if (bf16)
      std::printf("; bf16/fp32 forward: %.2fx", times[1] / times[4]);
    std::printf("\n");
  }
}
