// Execution of a batch graph: forward, backward, losses and metrics.
#pragma once

#include "runtime/engine/BatchGraph.h"
#include "runtime/engine/Gemm.h"
#include "runtime/engine/Params.h"
#include "runtime/engine/Scheduler.h"
#include "runtime/support/BulkVector.h"

#include <optional>
#include <span>
#include <vector>

namespace foldc::rt {

struct ExecOptions {
  bool batching = true;  ///< false: every instance alone (the test oracle)
  bool training = false; ///< enables dropout
  uint64_t seed = 0;     ///< dropout seed
  /// Of the products with weights (Gemm.h), when not training: training's
  /// forward and backward are fp32.
  Precision precision = Precision::F32;
};

/// Which recorded instances a forward runs: all of them, or only those that
/// some values depend on (`onlyFor`: infer runs what its outputs and
/// decisions need, and nothing else).
enum class RunScope { All, OnlyFor };

class WorkerPool;

/// Timings of the last forward/backward, in seconds: `forward` and
/// `backward` are the whole passes after scheduling; `gather` (argument
/// copies, both passes) and `scatter` (argument gradients) are parts of them.
struct ExecStats {
  double schedule = 0, forward = 0, backward = 0, gather = 0, scatter = 0;
  size_t batches = 0, instances = 0;
  size_t inPlaceArgs = 0, gatheredArgs = 0; ///< argument matrices read in place vs copied
  size_t valueFloats = 0;                   ///< the value arena's size at the end
};

/// Runs a BatchGraph: schedules it, gathers each batch's arguments into
/// contiguous matrices, calls the kernels, and keeps every value (row-major,
/// one block per batch and result) for the backward pass and for reading.
class Executor {
public:
  explicit Executor(ParamStore &params) : params_(params) {}
  /// Forward calls of large batches split their rows across `pool`'s
  /// threads (rows are independent, so results do not change). Backward
  /// stays on one thread: parameter gradients are shared by all rows.
  void setWorkerPool(WorkerPool *pool) { pool_ = pool; }

  /// With `onlyFor`, only the instances those values depend on run, no
  /// objective or metrics are computed, and only those values can be read
  /// after it: the others' space is reused as the forward goes (infer:
  /// outputs without losses, in memory that does not grow with a chain).
  void forward(const BatchGraph &graph, const ExecOptions &options,
               std::optional<std::span<const ValueRef>> onlyFor = std::nullopt);

  // The forward pass in rounds, for interleaved unfolding (Agenda.h): begin,
  // then runPending or runPendingFor whenever the unfolding waits, then
  // endForward. Values of every round stay for reading and for one backward
  // over all of them.
  void beginForward(const BatchGraph &graph, const ExecOptions &options);
  /// Schedules and runs every instance recorded and not run yet. The caller
  /// holds a WeightPass (Gemm.h) across the rounds: weights are packed once.
  void runPending();
  /// Schedules and runs what `roots` depend on among the instances not run
  /// yet. The others wait for a later round, or never run: in infer, what no
  /// decision and no output reads (a teacher-forced loss) costs nothing.
  void runPendingFor(std::span<const ValueRef> roots);
  /// The objective and metrics, after the last round.
  void endForward();
  /// Whether `instance` has been scheduled and computed.
  bool isComputed(int32_t instance) const {
    return size_t(instance) < schedule_.batchOf.size() && schedule_.batchOf[size_t(instance)] >= 0;
  }
  /// After a forward without `onlyFor`: back-propagates the objective: the
  /// sum of every loss divided by `examples` (0: the graph's own number of
  /// examples). Accumulates parameter gradients in the ParamStore.
  void backward(int examples = 0);

  /// The value `ref` after forward: its signature width of floats.
  std::span<const float> value(ValueRef ref) const;
  /// Gradient of the objective with respect to `ref`, after backward.
  std::span<const float> gradient(ValueRef ref) const;
  /// Sum of losses / number of examples.
  double objective() const { return objective_; }
  /// Per metric id: (sum, count) of its emissions.
  const std::vector<std::pair<double, int64_t>> &metrics() const { return metrics_; }
  const Schedule &schedule() const { return schedule_; }
  const ExecStats &stats() const { return stats_; }

private:
  /// Where `ref` lives in the value (and gradient) arena.
  size_t offsetOf(ValueRef ref) const;
  /// Finds where batch `b`'s arguments live (its Placement's argument ranges).
  void placeArgs(size_t b);
  /// Arena offsets of batch `b`'s outputs.
  std::span<const size_t> outputOffsets(size_t b) const;
  /// Floats of batch `b`'s output `output`.
  size_t outputFloats(size_t b, size_t output) const;
  /// A new block of `floats` at the arena's end.
  size_t newBlock(size_t floats);
  /// Pointers to each argument matrix of batch `b`: read in place when the
  /// rows are already contiguous and in order, else gathered into scratch.
  void gatherArgs(size_t b, std::vector<const float *> &args);
  void gatherHost(const Batch &batch);
  /// The objective and metrics from the graph's losses and metrics.
  void sumLossesAndMetrics();
  /// What `roots` depend on among the instances not run yet, in creation order.
  std::vector<int32_t> pendingFor(std::span<const ValueRef> roots);
  /// Schedules and runs instances `ids` (increasing, not run yet). With
  /// `onlyFor` (the only round of a forward, after which only those values
  /// are read), the space of every other value serves again.
  void runInstances(std::span<const int32_t> ids,
                    std::optional<std::span<const ValueRef>> onlyFor = std::nullopt);
  /// Arena offsets for the outputs of batches [firstBatch, end), each new.
  void placeOutputs(size_t firstBatch);
  /// Arena offsets for the outputs of every batch (one round), a value's
  /// block given to a later batch's output of the same size once every batch
  /// that reads it has run: a long chain's inference keeps no values but
  /// the ones read after (`onlyFor`), instead of one per step.
  void placeOutputsReusing(std::span<const ValueRef> readAfter);
  /// The call of batch `b` over gathered arguments and host data.
  ForwardCall callFor(size_t b, std::span<const float *const> args, std::span<float *const> outs);

  /// Runs a forward call: in tiles of rows when it has many and keeps
  /// nothing for backward, each tile split by rows across the pool when it pays.
  void runForward(const Kernel &kernel, const ForwardCall &call);

  ParamStore &params_;
  WorkerPool *pool_ = nullptr;
  const BatchGraph *graph_ = nullptr;
  ExecOptions options_;
  ExecContext context_;
  Schedule schedule_;
  /// Where batch b's values and arguments live: ranges of the flat arrays
  /// below, so that a chain's steps (batches of one row) cost no allocation
  /// each. Arguments are found once in forward and used again by
  /// backward's gathers and scatters.
  struct Placement {
    size_t firstOutput = 0; ///< into outOffsets_, one per output
    size_t firstArg = 0;    ///< into argInPlace_, one per argument matrix
    size_t firstArgRow = 0; ///< into argOffsets_: argRows per argument, argument-major
    /// Rows of each argument matrix: the batch's rows, or all a variadic
    /// batch's arguments (its one argument's rows, row after row).
    size_t argRows = 0;
    size_t firstCount = 0; ///< into argCounts_, one per row of a variadic batch
  };
  std::vector<Placement> placements_;
  std::vector<size_t> outOffsets_; ///< arena offset of each output block
  std::vector<char> argInPlace_;   ///< whether an argument matrix is read in place
  std::vector<size_t> argOffsets_; ///< arena offset of each argument row
  std::vector<int32_t> argCounts_; ///< a variadic batch's arguments per row
  BulkVector<float> values_;       ///< every value is written before it is read
  std::vector<float> grads_;
  size_t arenaUsed_ = 0; ///< floats of values_ the current forward uses
  /// Every instance before it has been computed (runPendingFor can leave
  /// some not run: runPending runs those after it).
  int32_t firstPending_ = 0;
  std::vector<char> reached_;              ///< runPendingFor's marks, all 0 between calls
  std::vector<BulkVector<float>> scratch_; ///< gathered argument matrices
  /// Per batch, what its kernel's forward kept for backward (training only).
  std::vector<std::unique_ptr<SavedValues>> saved_;
  std::vector<int32_t> hostInts_;
  std::vector<float> hostFloats_;
  std::vector<uint64_t> keys_;
  double objective_ = 0;
  std::vector<std::pair<double, int64_t>> metrics_;
  ExecStats stats_;
};

} // namespace foldc::rt
