// Interleaved unfolding and execution, for programs whose unfolding waits on
// computed values (an `if` on a tensor, `loop`, `beam`): each example's
// unfolding is a coroutine (Task.h). The Agenda owns them: which ones wait,
// the example each belongs to, and the rounds. When every one waits, the
// executor runs what is pending as batches, and they resume.
#pragma once

#include "runtime/engine/BatchGraph.h"
#include "runtime/engine/Executor.h"
#include "runtime/engine/Task.h"

#include <coroutine>
#include <span>
#include <vector>

namespace foldc::rt {

class Agenda {
public:
  /// An agenda over `graph`'s examples, whose values `executor` computes;
  /// the executor must be in a forward (Executor::beginForward).
  Agenda(BatchGraph &graph, Executor &executor) : graph_(graph), executor_(executor) {}

  /// Runs `roots` (root j unfolds example j of the graph, begun in order,
  /// and has not started) to their ends. Each round, every root runs until
  /// it waits on a value or finishes; then one executor round computes what
  /// was recorded, so the live instances of every example (and every beam)
  /// at that point run as one batched call per kernel and depth. With
  /// `RunScope::OnlyFor`, a round computes only what the waits need and the
  /// rest stays pending (infer runs what the outputs need at the end, and
  /// nothing else). An example that stops early records nothing more.
  /// Instances recorded after the last wait are left for the caller's last
  /// round.
  template <class T> void run(std::vector<Task<T>> &roots, RunScope scope) {
    for (size_t j = 0; j < roots.size(); ++j) {
      roots[j].bind(*this, int(j));
      resume(roots[j].handle(), int(j));
    }
    while (!waiting_.empty())
      round(scope);
  }

  // ---- for the unfolding coroutines' awaits (untilComputed below)
  bool allComputed(std::span<const ValueRef> refs) const;
  /// A computed value (allComputed of it).
  std::span<const float> value(ValueRef ref) const { return executor_.value(ref); }
  /// `coroutine`, unfolding `example`, waits until `refs` are computed.
  void wait(std::coroutine_handle<> coroutine, int example, std::span<const ValueRef> refs);

private:
  struct Waiting {
    std::coroutine_handle<> coroutine;
    int example;
  };
  /// Runs `coroutine` as `example` until it waits or ends.
  void resume(std::coroutine_handle<> coroutine, int example);
  /// Computes what the waiting coroutines need, then resumes them in the
  /// order they waited.
  void round(RunScope scope);

  BatchGraph &graph_;
  Executor &executor_;
  std::vector<Waiting> waiting_;
  std::vector<ValueRef> awaited_;
};

/// Suspends `coroutine` until `refs` are computed, unless they are: gives
/// whether it suspends. Its agenda comes from its promise (UnfoldingPromise).
template <class Promise>
bool suspendUntilComputed(std::coroutine_handle<Promise> coroutine, std::span<const ValueRef> refs,
                          Agenda *&agenda) {
  const UnfoldingPromise &unfolding = coroutine.promise();
  agenda = unfolding.agenda;
  if (agenda->allComputed(refs))
    return false; // go on at once
  agenda->wait(coroutine, unfolding.example, refs);
  return true;
}

/// `co_await untilComputed(ref)`: the value of `ref`, once the executor has
/// computed it.
struct OneComputed {
  ValueRef ref;
  Agenda *agenda = nullptr;
  bool await_ready() const noexcept { return false; }
  template <class Promise> bool await_suspend(std::coroutine_handle<Promise> coroutine) {
    return suspendUntilComputed(coroutine, std::span<const ValueRef>(&ref, 1), agenda);
  }
  std::span<const float> await_resume() const { return agenda->value(ref); }
};

/// `co_await untilComputed(refs)`: their values, in order, once the executor
/// has computed them all. `refs` must live until then (a local of the
/// coroutine).
struct AllComputed {
  std::span<const ValueRef> refs;
  Agenda *agenda = nullptr;
  bool await_ready() const noexcept { return false; }
  template <class Promise> bool await_suspend(std::coroutine_handle<Promise> coroutine) {
    return suspendUntilComputed(coroutine, refs, agenda);
  }
  std::vector<std::span<const float>> await_resume() const;
};

inline OneComputed untilComputed(ValueRef ref) { return OneComputed{ref}; }
inline AllComputed untilComputed(const std::vector<ValueRef> &refs) { return AllComputed{refs}; }

} // namespace foldc::rt
