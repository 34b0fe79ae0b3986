// Interleaved unfolding and execution, for programs whose unfolding waits on
// computed values (an `if` on a tensor, `loop`, `beam`): each example's
// unfolding is a coroutine (Task.h); when every one of them waits, the
// executor runs what is pending as batches, and they resume.
#pragma once

#include "runtime/engine/BatchGraph.h"
#include "runtime/engine/Executor.h"
#include "runtime/engine/Task.h"

#include <vector>

namespace foldc::rt {

/// Runs `roots` (root j unfolds example j of `graph`, begun in order, and
/// has not started) to their ends. Each round, every root runs until it
/// waits on a value or finishes; then one executor round computes what was
/// recorded, so the live instances of every example (and every beam) at that
/// point run as one batched call per kernel and depth. With `onlyAwaited`,
/// a round computes only what the waits need, and the rest stays pending
/// (infer runs what the outputs need at the end, and nothing else). An
/// example that stops early simply records nothing more. The executor must
/// be in a forward (beginForward); instances recorded after the last wait
/// are left for the caller's last round.
template <class T>
void runAgenda(BatchGraph &graph, Executor &executor, std::vector<Task<T>> &roots,
               bool onlyAwaited = false) {
  graph.readValuesFrom(executor);
  for (size_t j = 0; j < roots.size(); ++j) {
    graph.switchToExample(int(j));
    roots[j].start();
  }
  while (graph.anyWaiting()) {
    std::vector<ValueRef> awaited = graph.takeAwaited();
    if (onlyAwaited)
      executor.runPendingFor(awaited);
    else
      executor.runPending();
    for (const BatchGraph::Waiting &w : graph.takeWaiting()) {
      graph.switchToExample(w.example);
      w.coroutine.resume();
    }
  }
}

} // namespace foldc::rt
