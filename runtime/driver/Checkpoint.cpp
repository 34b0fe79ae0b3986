// Training checkpoints (see Checkpoint.h).
#include "runtime/driver/Checkpoint.h"

#include "runtime/io/Safetensors.h"

#include <map>
#include <stdexcept>
#include <string>

namespace foldc::rt {

namespace {

const std::string kOptimizerPrefix = "optimizer/";

/// What a checkpoint must agree on with the run resuming it, so that the
/// shuffles, the dropout masks and the optimizer's steps continue exactly.
std::map<std::string, std::string> runIdentity(const DriverOptions &options, size_t examples,
                                               const LearningRateSchedule &schedule) {
  return {{"optimizer", options.optimizer},
          {"seed", std::to_string(options.seed)},
          {"batch_size", std::to_string(options.batchSize)},
          {"examples", std::to_string(examples)},
          {"select", options.select},
          {"schedule", schedule.text()},
          {"warmup", std::to_string(schedule.warmup)}};
}

/// What differs between the count of replicas (MPI ranks times threads) of
/// the run that wrote the checkpoint and of this one, or "" (also for
/// checkpoints written before the count was recorded).
std::string replicasChange(const std::string &file,
                           const std::map<std::string, std::string> &metadata, int replicas) {
  auto written = metadata.find("replicas");
  if (written == metadata.end() || written->second == std::to_string(replicas))
    return "";
  return file + ": written by a run of " + written->second +
         " replicas (ranks times threads), this one has " + std::to_string(replicas) +
         ": training goes on from its state, but gradients are summed in another order, so the "
         "result is close to, not bitwise equal to, an uninterrupted run";
}

} // namespace

void writeCheckpoint(const DriverOptions &options, size_t examples, int epoch,
                     const ParamStore &params, Optimizer &optimizer, const Selection &selection,
                     const LearningRateSchedule &schedule, int replicas) {
  std::map<std::string, std::string> metadata = runIdentity(options, examples, schedule);
  metadata["replicas"] = std::to_string(replicas);
  metadata["epoch"] = std::to_string(epoch);
  metadata["best"] = selection.saveState();
  OptimizerStateView state = optimizer.state(params);
  metadata["steps"] = std::to_string(state.steps);
  std::vector<TensorView> tensors = paramViews(params);
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(state.slots.size());
  for (const auto &[name, values] : state.slots) {
    shapes.push_back({int64_t(values->size())});
    tensors.push_back({kOptimizerPrefix + name, &shapes.back(), values});
  }
  saveTensors(tensors, metadata, options.checkpoint);
}

Resumed readCheckpoint(const DriverOptions &options, size_t examples, ParamStore &params,
                       Optimizer &optimizer, Selection &selection,
                       const LearningRateSchedule &schedule, int replicas) {
  const std::string &file = options.resume;
  std::map<std::string, std::string> metadata;
  std::map<std::string, TensorData> tensors = readSafetensors(file, &metadata);
  if (!metadata.count("epoch"))
    throw std::runtime_error(file + ": not a training checkpoint (written by --checkpoint)");
  for (const auto &[key, value] : runIdentity(options, examples, schedule))
    if (metadata[key] != value)
      throw std::runtime_error(file + ": written with " + key + " " + metadata[key] +
                               ", this run has " + value + "; resuming must not change it");
  OptimizerState state;
  state.steps = std::stoll(metadata["steps"]);
  for (auto it = tensors.begin(); it != tensors.end();) {
    if (it->first.rfind(kOptimizerPrefix, 0) == 0) {
      state.slots[it->first.substr(kOptimizerPrefix.size())] = std::move(it->second.values);
      it = tensors.erase(it);
    } else {
      ++it;
    }
  }
  assignParams(params, std::move(tensors), file);
  optimizer.restore(params, std::move(state));
  selection.restoreState(metadata["best"]);
  return {std::stoi(metadata["epoch"]), replicasChange(file, metadata, replicas)};
}

} // namespace foldc::rt
