// The engine half of a generated model: parameters, kernels, and running
// batches of examples forward and backward. The generated half (a class
// deriving from ModelBase) unfolds one example into the batch graph.
#pragma once

#include "runtime/engine/Agenda.h"
#include "runtime/engine/BatchGraph.h"
#include "runtime/engine/Executor.h"
#include "runtime/engine/Gemm.h"
#include "runtime/engine/Kernel.h"
#include "runtime/engine/Optimizers.h"
#include "runtime/engine/Params.h"
#include "runtime/engine/Task.h"
#include "runtime/io/Safetensors.h"
#include "runtime/support/Timing.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace foldc::rt {

/// How a batch runs.
struct RunOptions {
  bool batching = true; ///< false: every instance alone, the per-example baseline
  uint64_t seed = 0;    ///< dropout seed (training only)
  /// Example j of the batch draws its dropout masks as example
  /// `exampleIds[j]` (or j when empty): its place in a global batch of which
  /// this process runs a share (data-parallel training).
  std::span<const uint32_t> exampleIds;
  /// The objective whose gradients backward computes is the sum of the
  /// losses divided by this many examples (0: this batch's own): a
  /// data-parallel share's gradients are then its part of the global batch's
  /// mean, and the ranks' gradients add up to it.
  int globalBatch = 0;
  /// Of the products with weights in infer and eval (bf16: Gemm.h's
  /// Precision); a training step is fp32 whatever this says.
  Precision precision = Precision::F32;
};

/// The objective and metrics of some examples.
struct BatchResult {
  int examples = 0;
  double loss = 0; ///< sum of every loss / examples (the training objective)
  /// Per metric, in the order of Model::metricNames(): (sum, emissions).
  std::vector<std::pair<double, int64_t>> metrics;

  /// Accumulates another batch's result (the loss weighted by its examples).
  void add(const BatchResult &other);
  /// The result as numbers that add up across processes: loss x examples,
  /// examples, then each of `metricCount` metrics' sum and emissions.
  std::vector<double> sums(size_t metricCount) const;
  /// The result whose sums() are `sums`.
  static BatchResult fromSums(std::span<const double> sums);
  /// Metric m's mean over its emissions (0 when it was never emitted).
  double metricMean(size_t m) const;
  /// {"examples": n, "loss": l, "METRIC": mean, ...}.
  nlohmann::json toJson(const std::vector<std::string> &metricNames) const;
};

/// What train_step does between the backward pass and the optimizer step:
/// data-parallel training sums the ranks' gradients there, so that every
/// rank takes the same step.
using GradientSum = std::function<void(ParamStore &)>;

/// Seconds of a model's last call outside its executor (whose own are in
/// Executor::stats()).
struct ModelTimes {
  double unfold = 0;    ///< recording the batch graph
  double optimizer = 0; ///< train_step's optimizer step
};

/// JSON of a tensor value of `shape`: a number for a scalar, nested arrays
/// otherwise; `integral` for i32 tensors (argmax), whose values are whole.
nlohmann::json tensorJson(std::span<const float> values, const std::vector<int64_t> &shape,
                          bool integral = false);

/// Appends the tensor handles a value of an output holds (in tensors, tuples,
/// lists and optionals; host values hold none) to `refs`.
template <class T> void collectValueRefs(const T &, std::vector<ValueRef> &) {}
inline void collectValueRefs(const ValueRef &ref, std::vector<ValueRef> &refs) {
  refs.push_back(ref);
}
template <class T> void collectValueRefs(const std::vector<T> &list, std::vector<ValueRef> &refs);
template <class T>
void collectValueRefs(const std::optional<T> &maybe, std::vector<ValueRef> &refs);
template <class... Ts>
void collectValueRefs(const std::tuple<Ts...> &tuple, std::vector<ValueRef> &refs) {
  std::apply([&](const auto &...element) { (collectValueRefs(element, refs), ...); }, tuple);
}
template <class T> void collectValueRefs(const std::vector<T> &list, std::vector<ValueRef> &refs) {
  for (const T &element : list)
    collectValueRefs(element, refs);
}
template <class T>
void collectValueRefs(const std::optional<T> &maybe, std::vector<ValueRef> &refs) {
  if (maybe)
    collectValueRefs(*maybe, refs);
}

template <class T> struct IsTask : std::false_type {};
template <class T> struct IsTask<Task<T>> : std::true_type {};

/// `Derived` provides `Output unfold(const Example &, BatchGraph &) const`
/// (records the example's instances, losses and metrics and gives its output
/// handle) and `nlohmann::json outputJson(const Executor &, const Output &) const`.
/// A model that decides on computed values gives `Task<Output>` instead:
/// its batches unfold and run interleaved, in an Agenda's rounds (Agenda.h).
template <class Derived, class ExampleT, class OutputT> class ModelBase {
public:
  using Example = ExampleT;
  using Output = OutputT;
  /// A batch: pointers, so that shuffling and slicing never copy examples.
  using Batch = std::span<const Example *const>;

  /// Fills every parameter from its initialiser (reproducible from `seed`).
  void init(uint64_t seed) { params_.initialize(seed); }
  /// Reads parameters from a safetensors file; every name and shape must match.
  void load(const std::string &file) { loadParams(params_, file); }
  /// Writes parameters to a safetensors file (the old file survives a failure).
  void save(const std::string &file) const { saveParams(params_, file); }

  /// The output of every example, as JSON. Only what the outputs depend on
  /// runs: losses and metrics are for eval().
  std::vector<nlohmann::json> infer(Batch batch, const RunOptions &options = {}) {
    std::vector<nlohmann::json> out;
    for (const Output &o : runForward(batch, options, false, RunScope::OnlyFor))
      out.push_back(derived().outputJson(executor_, o));
    return out;
  }

  /// Forward and backward over `batch`, `sumGradients` when given, then one
  /// optimizer step. An empty batch (a data-parallel rank's empty share)
  /// adds no gradient but still sums and steps.
  BatchResult train_step(Batch batch, Optimizer &optimizer, const RunOptions &options = {},
                         const GradientSum &sumGradients = {}) {
    BatchResult result;
    if (!batch.empty()) {
      result = forward(batch, options, true);
      executor_.backward(options.globalBatch);
    }
    if (sumGradients)
      sumGradients(params_);
    auto start = std::chrono::steady_clock::now();
    optimizer.step(params_);
    times_.optimizer = secondsSince(start);
    return result;
  }

  /// Loss and metrics of `batch` without training (no dropout).
  BatchResult eval(Batch batch, const RunOptions &options = {}) {
    return forward(batch, options, false);
  }

  /// Forward and backward without an optimizer step: the gradients stay in
  /// params() (for gradient checks and custom training loops).
  BatchResult gradients(Batch batch, const RunOptions &options = {}, bool training = false) {
    params_.zeroGrads();
    BatchResult result = forward(batch, options, training);
    executor_.backward(options.globalBatch);
    return result;
  }

  ParamStore &params() { return params_; }
  const ParamStore &params() const { return params_; }
  /// The path the last run's unfolding took (BatchGraph::path): whether two
  /// runs decided alike.
  uint64_t lastPath() const { return graph_.path(); }
  /// One kernel per batching key of the batch plan.
  std::span<const std::unique_ptr<Kernel>> kernels() const { return kernels_; }
  const std::vector<std::string> &metricNames() const { return metricNames_; }
  const Executor &executor() const { return executor_; }
  const ModelTimes &times() const { return times_; }
  Executor &executor() { return executor_; }

protected:
  ParamStore params_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<std::string> metricNames_;

private:
  const Derived &derived() const { return static_cast<const Derived &>(*this); }

  /// What the generated unfold gives for an example: its Output, or a
  /// Task<Output> when the model's unfolding waits on computed values. (A
  /// template, so that it is looked at once Derived is complete.)
  template <class D = Derived>
  using Unfolded = decltype(std::declval<const D &>().unfold(std::declval<const ExampleT &>(),
                                                             std::declval<BatchGraph &>()));
  static constexpr bool interleaved() { return IsTask<Unfolded<>>::value; }

  static std::vector<ValueRef> valueRefsOf(const std::vector<Output> &outputs) {
    std::vector<ValueRef> refs;
    for (const Output &o : outputs)
      collectValueRefs(o, refs);
    return refs;
  }

  /// Records every example of `batch` into the graph, each as its own
  /// example (its dropout identity its place in the global batch). A
  /// coroutine records nothing until its agenda starts it.
  auto unfoldEach(Batch batch, const RunOptions &options) {
    graph_.clear();
    std::vector<Unfolded<>> unfolded;
    unfolded.reserve(batch.size());
    for (size_t j = 0; j < batch.size(); ++j) {
      graph_.beginExample(options.exampleIds.empty() ? uint32_t(j) : options.exampleIds[j]);
      unfolded.push_back(derived().unfold(*batch[j], graph_));
    }
    return unfolded;
  }

  static ExecOptions execOptions(const RunOptions &options, bool training) {
    ExecOptions exec;
    exec.batching = options.batching;
    exec.training = training;
    exec.seed = options.seed;
    exec.precision = options.precision; // the executor trains in fp32 whatever it is
    return exec;
  }

  /// Unfolds `batch` and runs it forward: everything, the objective and
  /// metrics included (RunScope::All), or only what the outputs need
  /// (OnlyFor, infer). A model that decides on computed values unfolds and
  /// runs in rounds (Agenda.h); the others in one round.
  std::vector<Output> runForward(Batch batch, const RunOptions &options, bool training,
                                 RunScope scope) {
    auto start = std::chrono::steady_clock::now();
    times_ = ModelTimes{};
    auto unfolded = unfoldEach(batch, options);
    std::vector<Output> outputs;
    outputs.reserve(batch.size());
    if constexpr (interleaved()) {
      WeightPass pass; // the weights stay as they are across the rounds
      executor_.beginForward(graph_, execOptions(options, training));
      Agenda(graph_, executor_).run(unfolded, scope);
      for (Task<Output> &root : unfolded)
        outputs.push_back(root.take());
      if (scope == RunScope::OnlyFor) {
        executor_.runPendingFor(valueRefsOf(outputs));
      } else {
        executor_.runPending();
        executor_.endForward();
      }
      const ExecStats &stats = executor_.stats();
      times_.unfold = secondsSince(start) - stats.forward - stats.schedule;
    } else {
      outputs = std::move(unfolded);
      times_.unfold = secondsSince(start);
      std::vector<ValueRef> refs;
      if (scope == RunScope::OnlyFor)
        refs = valueRefsOf(outputs);
      executor_.forward(graph_, execOptions(options, training),
                        scope == RunScope::OnlyFor ? std::optional<std::span<const ValueRef>>(refs)
                                                   : std::nullopt);
    }
    return outputs;
  }

  BatchResult forward(Batch batch, const RunOptions &options, bool training) {
    runForward(batch, options, training, RunScope::All);
    BatchResult result;
    result.examples = int(batch.size());
    result.loss = executor_.objective();
    result.metrics = executor_.metrics();
    result.metrics.resize(metricNames_.size());
    return result;
  }

  BatchGraph graph_;
  Executor executor_{params_};
  ModelTimes times_;
};

} // namespace foldc::rt
