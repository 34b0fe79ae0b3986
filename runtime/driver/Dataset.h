// The examples a command reads (--data, --dev): loading them, locating the
// example behind a failed batch, and each rank's share of a batch.
#pragma once

#include "runtime/driver/Session.h"
#include "runtime/io/Jsonl.h"

#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace foldc::rt {

/// Examples of one file: which dataset of the model holds them, and the line
/// each came from.
struct Dataset {
  int set = 0;
  std::string file;
  std::vector<long> lines;
  /// Data-parallel runs: each example's size, to balance the ranks' shares.
  std::vector<double> sizes;

  /// 0, 1, ..., size - 1.
  std::vector<int32_t> indices() const;
};

/// Reads `file` into the model's dataset `set` (its first `limit` examples
/// when > 0); the leader says how many on stderr.
Dataset loadDataset(Session &session, int set, const std::string &file, long limit);
/// loadDataset, for the commands whose result is a mean over the examples:
/// a file of no examples is an error.
Dataset loadExamples(Session &session, int set, const std::string &file, long limit);

/// This rank's share of a global batch, balanced by the examples' sizes
/// (shareOfBatch). Positions are the examples' places in the batch.
struct Share {
  std::vector<int32_t> examples;
  std::vector<uint32_t> positions;
};
Share shareOf(const Session &session, const Dataset &data, DriverModel::Indices batch);

/// `FILE:LINE: out of memory...` for a batch that ran out of memory, at its
/// largest example, the likeliest cause: running the examples again one by
/// one, as for other errors, would run out again (and then at whichever
/// came first).
std::string outOfMemory(const Dataset &data, DriverModel::Indices batch);

/// Runs `step` on `batch`; when it fails (a word id outside the embedding, a
/// label outside the classes...), finds the first example that fails alone
/// and reports it as `FILE:LINE: what`.
template <class Step>
auto located(Session &session, const Dataset &data, DriverModel::Indices batch, Step &&step)
    -> decltype(step()) {
  try {
    return step();
  } catch (const std::bad_alloc &) {
    session.releaseMemoryReserve(); // room to write the message in
    throw DataError(outOfMemory(data, batch));
  } catch (const std::exception &) {
    for (int32_t example : batch) {
      try {
        session.model.eval(data.set, DriverModel::Indices(&example, 1), RunOptions{});
      } catch (const std::exception &e) {
        throw DataError(data.file + ":" + std::to_string(data.lines[size_t(example)]) + ": " +
                        e.what());
      }
    }
    throw;
  }
}

} // namespace foldc::rt
