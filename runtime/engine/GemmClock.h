// Time spent in GEMMs and their floating-point operations, for benchmarks'
// time shares (bench/TreennBench.cpp) and the drivers' --profile. Off by
// default: then a GEMM pays one relaxed atomic load. When on, every GEMM of
// the primitives adds its wall time and its 2·m·n·k operations, summed over
// threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace foldc::rt {

class GemmClock {
public:
  static void enable(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  static void reset() {
    nanoseconds_.store(0, std::memory_order_relaxed);
    flops_.store(0, std::memory_order_relaxed);
  }
  static double seconds() { return double(nanoseconds_.load(std::memory_order_relaxed)) * 1e-9; }
  static double flops() { return double(flops_.load(std::memory_order_relaxed)); }

  /// Times the GEMM of its lifetime, of `flops` operations, when the clock
  /// is enabled.
  class Scope {
  public:
    explicit Scope(int64_t flops) {
      if (enabled_.load(std::memory_order_relaxed)) {
        start_ = Clock::now();
        flops_.fetch_add(flops, std::memory_order_relaxed);
      }
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
  static inline std::atomic<int64_t> flops_{0};
};

} // namespace foldc::rt
