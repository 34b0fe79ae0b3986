// The examples a command reads (see Dataset.h).
#include "runtime/driver/Dataset.h"

#include "runtime/parallel/DataParallel.h"
#include "runtime/support/Memory.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>

namespace foldc::rt {

std::vector<int32_t> Dataset::indices() const {
  std::vector<int32_t> all(lines.size());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

Dataset loadDataset(Session &session, int set, const std::string &file, long limit) {
  Dataset data;
  data.set = set;
  data.file = file;
  data.lines = session.model.load(set, file, limit);
  if (session.processes.size() > 1)
    data.sizes = lineLengths(file, data.lines);
  if (session.leader())
    std::cerr << file << ": " << data.lines.size() << " examples\n";
  return data;
}

Dataset loadExamples(Session &session, int set, const std::string &file, long limit) {
  Dataset data = loadDataset(session, set, file, limit);
  if (data.lines.empty())
    throw DataError(file + ": no examples (every line is empty)");
  return data;
}

Share shareOf(const Session &session, const Dataset &data, DriverModel::Indices batch) {
  std::vector<double> sizes;
  for (int32_t example : batch)
    sizes.push_back(data.sizes[size_t(example)]);
  Share mine;
  mine.positions = shareOfBatch(sizes, session.processes.rank(), session.processes.size());
  for (uint32_t position : mine.positions)
    mine.examples.push_back(batch[position]);
  return mine;
}

std::string outOfMemory(const Dataset &data, DriverModel::Indices batch) {
  std::vector<long> lines;
  for (int32_t example : batch)
    lines.push_back(data.lines[size_t(example)]);
  std::vector<double> sizes = lineLengths(data.file, lines);
  size_t largest = size_t(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
  char used[32];
  std::snprintf(used, sizeof used, "%.0f MiB", peakResidentMiB());
  return data.file + ":" + std::to_string(lines[largest]) + ": out of memory: a batch of " +
         std::to_string(batch.size()) + " examples whose largest is this one (" +
         std::to_string(long(sizes[largest])) +
         " characters) needed more memory than the process could get, after " + used +
         " resident; run it alone (--batch-size 1), split it, or give the process more "
         "memory (files saved before stay as they were)";
}

} // namespace foldc::rt
