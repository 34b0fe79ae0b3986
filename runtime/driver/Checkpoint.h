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

namespace foldc::rt {

/// Writes the training state after `epoch` to `options.checkpoint`, like
/// --save (a failed write leaves the previous checkpoint).
void writeCheckpoint(const DriverOptions &options, size_t examples, int epoch,
                     const ParamStore &params, Optimizer &optimizer, const Selection &selection,
                     const LearningRateSchedule &schedule);

/// Puts back the checkpoint `options.resume`: its parameters, optimizer state
/// and best dev result; gives the number of epochs it had done. Refuses one
/// written by a run with another optimizer, seed, batch size, data size,
/// selection or learning-rate schedule: the shuffles, dropout masks and steps
/// would not continue.
int readCheckpoint(const DriverOptions &options, size_t examples, ParamStore &params,
                   Optimizer &optimizer, Selection &selection,
                   const LearningRateSchedule &schedule);

} // namespace foldc::rt
