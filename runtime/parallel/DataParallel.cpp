// Gradient exchange and parameter agreement across ranks (see DataParallel.h).
#include "runtime/parallel/DataParallel.h"

#include "runtime/support/Timing.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <numeric>

namespace foldc::rt {

namespace {

/// Calls `visit(values, count)` on the gradient of each row of a sparse
/// parameter that this step updates, in parameter order.
template <class Visit> void forEachTouchedRowGradient(ParamStore &params, Visit &&visit) {
  for (int id = 0; id < params.count(); ++id) {
    Param &p = params.at(id);
    if (!p.sparseRows)
      continue;
    size_t width = size_t(p.rowWidth());
    for (int32_t r : p.touchedRows)
      visit(p.grad.data() + size_t(r) * width, width);
  }
}

} // namespace

void GradientExchange::touchUnionOfRows(ParamStore &params, Communicator &comm) {
  // This rank's rows: per sparse parameter, a count then the row numbers.
  rows_.clear();
  for (int id = 0; id < params.count(); ++id) {
    const Param &p = params.at(id);
    if (!p.sparseRows)
      continue;
    rows_.push_back(int32_t(p.touchedRows.size()));
    rows_.insert(rows_.end(), p.touchedRows.begin(), p.touchedRows.end());
  }
  std::vector<int32_t> all = comm.gather(rows_);
  // Rebuilt in rank order, so that every rank lists the rows alike. A row no
  // longer marked keeps its gradient: every row this rank touched is in the union.
  for (int id = 0; id < params.count(); ++id)
    if (params.at(id).sparseRows)
      params.at(id).forgetTouchedRows();
  for (size_t at = 0; at < all.size();) {
    for (int id = 0; id < params.count(); ++id) {
      Param &p = params.at(id);
      if (!p.sparseRows)
        continue;
      size_t count = size_t(all[at++]);
      for (size_t k = 0; k < count; ++k)
        p.touchRow(all[at++]);
    }
  }
}

size_t GradientExchange::sum(ParamStore &params, Communicator &comm) {
  std::span<float> dense = params.denseGradients();
  comm.sum(dense);
  touchUnionOfRows(params, comm);
  touchedRowGradients_.clear();
  forEachTouchedRowGradient(params, [&](const float *g, size_t n) {
    touchedRowGradients_.insert(touchedRowGradients_.end(), g, g + n);
  });
  if (touchedRowGradients_.empty())
    return dense.size();
  comm.sum(touchedRowGradients_);
  const float *in = touchedRowGradients_.data();
  forEachTouchedRowGradient(params, [&](float *g, size_t n) {
    std::memcpy(g, in, n * sizeof(float));
    in += n;
  });
  return dense.size() + touchedRowGradients_.size();
}

GradientExchange::Timed GradientExchange::waitAndSum(ParamStore &params, Communicator &comm) {
  auto waitStart = std::chrono::steady_clock::now();
  comm.barrier();
  auto sumStart = std::chrono::steady_clock::now();
  Timed timed;
  timed.waitSeconds = std::chrono::duration<double>(sumStart - waitStart).count();
  timed.floats = sum(params, comm);
  timed.sumSeconds = secondsSince(sumStart);
  return timed;
}

std::vector<double> lineLengths(const std::string &file, const std::vector<long> &lines) {
  std::ifstream in(file, std::ios::binary);
  std::vector<double> length;
  for (std::string line; std::getline(in, line);)
    length.push_back(double(line.size()));
  std::vector<double> sizes;
  sizes.reserve(lines.size());
  for (long line : lines)
    sizes.push_back(line >= 1 && size_t(line) <= length.size() ? length[size_t(line - 1)] : 1.0);
  return sizes;
}

void broadcastParams(ParamStore &params, Communicator &comm) {
  std::vector<float> values;
  for (int id = 0; id < params.count(); ++id)
    values.insert(values.end(), params.at(id).value.begin(), params.at(id).value.end());
  comm.broadcast(values);
  const float *next = values.data();
  for (int id = 0; id < params.count(); ++id) {
    std::vector<float> &v = params.at(id).value;
    std::memcpy(v.data(), next, v.size() * sizeof(float));
    next += v.size();
  }
}

bool paramsAgree(const ParamStore &params, Communicator &comm) {
  uint64_t digest = 14695981039346656037ull; // FNV-1a over the values' bytes
  for (int id = 0; id < params.count(); ++id) {
    const std::vector<float> &v = params.at(id).value;
    const auto *bytes = reinterpret_cast<const unsigned char *>(v.data());
    for (size_t k = 0; k < v.size() * sizeof(float); ++k)
      digest = (digest ^ bytes[k]) * 1099511628211ull;
  }
  int32_t halves[2] = {int32_t(digest >> 32), int32_t(digest & 0xffffffffu)};
  std::vector<int32_t> all = comm.gather(halves);
  for (size_t at = 2; at < all.size(); at += 2)
    if (all[at] != all[0] || all[at + 1] != all[1])
      return false;
  return true;
}

std::vector<uint32_t> shareOfBatch(std::span<const double> sizes, int rank, int ranks) {
  std::vector<uint32_t> bySize(sizes.size());
  std::iota(bySize.begin(), bySize.end(), 0u);
  std::stable_sort(bySize.begin(), bySize.end(),
                   [&](uint32_t a, uint32_t b) { return sizes[a] > sizes[b]; });
  std::vector<double> work(size_t(std::max(1, ranks)), 0.0);
  std::vector<uint32_t> mine;
  for (uint32_t place : bySize) {
    size_t least = size_t(std::min_element(work.begin(), work.end()) - work.begin());
    work[least] += sizes[place];
    if (least == size_t(rank))
      mine.push_back(place);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

} // namespace foldc::rt
