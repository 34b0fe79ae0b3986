// The commands of a generated driver that run the model: train (the
// training loop: shuffles, steps, dev evaluation, --save, --curve and
// checkpoints), eval, infer and check.
#pragma once

#include "runtime/driver/Driver.h"
#include "runtime/driver/Options.h"
#include "runtime/parallel/Communicator.h"

namespace foldc::rt {

enum class Command { Train, Eval, Infer, Check, Serve };

/// Runs `command` over `model` as this member of `processes` (a rank of an
/// mpirun, a thread replica, or the one process); gives the exit status.
/// Throws on bad data (DataError, located as FILE:LINE) and failed I/O.
int runCommand(Command command, const DriverOptions &options, DriverModel &model,
               Communicator &processes);

} // namespace foldc::rt
