// The batch graph: what unfolding records — kernel instances, their
// arguments, host constants, and which values are losses and metrics.
#pragma once

#include "runtime/engine/Kernel.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace foldc::rt {

/// One result of one instance: result `output` of instance `instance`.
struct ValueRef {
  int32_t instance = -1;
  int32_t output = 0;
  bool valid() const { return instance >= 0; }
};

/// Unfolding appends instances here, example by example; the scheduler and
/// executor read it. Arguments must have been added before their users, so
/// creation order is a topological order.
class BatchGraph {
public:
  struct Instance {
    const Kernel *kernel;
    int32_t firstArg, firstInt, firstFloat;
    uint64_t key; ///< instanceKey(example, ordinal): dropout identity
  };

  /// Starts the next example; following instances belong to it. Its
  /// dropout identity is `identity` (by default its index in this graph):
  /// the same example gets the same masks wherever it sits, e.g. on another
  /// rank's share of a global batch.
  void beginExample() { beginExample(uint32_t(examples_)); }
  void beginExample(uint32_t identity);
  int exampleCount() const { return examples_; }

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

  /// Per instance, 1 when `roots` depend on it (a root's own instance
  /// included): what must run to compute them, e.g. outputs without losses.
  std::vector<char> liveFrom(std::span<const ValueRef> roots) const;

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
  int examples_ = 0;
  uint32_t identity_ = 0, ordinal_ = 0;
};

} // namespace foldc::rt
