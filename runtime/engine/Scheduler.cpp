// Fold's depth-based scheduling and the unbatched baseline.
#include "runtime/engine/Scheduler.h"

#include <algorithm>
#include <map>

namespace foldc::rt {

static void indexRows(Schedule &schedule, size_t instances) {
  schedule.batchOf.assign(instances, -1);
  schedule.rowOf.assign(instances, -1);
  for (size_t b = 0; b < schedule.batches.size(); ++b) {
    const Batch &batch = schedule.batches[b];
    for (size_t r = 0; r < batch.instances.size(); ++r) {
      schedule.batchOf[batch.instances[r]] = int32_t(b);
      schedule.rowOf[batch.instances[r]] = int32_t(r);
    }
  }
}

static bool isLive(std::span<const char> live, int32_t id) {
  return live.empty() || live[size_t(id)];
}

Schedule scheduleByDepth(const BatchGraph &graph, std::span<const char> live) {
  Schedule schedule;
  std::vector<int> depth(graph.size(), 0);
  // (depth, kernel) -> batch index; first appearance fixes the order within a depth.
  std::map<std::pair<int, const Kernel *>, size_t> batchIndex;
  std::vector<std::pair<int, size_t>> order; // (depth, creation rank) of each batch
  for (int32_t id = 0; id < int32_t(graph.size()); ++id) {
    if (!isLive(live, id))
      continue;
    int d = 1;
    for (const ValueRef &a : graph.args(id))
      d = std::max(d, depth[a.instance] + 1);
    depth[id] = d;
    schedule.maxDepth = std::max(schedule.maxDepth, d);
    const Kernel *kernel = graph.instance(id).kernel;
    auto [it, inserted] = batchIndex.emplace(std::make_pair(d, kernel), schedule.batches.size());
    if (inserted) {
      schedule.batches.push_back(Batch{kernel, d, {}});
      order.emplace_back(d, order.size());
    }
    schedule.batches[it->second].instances.push_back(id);
  }
  std::vector<size_t> perm(schedule.batches.size());
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(),
                   [&](size_t a, size_t b) { return order[a] < order[b]; });
  std::vector<Batch> sorted;
  sorted.reserve(perm.size());
  for (size_t i : perm)
    sorted.push_back(std::move(schedule.batches[i]));
  schedule.batches = std::move(sorted);
  indexRows(schedule, graph.size());
  return schedule;
}

Schedule scheduleUnbatched(const BatchGraph &graph, std::span<const char> live) {
  Schedule schedule;
  schedule.batches.reserve(graph.size());
  for (int32_t id = 0; id < int32_t(graph.size()); ++id)
    if (isLive(live, id))
      schedule.batches.push_back(Batch{graph.instance(id).kernel, id + 1, {id}});
  schedule.maxDepth = int(graph.size());
  indexRows(schedule, graph.size());
  return schedule;
}

} // namespace foldc::rt
