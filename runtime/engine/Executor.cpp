// Forward and backward execution over a schedule.
#include "runtime/engine/Executor.h"

#include "runtime/engine/Gemm.h"
#include "runtime/engine/WorkerPool.h"
#include "runtime/support/Timing.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <unordered_map>

namespace foldc::rt {

namespace {
using Clock = std::chrono::steady_clock;

/// Rows [first, last) of `call` (not variadic) as a call of their own: every
/// per-row pointer advanced, the argument and result pointers kept in `args`
/// and `outs`.
ForwardCall rowsOf(const Kernel::Signature &sig, const ForwardCall &call, int first, int last,
                   std::vector<const float *> &args, std::vector<float *> &outs) {
  args.clear();
  outs.clear();
  for (size_t i = 0; i < call.args.size(); ++i)
    args.push_back(call.args[i] + size_t(first) * size_t(sig.argWidths[i]));
  for (size_t j = 0; j < call.outs.size(); ++j)
    outs.push_back(call.outs[j] + size_t(first) * size_t(sig.outWidths[j]));
  ForwardCall slice = call;
  slice.rows = last - first;
  slice.args = args;
  slice.outs = outs;
  slice.hostInts = call.hostInts + size_t(first) * size_t(sig.hostInts);
  slice.hostFloats = call.hostFloats + size_t(first) * size_t(sig.hostFloats);
  slice.instanceKeys = call.instanceKeys + first;
  return slice;
}

/// Runs a forward call with products against weights in `precision`, split
/// by rows across `pool`'s threads when it pays.
void runInParts(WorkerPool *pool, const Kernel &kernel, const ForwardCall &call,
                Precision precision) {
  PrecisionScope scope(precision);
  constexpr int kMinRowsPerPart = 32; // below this, waking a thread costs more than it saves
  int parts = pool && !call.argCounts ? std::min(pool->size(), call.rows / kMinRowsPerPart) : 1;
  if (parts <= 1) {
    kernel.forward(call);
    return;
  }
  pool->run([&](int part) {
    if (part >= parts)
      return;
    PrecisionScope partScope(precision); // a precision is a thread's
    std::vector<const float *> args;
    std::vector<float *> outs;
    ForwardCall slice = rowsOf(kernel.signature(), call, call.rows * part / parts,
                               call.rows * (part + 1) / parts, args, outs);
    slice.saved = nullptr; // parts cannot share one slot: backward recomputes
    kernel.forward(slice);
  });
}

} // namespace

size_t Executor::offsetOf(ValueRef ref) const {
  int32_t b = schedule_.batchOf[ref.instance];
  int width = graph_->instance(ref.instance).kernel->signature().outWidths[ref.output];
  return outOffsets_[placements_[size_t(b)].firstOutput + size_t(ref.output)] +
         size_t(schedule_.rowOf[ref.instance]) * width;
}

std::span<const size_t> Executor::outputOffsets(size_t b) const {
  return {outOffsets_.data() + placements_[b].firstOutput,
          schedule_.batches[b].kernel->signature().outWidths.size()};
}

size_t Executor::outputFloats(size_t b, size_t output) const {
  const Batch &batch = schedule_.batches[b];
  return size_t(batch.rows) * size_t(batch.kernel->signature().outWidths[output]);
}

size_t Executor::newBlock(size_t floats) {
  size_t offset = arenaUsed_;
  arenaUsed_ += floats;
  return offset;
}

std::span<const float> Executor::value(ValueRef ref) const {
  int width = graph_->instance(ref.instance).kernel->signature().outWidths[ref.output];
  return {values_.data() + offsetOf(ref), size_t(width)};
}

std::span<const float> Executor::gradient(ValueRef ref) const {
  int width = graph_->instance(ref.instance).kernel->signature().outWidths[ref.output];
  return {grads_.data() + offsetOf(ref), size_t(width)};
}

void Executor::placeArgs(size_t b) {
  const Batch &batch = schedule_.batches[b];
  const auto &widths = batch.kernel->signature().argWidths;
  Placement &place = placements_[b];
  place.firstArg = argInPlace_.size();
  place.firstArgRow = argOffsets_.size();
  place.firstCount = argCounts_.size();
  if (batch.kernel->signature().variadic) {
    for (int32_t id : schedule_.instances(batch)) {
      std::span<const ValueRef> refs = graph_->args(id);
      argCounts_.push_back(int32_t(refs.size()));
      for (const ValueRef &ref : refs)
        argOffsets_.push_back(offsetOf(ref));
    }
    place.argRows = argOffsets_.size() - place.firstArgRow;
    argInPlace_.push_back(false);
    return;
  }
  const size_t rows = size_t(batch.rows);
  place.argRows = rows;
  argOffsets_.resize(place.firstArgRow + widths.size() * rows);
  size_t *offsets = argOffsets_.data() + place.firstArgRow;
  std::span<const int32_t> instances = schedule_.instances(batch);
  for (size_t r = 0; r < rows; ++r) {
    std::span<const ValueRef> refs = graph_->args(instances[r]);
    for (size_t i = 0; i < widths.size(); ++i)
      offsets[i * rows + r] = offsetOf(refs[i]);
  }
  for (size_t i = 0; i < widths.size(); ++i) {
    const size_t *column = offsets + i * rows;
    bool inPlace = true;
    for (size_t r = 1; r < rows && inPlace; ++r)
      inPlace = column[r] == column[0] + r * size_t(widths[i]);
    argInPlace_.push_back(inPlace);
  }
}

void Executor::gatherArgs(size_t b, std::vector<const float *> &args) {
  const Batch &batch = schedule_.batches[b];
  const auto &widths = batch.kernel->signature().argWidths;
  const Placement &place = placements_[b];
  args.resize(widths.size());
  if (scratch_.size() < widths.size())
    scratch_.resize(widths.size());
  size_t rows = place.argRows;
  for (size_t i = 0; i < widths.size(); ++i) {
    const size_t *offsets = argOffsets_.data() + place.firstArgRow + i * rows;
    if (argInPlace_[place.firstArg + i]) {
      args[i] = values_.data() + offsets[0];
      ++stats_.inPlaceArgs;
      continue;
    }
    ++stats_.gatheredArgs;
    BulkVector<float> &buffer = scratch_[i];
    size_t width = size_t(widths[i]);
    buffer.resize(rows * width);
    for (size_t r = 0; r < rows; ++r)
      std::copy_n(values_.data() + offsets[r], width, buffer.data() + r * width);
    args[i] = buffer.data();
  }
}

void Executor::gatherHost(const Batch &batch) {
  const Kernel::Signature &sig = batch.kernel->signature();
  hostInts_.clear();
  hostFloats_.clear();
  keys_.clear();
  for (int32_t id : schedule_.instances(batch)) {
    hostInts_.insert(hostInts_.end(), graph_->ints(id), graph_->ints(id) + sig.hostInts);
    hostFloats_.insert(hostFloats_.end(), graph_->floats(id), graph_->floats(id) + sig.hostFloats);
    keys_.push_back(graph_->instance(id).key);
  }
}

ForwardCall Executor::callFor(size_t b, std::span<const float *const> args,
                              std::span<float *const> outs) {
  const Batch &batch = schedule_.batches[b];
  const int32_t *argCounts =
      batch.kernel->signature().variadic ? argCounts_.data() + placements_[b].firstCount : nullptr;
  return forwardCall(int(batch.rows), args, outs,
                     HostRows{hostInts_.data(), hostFloats_.data(), keys_.data()}, &context_,
                     argCounts);
}

void Executor::runForward(const Kernel &kernel, const ForwardCall &call) {
  // Many rows whose intermediates are not kept run in tiles: a kernel's
  // temporaries are then one tile's, reused from tile to tile while in
  // cache, instead of gigabytes touched once (the leaves of one tree of 2^17
  // leaves). Rows are independent, so the results do not change.
  constexpr int kTileRows = 1024;
  const Precision precision = options_.training ? Precision::F32 : options_.precision;
  if (call.saved || call.argCounts || call.rows < 2 * kTileRows) {
    runInParts(pool_, kernel, call, precision);
    return;
  }
  const int tiles = (call.rows + kTileRows - 1) / kTileRows;
  std::vector<const float *> args;
  std::vector<float *> outs;
  for (int t = 0; t < tiles; ++t)
    runInParts(pool_, kernel,
               rowsOf(kernel.signature(), call, call.rows * t / tiles, call.rows * (t + 1) / tiles,
                      args, outs),
               precision);
}

void Executor::forward(const BatchGraph &graph, const ExecOptions &options,
                       std::optional<std::span<const ValueRef>> onlyFor) {
  WeightPass pass;
  beginForward(graph, options);
  if (onlyFor) {
    // One round, after which only `onlyFor` is read: every other value's
    // space serves again once its readers have run.
    runInstances(pendingFor(*onlyFor), *onlyFor);
    return;
  }
  runPending();
  endForward();
}

void Executor::beginForward(const BatchGraph &graph, const ExecOptions &options) {
  graph_ = &graph;
  options_ = options;
  context_ = ExecContext{&params_, options.training, options.seed};
  stats_ = ExecStats{};
  schedule_ = Schedule{};
  saved_.clear(); // the placement arrays keep their capacity
  placements_.clear();
  outOffsets_.clear();
  argInPlace_.clear();
  argOffsets_.clear();
  argCounts_.clear();
  arenaUsed_ = 0; // the arena's memory is reused: every value is written before it is read
  firstPending_ = 0;
  objective_ = 0;
  metrics_.clear();
}

void Executor::runPending() {
  std::vector<int32_t> ids;
  for (int32_t id = firstPending_; id < int32_t(graph_->size()); ++id)
    if (!isComputed(id))
      ids.push_back(id);
  firstPending_ = int32_t(graph_->size());
  runInstances(ids);
}

std::vector<int32_t> Executor::pendingFor(std::span<const ValueRef> roots) {
  const int32_t end = int32_t(graph_->size());
  reached_.resize(size_t(end), 0);
  std::vector<int32_t> ids, stack;
  auto reach = [&](int32_t id) {
    if (!isComputed(id) && !reached_[size_t(id)]) {
      reached_[size_t(id)] = 1;
      ids.push_back(id);
      stack.push_back(id);
    }
  };
  for (const ValueRef &root : roots)
    reach(root.instance);
  while (!stack.empty()) {
    int32_t id = stack.back();
    stack.pop_back();
    for (const ValueRef &a : graph_->args(id))
      reach(a.instance);
  }
  for (int32_t id : ids)
    reached_[size_t(id)] = 0;
  std::sort(ids.begin(), ids.end());
  return ids;
}

void Executor::runPendingFor(std::span<const ValueRef> roots) {
  runInstances(pendingFor(roots));
  // What did not run waits for a later round (or for none: the first such
  // instance can stay pending until the end).
  while (firstPending_ < int32_t(graph_->size()) && isComputed(firstPending_))
    ++firstPending_;
}

void Executor::placeOutputs(size_t firstBatch) {
  for (size_t b = firstBatch; b < schedule_.batches.size(); ++b) {
    placements_[b].firstOutput = outOffsets_.size();
    for (size_t j = 0; j < schedule_.batches[b].kernel->signature().outWidths.size(); ++j)
      outOffsets_.push_back(newBlock(outputFloats(b, j)));
  }
}

void Executor::placeOutputsReusing(std::span<const ValueRef> readAfter) {
  const size_t batches = schedule_.batches.size();
  constexpr size_t kKept = SIZE_MAX;
  // The last batch that reads each batch's values (itself when none does),
  // kKept for the values read after the forward.
  std::vector<size_t> lastReader(batches);
  for (size_t b = 0; b < batches; ++b) {
    lastReader[b] = std::max(lastReader[b], b);
    for (int32_t id : schedule_.instances(schedule_.batches[b]))
      for (const ValueRef &a : graph_->args(id)) {
        size_t from = size_t(schedule_.batchOf[size_t(a.instance)]);
        lastReader[from] = std::max(lastReader[from], b);
      }
  }
  for (const ValueRef &ref : readAfter)
    lastReader[size_t(schedule_.batchOf[size_t(ref.instance)])] = kKept;
  // The batches whose space frees, in the order it does (kept ones last).
  std::vector<size_t> freeOrder(batches);
  std::iota(freeOrder.begin(), freeOrder.end(), size_t(0));
  std::stable_sort(freeOrder.begin(), freeOrder.end(),
                   [&](size_t a, size_t b) { return lastReader[a] < lastReader[b]; });
  std::unordered_map<size_t, std::vector<size_t>> freeBlocks; // floats -> offsets
  size_t freed = 0; // freeOrder[0, freed) have given their blocks back
  for (size_t b = 0; b < batches; ++b) {
    for (; freed < batches && lastReader[freeOrder[freed]] < b; ++freed) {
      size_t done = freeOrder[freed];
      std::span<const size_t> blocks = outputOffsets(done);
      for (size_t j = 0; j < blocks.size(); ++j)
        freeBlocks[outputFloats(done, j)].push_back(blocks[j]);
    }
    placements_[b].firstOutput = outOffsets_.size();
    for (size_t j = 0; j < schedule_.batches[b].kernel->signature().outWidths.size(); ++j) {
      std::vector<size_t> &same = freeBlocks[outputFloats(b, j)];
      if (same.empty()) {
        outOffsets_.push_back(newBlock(outputFloats(b, j)));
      } else {
        outOffsets_.push_back(same.back());
        same.pop_back();
      }
    }
  }
}

void Executor::runInstances(std::span<const int32_t> ids,
                            std::optional<std::span<const ValueRef>> onlyFor) {
  auto start = Clock::now();
  const size_t firstBatch = schedule_.batches.size();
  if (options_.batching)
    appendByDepth(schedule_, *graph_, ids);
  else
    appendUnbatched(schedule_, *graph_, ids);
  stats_.schedule += secondsSince(start);
  const size_t batches = schedule_.batches.size();
  stats_.batches = batches;
  stats_.instances += ids.size();

  start = Clock::now();
  placements_.resize(batches);
  if (onlyFor)
    placeOutputsReusing(*onlyFor);
  else
    placeOutputs(firstBatch);
  if (values_.size() < arenaUsed_)
    values_.resize(arenaUsed_);
  stats_.valueFloats = arenaUsed_;
  if (options_.training)
    saved_.resize(batches);
  std::vector<const float *> args;
  std::vector<float *> outs;
  for (size_t b = firstBatch; b < batches; ++b) {
    const Batch &batch = schedule_.batches[b];
    auto gatherStart = Clock::now();
    placeArgs(b);
    gatherArgs(b, args);
    gatherHost(batch);
    stats_.gather += secondsSince(gatherStart);
    outs.clear();
    for (size_t offset : outputOffsets(b))
      outs.push_back(values_.data() + offset);
    ForwardCall call = callFor(b, args, outs);
    call.saved = saved_.empty() ? nullptr : &saved_[b];
    runForward(*batch.kernel, call);
  }
  stats_.forward += secondsSince(start);
}

void Executor::endForward() {
  objective_ = 0;
  metrics_.clear();
  sumLossesAndMetrics();
}

void Executor::sumLossesAndMetrics() {
  for (ValueRef loss : graph_->losses())
    objective_ += value(loss)[0];
  objective_ /= std::max(1, graph_->exampleCount());
  for (const auto &[metric, ref] : graph_->metrics()) {
    if (size_t(metric) >= metrics_.size())
      metrics_.resize(size_t(metric) + 1);
    metrics_[size_t(metric)].first += value(ref)[0];
    metrics_[size_t(metric)].second += 1;
  }
}

void Executor::backward(int examples) {
  WeightPass pass;
  auto start = Clock::now();
  params_.deferWeightGradients();
  grads_.assign(arenaUsed_, 0.0f);
  float seed = 1.0f / float(std::max(1, examples > 0 ? examples : graph_->exampleCount()));
  for (ValueRef loss : graph_->losses())
    grads_[offsetOf(loss)] += seed;
  std::vector<const float *> args, outGrads;
  std::vector<float *> outs, argGrads;
  // Each on a cache line, as every matrix a kernel writes: Eigen computes
  // the elements before a destination's first aligned one with scalar code,
  // whose rounding can differ from the vector code's, so where malloc put a
  // buffer would decide the bits of a training run.
  std::vector<BulkVector<float>> argGradBuffers;
  for (size_t b = schedule_.batches.size(); b-- > 0;) {
    const Batch &batch = schedule_.batches[b];
    const Kernel::Signature &sig = batch.kernel->signature();
    const Placement &place = placements_[b];
    const size_t argRows = place.argRows; // rows of each argument matrix
    auto gatherStart = Clock::now();
    gatherArgs(b, args);
    gatherHost(batch);
    stats_.gather += secondsSince(gatherStart);
    outs.clear();
    outGrads.clear();
    for (size_t offset : outputOffsets(b)) {
      outs.push_back(values_.data() + offset);
      outGrads.push_back(grads_.data() + offset);
    }
    argGradBuffers.resize(std::max(argGradBuffers.size(), sig.argWidths.size()));
    argGrads.clear();
    for (size_t i = 0; i < sig.argWidths.size(); ++i) {
      argGradBuffers[i].assign(argRows * size_t(sig.argWidths[i]), 0.0f);
      argGrads.push_back(argGradBuffers[i].data());
    }
    BackwardCall call;
    static_cast<ForwardCall &>(call) = callFor(b, args, outs);
    call.saved = saved_.empty() ? nullptr : &saved_[b];
    call.outGrads = outGrads;
    call.argGrads = argGrads;
    batch.kernel->backward(call);
    // Scatter: a value used by several instances accumulates every gradient.
    auto scatterStart = Clock::now();
    const size_t *offsets = argOffsets_.data() + place.firstArgRow;
    for (size_t i = 0; i < sig.argWidths.size(); ++i) {
      size_t width = size_t(sig.argWidths[i]);
      for (size_t r = 0; r < argRows; ++r) {
        float *dst = grads_.data() + offsets[i * argRows + r];
        const float *src = argGradBuffers[i].data() + r * width;
        for (size_t k = 0; k < width; ++k)
          dst[k] += src[k];
      }
    }
    stats_.scatter += secondsSince(scatterStart);
  }
  params_.flushDeferredGradients();
  saved_.clear(); // their memory is the next forward's
  stats_.backward = secondsSince(start);
}

} // namespace foldc::rt
