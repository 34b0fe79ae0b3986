// Scheduling: which instances run together, and in what order.
#pragma once

#include "runtime/engine/BatchGraph.h"

#include <span>
#include <vector>

namespace foldc::rt {

/// One batched kernel call: `rows` instances of one kernel, run as rows
/// 0..rows-1; they are Schedule::instances(batch).
struct Batch {
  const Kernel *kernel = nullptr;
  int depth = 0;
  int32_t firstRow = 0; ///< into Schedule::rowInstances
  int32_t rows = 0;
};

struct Schedule {
  std::vector<Batch> batches; ///< in execution order
  /// Every batch's instances, batch after batch: one array, so that a long
  /// chain of one-row batches costs no allocation per step.
  std::vector<int32_t> rowInstances;
  std::vector<int32_t> batchOf; ///< instance -> its batch
  std::vector<int32_t> rowOf;   ///< instance -> its row in that batch
  int maxDepth = 0;

  std::span<const int32_t> instances(const Batch &batch) const {
    return {rowInstances.data() + batch.firstRow, size_t(batch.rows)};
  }
};

/// Fold's rule (Looks et al. 2017, §2): depth = 1 + the deepest argument
/// (an instance without tensor arguments has depth 1); one batch per
/// (kernel, depth); batches run by increasing depth, and within a depth in
/// order of first appearance. Every argument is computed at a smaller depth,
/// so the order is valid, and a value consumed many levels later is read
/// where it was written (no pass-through copies). One change to the rule:
/// an instance nothing reads (a sink: a loss, an output) runs at the last
/// depth, with the other sinks of its kernel.
Schedule scheduleByDepth(const BatchGraph &graph);

/// The per-example baseline: every instance is its own batch of one, in
/// creation order (a topological order).
Schedule scheduleUnbatched(const BatchGraph &graph);

/// A round of interleaved unfolding: schedules instances `ids` (increasing,
/// none scheduled yet) after `schedule`'s batches. Every argument of one of
/// them is either among them or scheduled in an earlier round, already
/// computed: it counts as depth 0 of the round, whose depths continue from
/// the schedule's maxDepth. Instances left out keep batchOf -1.
void appendByDepth(Schedule &schedule, const BatchGraph &graph, std::span<const int32_t> ids);
void appendUnbatched(Schedule &schedule, const BatchGraph &graph, std::span<const int32_t> ids);

} // namespace foldc::rt
