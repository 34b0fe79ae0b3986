// What the benchmarks measure besides their own loops: wall time, the sgemm
// peak of this machine, and the process's peak memory.
#pragma once

#include "runtime/engine/Gemm.h"
#include "runtime/support/Timing.h"

#include <Eigen/Core>

#include <chrono>

namespace foldc::bench {

using Clock = std::chrono::steady_clock;

using rt::secondsSince;

/// Measured sgemm throughput (GFLOP/s) on square matrices of `n`: the
/// runtime's GEMM (OpenBLAS, faster than Eigen's here) with the threads
/// rt::configureProcess set.
inline double sgemmPeak(int n) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  auto multiply = [&] {
    rt::gemm(rt::Transpose::No, rt::Transpose::No, n, n, n, a.data(), n, b.data(), n, 0.0f,
             c.data(), n);
  };
  multiply(); // warm up
  int reps = 0;
  auto start = Clock::now();
  do {
    multiply();
    ++reps;
  } while (secondsSince(start) < 1.0);
  return 2.0 * n * n * double(n) * reps / secondsSince(start) / 1e9;
}

} // namespace foldc::bench
