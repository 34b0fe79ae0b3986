// Training checkpoints (`train --checkpoint`, `--resume`): the last
// parameters, the optimizer's state, the epochs done and the best dev result,
// in one safetensors file.
#pragma once

#include "runtime/driver/Options.h"
#include "runtime/driver/Selection.h"
#include "runtime/engine/Optimizers.h"
#include "runtime/engine/Params.h"
#include "runtime/engine/Schedule.h"

#include <cstddef>
#include <string>

namespace foldc::rt {

/// Writes the training state after `epoch` to `options.checkpoint`, like
/// --save (a failed write leaves the previous checkpoint). `replicas` is the
/// run's count of model replicas (ranks, or threads of one process).
void writeCheckpoint(const DriverOptions &options, size_t examples, int epoch,
                     const ParamStore &params, Optimizer &optimizer, const Selection &selection,
                     const LearningRateSchedule &schedule, int replicas);

/// Puts back the checkpoint `options.resume`: its parameters, optimizer state
/// and best dev result; gives the number of epochs it had done. Refuses one
/// written by a run with another optimizer, seed, batch size, data size,
/// selection or learning-rate schedule: the shuffles, dropout masks and steps
/// would not continue. One written with another count of replicas
/// resumes, with a warning: its gradient sums add in another order, so the
/// run goes on close to, not bitwise equal to, an uninterrupted one.
struct Resumed {
  int epochs = 0;      ///< the epochs the checkpoint had done
  std::string warning; ///< empty, or what differs from the run that wrote it
};
Resumed readCheckpoint(const DriverOptions &options, size_t examples, ParamStore &params,
                       Optimizer &optimizer, Selection &selection,
                       const LearningRateSchedule &schedule, int replicas);

} // namespace foldc::rt
