// Batch results and output values as JSON (see Model.h).
#include "runtime/model/Model.h"

#include <cmath>

namespace foldc::rt {

void BatchResult::add(const BatchResult &other) {
  int total = examples + other.examples;
  if (total > 0)
    loss = (loss * examples + other.loss * other.examples) / total;
  examples = total;
  if (metrics.size() < other.metrics.size())
    metrics.resize(other.metrics.size());
  for (size_t m = 0; m < other.metrics.size(); ++m) {
    metrics[m].first += other.metrics[m].first;
    metrics[m].second += other.metrics[m].second;
  }
}

std::vector<double> BatchResult::sums(size_t metricCount) const {
  std::vector<double> out = {loss * examples, double(examples)};
  for (size_t m = 0; m < metricCount; ++m) {
    bool emitted = m < metrics.size();
    out.push_back(emitted ? metrics[m].first : 0);
    out.push_back(emitted ? double(metrics[m].second) : 0);
  }
  return out;
}

BatchResult BatchResult::fromSums(std::span<const double> sums) {
  BatchResult result;
  result.examples = int(sums[1]);
  result.loss = result.examples > 0 ? sums[0] / sums[1] : 0;
  for (size_t at = 2; at + 1 < sums.size(); at += 2)
    result.metrics.push_back({sums[at], int64_t(sums[at + 1])});
  return result;
}

nlohmann::json BatchResult::toJson(const std::vector<std::string> &metricNames) const {
  nlohmann::json out = nlohmann::json::object();
  out["examples"] = examples;
  out["loss"] = loss;
  for (size_t m = 0; m < metricNames.size() && m < metrics.size(); ++m)
    out[metricNames[m]] = metricMean(m);
  return out;
}

double BatchResult::metricMean(size_t m) const {
  return m < metrics.size() && metrics[m].second ? metrics[m].first / double(metrics[m].second)
                                                 : 0.0;
}

namespace {

nlohmann::json nested(const float *&values, const std::vector<int64_t> &shape, size_t axis,
                      bool integral) {
  if (axis == shape.size()) {
    float v = *values++;
    return integral ? nlohmann::json(int64_t(std::lround(v))) : nlohmann::json(double(v));
  }
  nlohmann::json out = nlohmann::json::array();
  for (int64_t i = 0; i < shape[axis]; ++i)
    out.push_back(nested(values, shape, axis + 1, integral));
  return out;
}

} // namespace

nlohmann::json tensorJson(std::span<const float> values, const std::vector<int64_t> &shape,
                          bool integral) {
  const float *cursor = values.data();
  return nested(cursor, shape, 0, integral);
}

} // namespace foldc::rt
