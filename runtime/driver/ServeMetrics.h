// What `NAME_driver serve` counts, and its Prometheus text form (GET /metrics).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace foldc::rt {

/// Requests by status, examples, batch sizes and request latencies; safe to
/// update from any thread.
class ServeMetrics {
public:
  void countResponse(int status);
  void countRequest(size_t examples, double seconds);
  void countBatch(size_t size);
  /// The Prometheus text exposition format (version 0.0.4).
  std::string text() const;

private:
  /// A cumulative histogram over fixed upper bounds (+Inf implied).
  struct Histogram {
    std::vector<double> bounds;
    std::vector<uint64_t> counts; ///< per bound; the last entry is +Inf
    double sum = 0;
    uint64_t count = 0;
    explicit Histogram(std::vector<double> b) : bounds(std::move(b)), counts(bounds.size() + 1) {}
    void add(double value);
    void write(std::string &out, const std::string &name, const std::string &help) const;
  };

  mutable std::mutex mutex_;
  std::map<int, uint64_t> responses_;
  uint64_t examples_ = 0;
  Histogram batchSizes_{{1, 2, 4, 8, 16, 32, 64, 128, 256}};
  Histogram latencies_{
      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}};
};

} // namespace foldc::rt
