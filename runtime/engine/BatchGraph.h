// The batch graph: what unfolding records — kernel instances, their
// arguments, host constants, and which values are losses and metrics.
#pragma once

#include "runtime/engine/Kernel.h"

#include <algorithm>
#include <coroutine>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

namespace foldc::rt {

/// One result of one instance: result `output` of instance `instance`.
struct ValueRef {
  int32_t instance = -1;
  int32_t output = 0;
  bool valid() const { return instance >= 0; }
};

class Executor;

/// Unfolding appends instances here, example by example; the scheduler and
/// executor read it. Arguments must have been added before their users, so
/// creation order is a topological order.
///
/// Programs that decide on computed values unfold in rounds (Agenda.h): the
/// examples' coroutines record instances until each waits on a value; the
/// executor runs what is pending (or only what the waits need, when nothing
/// else is asked for) and the waiting coroutines resume, each as its own
/// example again.
class BatchGraph {
public:
  struct Instance {
    const Kernel *kernel;
    int32_t firstArg, argCount, firstInt, firstFloat;
    uint64_t key; ///< instanceKey(example, ordinal): dropout identity
  };

  /// Starts the next example; following instances belong to it. Its
  /// dropout identity is `identity` (by default its index in this graph):
  /// the same example gets the same masks wherever it sits, e.g. on another
  /// rank's share of a global batch.
  void beginExample() { beginExample(uint32_t(examples_.size())); }
  void beginExample(uint32_t identity);
  int exampleCount() const { return int(examples_.size()); }
  /// Makes example `example` (0-based, in beginExample order) the one that
  /// following instances belong to: a resumed coroutine's example.
  void switchToExample(int example) { current_ = example; }
  int currentExample() const { return current_; }

  /// Records an instance of `kernel`; returns its id.
  int32_t add(const Kernel &kernel, std::span<const ValueRef> args,
              std::span<const int32_t> ints = {}, std::span<const float> floats = {});
  int32_t add(const Kernel &kernel, std::initializer_list<ValueRef> args,
              std::initializer_list<int32_t> ints = {}, std::initializer_list<float> floats = {}) {
    return add(kernel, std::span<const ValueRef>(args.begin(), args.size()),
               std::span<const int32_t>(ints.begin(), ints.size()),
               std::span<const float>(floats.begin(), floats.size()));
  }

  /// Adds a width-1 value to the example's loss.
  void addLoss(ValueRef value) { losses_.push_back(value); }
  /// Emits a width-1 value for metric number `metric`.
  void addMetric(int metric, ValueRef value) { metrics_.push_back({metric, value}); }
  void clear();

  // ---- interleaved unfolding
  /// A coroutine of the current example waits until the executor has
  /// computed the values it awaits.
  struct Waiting {
    std::coroutine_handle<> coroutine;
    int example;
  };
  void suspend(std::coroutine_handle<> coroutine, std::span<const ValueRef> awaited) {
    waiting_.push_back({coroutine, current_});
    awaited_.insert(awaited_.end(), awaited.begin(), awaited.end());
  }
  /// The coroutines waiting since the last call, in the order they suspended.
  std::vector<Waiting> takeWaiting() { return std::exchange(waiting_, {}); }
  /// What they await, all together.
  std::vector<ValueRef> takeAwaited() { return std::exchange(awaited_, {}); }
  bool anyWaiting() const { return !waiting_.empty(); }
  /// Computed values are read from `executor`, which runs this graph.
  void readValuesFrom(const Executor &executor) { executor_ = &executor; }
  /// Whether the executor has computed `instance`.
  bool isComputed(int32_t instance) const;
  /// A computed value (isComputed(ref.instance)).
  std::span<const float> computedValue(ValueRef ref) const;

  size_t size() const { return instances_.size(); }
  const Instance &instance(int32_t id) const { return instances_[id]; }
  std::span<const ValueRef> args(int32_t id) const;
  const int32_t *ints(int32_t id) const { return ints_.data() + instances_[id].firstInt; }
  const float *floats(int32_t id) const { return floats_.data() + instances_[id].firstFloat; }
  const std::vector<ValueRef> &losses() const { return losses_; }
  const std::vector<std::pair<int, ValueRef>> &metrics() const { return metrics_; }

private:
  std::vector<Instance> instances_;
  std::vector<ValueRef> args_;
  std::vector<int32_t> ints_;
  std::vector<float> floats_;
  std::vector<ValueRef> losses_;
  std::vector<std::pair<int, ValueRef>> metrics_;
  /// Per example: its dropout identity and how many instances it has made.
  struct Cursor {
    uint32_t identity = 0, ordinal = 0;
  };
  std::vector<Cursor> examples_;
  int current_ = -1;
  std::vector<Waiting> waiting_;
  std::vector<ValueRef> awaited_;
  const Executor *executor_ = nullptr;
};

/// `co_await untilComputed(graph, refs)`: suspends the unfolding coroutine
/// until the executor has computed `refs` (at once when it has). `refs`
/// need only live until the coroutine suspends: the graph copies them.
struct ComputedAwaiter {
  BatchGraph &graph;
  std::span<const ValueRef> refs;
  bool await_ready() const {
    return std::all_of(refs.begin(), refs.end(),
                       [&](const ValueRef &ref) { return graph.isComputed(ref.instance); });
  }
  void await_suspend(std::coroutine_handle<> coroutine) { graph.suspend(coroutine, refs); }
  void await_resume() const noexcept {}
};
inline ComputedAwaiter untilComputed(BatchGraph &graph, const ValueRef &ref) {
  return {graph, std::span<const ValueRef>(&ref, 1)};
}
inline ComputedAwaiter untilComputed(BatchGraph &graph, const std::vector<ValueRef> &refs) {
  return {graph, refs};
}

} // namespace foldc::rt
