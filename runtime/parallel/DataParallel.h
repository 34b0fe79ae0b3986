// Data-parallel training over a Communicator: each rank runs its share of a
// global batch, then the ranks sum their gradients so that every rank takes
// the same optimizer step a single process would take on the whole batch.
#pragma once

#include "runtime/engine/Params.h"
#include "runtime/parallel/Communicator.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace foldc::rt {

/// Sums the ranks' gradients into every rank's ParamStore. The dense
/// gradients are one block (ParamStore::denseGradients), summed in place by
/// one all-reduce; an embedding's gradient lives in the rows its rank
/// touched: the ranks first exchange those row numbers, and each sums (and
/// then updates) the union of them, in the same order on every rank, packed
/// into a second all-reduce.
class GradientExchange {
public:
  /// Before: `params` hold this rank's part of the gradients of the whole
  /// batch's mean (RunOptions::globalBatch). After: every rank holds the
  /// gradients of that mean. Gives the number of floats sent (each rank's
  /// contribution).
  size_t sum(ParamStore &params, Communicator &comm);

  /// What waitAndSum() spent: waiting for the slowest rank's share, then
  /// summing; and the floats sent.
  struct Timed {
    double waitSeconds = 0, sumSeconds = 0;
    size_t floats = 0;
  };
  /// Waits until every rank has its gradients, then sum(), timing both.
  Timed waitAndSum(ParamStore &params, Communicator &comm);

private:
  /// Marks, on every parameter with sparse rows, the rows that any rank touched.
  void touchUnionOfRows(ParamStore &params, Communicator &comm);

  std::vector<int32_t> rows_;
  std::vector<float> touchedRowGradients_;
};

/// This rank's places in a global batch whose examples have `sizes` (any
/// measure of their work, in batch order), balanced: largest first, each to
/// the rank with the least work so far. Every rank computes the same split;
/// the places come in ascending order.
std::vector<uint32_t> shareOfBatch(std::span<const double> sizes, int rank, int ranks);

/// The length of each example's line in `file` (`lines`: their numbers, from
/// 1), the size shareOfBatch balances: a tree's or a sequence's JSON grows
/// with it, so it stands for the example's work without knowing the model.
std::vector<double> lineLengths(const std::string &file, const std::vector<long> &lines);

/// Gives every rank rank 0's parameter values (one broadcast).
void broadcastParams(ParamStore &params, Communicator &comm);

/// Whether every rank holds the same parameter values, bit for bit (one
/// small gather of a 64-bit digest per rank): data-parallel steps keep them
/// equal, and this checks that they did.
bool paramsAgree(const ParamStore &params, Communicator &comm);

} // namespace foldc::rt
