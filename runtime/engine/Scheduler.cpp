// Fold's depth-based scheduling and the unbatched baseline.
#include "runtime/engine/Scheduler.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace foldc::rt {

/// Indexes the rows of batches [firstBatch, end) over a graph of `instances`.
static void indexRows(Schedule &schedule, size_t firstBatch, size_t instances) {
  schedule.batchOf.resize(instances, -1);
  schedule.rowOf.resize(instances, -1);
  for (size_t b = firstBatch; b < schedule.batches.size(); ++b) {
    std::span<const int32_t> rows = schedule.instances(schedule.batches[b]);
    for (size_t r = 0; r < rows.size(); ++r) {
      schedule.batchOf[rows[r]] = int32_t(b);
      schedule.rowOf[rows[r]] = int32_t(r);
    }
  }
}

/// Each instance's depth in a round (`ids` not empty), by Fold's rule: 1 +
/// the deepest argument of the round (instances of earlier rounds, already
/// computed, count as depth 0). Then every instance no instance of the round
/// reads (a loss, an output: a sink) moves to the round's last depth, where
/// the sinks of one kernel make one batch: a language model's predictions of
/// every position, one GEMM over the vocabulary instead of one per position.
/// Moving a sink later keeps the order valid: nothing waits for it.
static std::vector<int> roundDepths(const BatchGraph &graph, std::span<const int32_t> ids) {
  const int32_t first = ids.front();
  std::vector<int> depth(size_t(ids.back() - first + 1), 0);
  std::vector<bool> read(depth.size(), false);
  int last = 1;
  for (int32_t id : ids) {
    int d = 1;
    for (const ValueRef &a : graph.args(id))
      if (a.instance >= first) {
        d = std::max(d, depth[size_t(a.instance - first)] + 1);
        read[size_t(a.instance - first)] = true;
      }
    depth[size_t(id - first)] = d;
    last = std::max(last, d);
  }
  for (int32_t id : ids)
    if (!read[size_t(id - first)])
      depth[size_t(id - first)] = last;
  return depth;
}

/// Appends the batches of one round (`ids` not empty): one batch per
/// (depth, kernel) of roundDepths.
static void batchRoundByDepth(Schedule &schedule, const BatchGraph &graph,
                              std::span<const int32_t> ids) {
  const int base = schedule.maxDepth;
  const int32_t first = ids.front();
  const std::vector<int> depth = roundDepths(graph, ids);
  // (depth, kernel) -> the round's batch, numbered by first appearance.
  std::map<std::pair<int, const Kernel *>, int32_t> batchIndex;
  std::vector<Batch> round;
  std::vector<int32_t> roundBatchOf(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int d = depth[size_t(ids[i] - first)];
    schedule.maxDepth = std::max(schedule.maxDepth, base + d);
    const Kernel *kernel = graph.instance(ids[i]).kernel;
    auto [it, inserted] = batchIndex.emplace(std::make_pair(d, kernel), int32_t(round.size()));
    if (inserted)
      round.push_back(Batch{kernel, base + d, 0, 0});
    ++round[size_t(it->second)].rows;
    roundBatchOf[i] = it->second;
  }
  // Execution order: by depth, and within a depth by first appearance.
  std::vector<int32_t> order(round.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return round[size_t(a)].depth < round[size_t(b)].depth;
  });
  int32_t nextRow = int32_t(schedule.rowInstances.size());
  for (int32_t i : order) {
    round[size_t(i)].firstRow = nextRow;
    nextRow += round[size_t(i)].rows;
    schedule.batches.push_back(round[size_t(i)]);
  }
  // Each batch's rows in creation order; round[i].firstRow serves as the
  // next free row of batch i.
  schedule.rowInstances.resize(size_t(nextRow));
  for (size_t i = 0; i < ids.size(); ++i)
    schedule.rowInstances[size_t(round[size_t(roundBatchOf[i])].firstRow++)] = ids[i];
}

void appendByDepth(Schedule &schedule, const BatchGraph &graph, std::span<const int32_t> ids) {
  const size_t firstBatch = schedule.batches.size();
  if (!ids.empty())
    batchRoundByDepth(schedule, graph, ids);
  indexRows(schedule, firstBatch, graph.size());
}

void appendUnbatched(Schedule &schedule, const BatchGraph &graph, std::span<const int32_t> ids) {
  size_t firstBatch = schedule.batches.size();
  for (int32_t id : ids) {
    schedule.batches.push_back(
        Batch{graph.instance(id).kernel, id + 1, int32_t(schedule.rowInstances.size()), 1});
    schedule.rowInstances.push_back(id);
  }
  schedule.maxDepth = int(graph.size());
  indexRows(schedule, firstBatch, graph.size());
}

/// Every instance of `graph`, in creation order.
static std::vector<int32_t> allInstances(const BatchGraph &graph) {
  std::vector<int32_t> ids(graph.size());
  for (size_t id = 0; id < ids.size(); ++id)
    ids[id] = int32_t(id);
  return ids;
}

Schedule scheduleByDepth(const BatchGraph &graph) {
  Schedule schedule;
  appendByDepth(schedule, graph, allInstances(graph));
  return schedule;
}

Schedule scheduleUnbatched(const BatchGraph &graph) {
  Schedule schedule;
  appendUnbatched(schedule, graph, allInstances(graph));
  return schedule;
}

} // namespace foldc::rt
