// Fold's depth-based scheduling and the unbatched baseline.
#include "runtime/engine/Scheduler.h"

#include <algorithm>
#include <map>

namespace foldc::rt {

/// Indexes the rows of batches [firstBatch, end) over a graph of `instances`.
static void indexRows(Schedule &schedule, size_t firstBatch, size_t instances) {
  schedule.batchOf.resize(instances, -1);
  schedule.rowOf.resize(instances, -1);
  for (size_t b = firstBatch; b < schedule.batches.size(); ++b) {
    const Batch &batch = schedule.batches[b];
    for (size_t r = 0; r < batch.instances.size(); ++r) {
      schedule.batchOf[batch.instances[r]] = int32_t(b);
      schedule.rowOf[batch.instances[r]] = int32_t(r);
    }
  }
}

void appendByDepth(Schedule &schedule, const BatchGraph &graph, std::span<const int32_t> ids) {
  const size_t firstBatch = schedule.batches.size();
  if (!ids.empty()) {
    const int base = schedule.maxDepth;
    const int32_t first = ids.front();
    // Depth in this round by id - first; 0 for instances of earlier rounds,
    // which are all an instance of the round can read besides its own.
    std::vector<int> depth(size_t(ids.back() - first + 1), 0);
    // (depth, kernel) -> batch index; first appearance fixes the order within a depth.
    std::map<std::pair<int, const Kernel *>, size_t> batchIndex;
    std::vector<Batch> round;
    std::vector<std::pair<int, size_t>> order; // (depth, creation rank) of each batch
    for (int32_t id : ids) {
      int d = 1;
      for (const ValueRef &a : graph.args(id))
        if (a.instance >= first)
          d = std::max(d, depth[size_t(a.instance - first)] + 1);
      depth[size_t(id - first)] = d;
      schedule.maxDepth = std::max(schedule.maxDepth, base + d);
      const Kernel *kernel = graph.instance(id).kernel;
      auto [it, inserted] = batchIndex.emplace(std::make_pair(d, kernel), round.size());
      if (inserted) {
        round.push_back(Batch{kernel, base + d, {}});
        order.emplace_back(d, order.size());
      }
      round[it->second].instances.push_back(id);
    }
    std::vector<size_t> perm(round.size());
    for (size_t i = 0; i < perm.size(); ++i)
      perm[i] = i;
    std::stable_sort(perm.begin(), perm.end(),
                     [&](size_t a, size_t b) { return order[a] < order[b]; });
    for (size_t i : perm)
      schedule.batches.push_back(std::move(round[i]));
  }
  indexRows(schedule, firstBatch, graph.size());
}

void appendUnbatched(Schedule &schedule, const BatchGraph &graph, std::span<const int32_t> ids) {
  size_t firstBatch = schedule.batches.size();
  for (int32_t id : ids)
    schedule.batches.push_back(Batch{graph.instance(id).kernel, id + 1, {id}});
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
