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
///
/// Programs that decide on computed values unfold in rounds (Agenda.h),
/// which switch the example that instances are recorded for as the
/// examples' coroutines resume.
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
  /// A hash of the path unfolding took: every instance's kernel, arguments
  /// and host ints (ids, labels, tokens), the losses and metrics; not the
  /// host floats. Two runs of one batch that decided alike (loops stopped
  /// at the same step, argmax and beam chose the same tokens) give one
  /// path; a decision that went the other way changes it.
  uint64_t path() const;

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
};

} // namespace foldc::rt
