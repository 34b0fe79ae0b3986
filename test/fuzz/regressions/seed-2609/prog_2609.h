// Host functions of the program of seed 2609.
#pragma once
#include <cstdint>
#include <vector>

inline int64_t s2609_wrap(int64_t i) { return ((i % 6) + 6) % 6; }
inline double s2609_mean_of(const std::vector<double> &xs) {
  double sum = 0;
  for (double x : xs)
    sum += x;
  return xs.empty() ? 0.0 : sum / double(xs.size());
}
