// What the benchmarks measure besides their own loops: wall time, the sgemm
// peak of this machine, and the process's peak memory.
#pragma once

#include <Eigen/Core>

#include <chrono>
#include <sys/resource.h>

namespace foldc::bench {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Measured sgemm throughput (GFLOP/s) on square matrices of `n`, with
/// Eigen's current thread count.
inline double sgemmPeak(int n) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  c.noalias() = a * b; // warm up
  int reps = 0;
  auto start = Clock::now();
  do {
    c.noalias() = a * b;
    ++reps;
  } while (secondsSince(start) < 1.0);
  return 2.0 * n * n * double(n) * reps / secondsSince(start) / 1e9;
}

/// The process's peak resident memory so far, in MiB.
inline double peakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0; // Linux reports KiB
}

} // namespace foldc::bench
