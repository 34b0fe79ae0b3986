// Recording instances during unfolding.
#include "runtime/engine/BatchGraph.h"

#include "runtime/support/Random.h"

#include <cassert>

namespace foldc::rt {

void BatchGraph::beginExample(uint32_t identity) {
  examples_.push_back({identity, 0});
  current_ = int(examples_.size()) - 1;
}

int32_t BatchGraph::add(const Kernel &kernel, std::span<const ValueRef> args,
                        std::span<const int32_t> ints, std::span<const float> floats) {
  [[maybe_unused]] const Kernel::Signature &sig = kernel.signature();
  assert((sig.variadic || args.size() == sig.argWidths.size()) &&
         "argument count differs from the signature");
  assert(ints.size() == size_t(sig.hostInts) && floats.size() == size_t(sig.hostFloats));
  assert(current_ >= 0 && "beginExample() first");
  int32_t id = int32_t(instances_.size());
  Cursor &example = examples_[size_t(current_)];
  instances_.push_back(Instance{&kernel, int32_t(args_.size()), int32_t(args.size()),
                                int32_t(ints_.size()), int32_t(floats_.size()),
                                instanceKey(example.identity, example.ordinal++)});
  for (const ValueRef &a : args) {
    assert(a.valid() && a.instance < id && "arguments are added before their users");
    args_.push_back(a);
  }
  ints_.insert(ints_.end(), ints.begin(), ints.end());
  floats_.insert(floats_.end(), floats.begin(), floats.end());
  return id;
}

std::span<const ValueRef> BatchGraph::args(int32_t id) const {
  const Instance &inst = instances_[id];
  return {args_.data() + inst.firstArg, size_t(inst.argCount)};
}

uint64_t BatchGraph::path() const {
  uint64_t hash = 1469598103934665603ull; // FNV-1a
  auto mix = [&](uint64_t v) {
    hash ^= v;
    hash *= 1099511628211ull;
  };
  for (const Instance &inst : instances_)
    mix(reinterpret_cast<uintptr_t>(inst.kernel));
  for (const ValueRef &a : args_)
    mix(uint64_t(uint32_t(a.instance)) << 32 | uint32_t(a.output));
  for (int32_t i : ints_)
    mix(uint32_t(i));
  for (const ValueRef &l : losses_)
    mix(uint64_t(uint32_t(l.instance)) << 32 | uint32_t(l.output));
  for (const auto &[metric, value] : metrics_)
    mix(uint64_t(uint32_t(metric)) << 48 ^ uint64_t(uint32_t(value.instance)));
  return hash;
}

void BatchGraph::clear() {
  instances_.clear();
  args_.clear();
  ints_.clear();
  floats_.clear();
  losses_.clear();
  metrics_.clear();
  examples_.clear();
  current_ = -1;
}

} // namespace foldc::rt
