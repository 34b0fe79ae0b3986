// Time spent in GEMMs, for benchmarks' time shares (bench/TreennBench.cpp).
// Off by default: then a GEMM pays one relaxed atomic load. When on, every
// GEMM of the primitives adds its wall time, summed over threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace foldc::rt {

class GemmClock {
public:
  static void enable(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  static void reset() { nanoseconds_.store(0, std::memory_order_relaxed); }
  static double seconds() { return double(nanoseconds_.load(std::memory_order_relaxed)) * 1e-9; }

  /// Times the GEMM of its lifetime when the clock is enabled.
  class Scope {
  public:
    Scope() {
      if (enabled_.load(std::memory_order_relaxed))
        start_ = Clock::now();
    }
    ~Scope() {
      if (start_ != Clock::time_point{})
        nanoseconds_.fetch_add(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count(),
            std::memory_order_relaxed);
    }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point start_{};
  };

private:
  static inline std::atomic<bool> enabled_{false};
  static inline std::atomic<int64_t> nanoseconds_{0};
};

} // namespace foldc::rt
