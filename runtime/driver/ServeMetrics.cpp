// Serving metrics (see ServeMetrics.h).
#include "runtime/driver/ServeMetrics.h"

#include <sstream>

namespace foldc::rt {

namespace {

std::string number(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

} // namespace

void ServeMetrics::Histogram::add(double value) {
  size_t bucket = 0;
  while (bucket < bounds.size() && value > bounds[bucket])
    ++bucket;
  ++counts[bucket];
  sum += value;
  ++count;
}

void ServeMetrics::Histogram::write(std::string &out, const std::string &name,
                                    const std::string &help) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= bounds.size(); ++b) {
    cumulative += counts[b];
    std::string le = b < bounds.size() ? number(bounds[b]) : "+Inf";
    out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum " + number(sum) + "\n" + name + "_count " + std::to_string(count) + "\n";
}

void ServeMetrics::countResponse(int status) {
  std::lock_guard lock(mutex_);
  ++responses_[status];
}

void ServeMetrics::countRequest(size_t examples, double seconds) {
  std::lock_guard lock(mutex_);
  examples_ += examples;
  latencies_.add(seconds);
}

void ServeMetrics::countBatch(size_t size) {
  std::lock_guard lock(mutex_);
  batchSizes_.add(double(size));
}

std::string ServeMetrics::text() const {
  std::lock_guard lock(mutex_);
  std::string out = "# HELP foldc_requests_total HTTP responses by status code.\n"
                    "# TYPE foldc_requests_total counter\n";
  uint64_t errors = 0;
  for (const auto &[status, count] : responses_) {
    out += "foldc_requests_total{code=\"" + std::to_string(status) + "\"} " +
           std::to_string(count) + "\n";
    if (status >= 400)
      errors += count;
  }
  out += "# HELP foldc_errors_total HTTP responses with a status of 400 or more.\n"
         "# TYPE foldc_errors_total counter\n"
         "foldc_errors_total " +
         std::to_string(errors) +
         "\n# HELP foldc_examples_total Examples answered by /infer.\n"
         "# TYPE foldc_examples_total counter\n"
         "foldc_examples_total " +
         std::to_string(examples_) + "\n";
  batchSizes_.write(out, "foldc_batch_size", "Examples per batched model call.");
  latencies_.write(out, "foldc_request_seconds", "Latency of /infer requests, in seconds.");
  return out;
}

} // namespace foldc::rt
