// One command of a generated driver as this process runs it: the options,
// the model, and this process's part of the run (a rank of an mpirun, a
// thread replica, or the one process). The commands live in files of their
// own: Training.cpp (train), Evaluation.cpp (eval, check), Inference.cpp
// (infer, serve); the data they read in Dataset.cpp, the parameters they
// start from in InitialParams.cpp.
#pragma once

#include "runtime/driver/Driver.h"
#include "runtime/driver/Options.h"
#include "runtime/parallel/Communicator.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace foldc::rt {

enum class Command { Train, Eval, Infer, Check, Serve };
/// The command's name on the command line.
const char *commandName(Command command);

/// Runs `command` over `model` as this member of `processes`; gives the
/// exit status. Throws on bad data (DataError, located as FILE:LINE) and
/// failed I/O. With --profile, reports the GEMMs' time at the end.
int runCommand(Command command, const DriverOptions &options, DriverModel &model,
               Communicator &processes);

/// What every command reads: the options, the model and the processes.
struct Session {
  Session(const DriverOptions &options, DriverModel &model, Communicator &processes)
      : options(options), model(model), processes(processes) {}

  const DriverOptions options;
  DriverModel &model;
  Communicator &processes;

  /// Rank 0, the one that writes (output, --save, --curve, --checkpoint).
  bool leader() const { return processes.rank() == 0; }
  /// How batches run (--no-batching).
  RunOptions runOptions() const;
  /// The batch of `all` that starts at `at`: at most --batch-size examples.
  DriverModel::Indices batchAt(const std::vector<int32_t> &all, size_t at) const;
  /// Every rank's `mine` summed: examples, losses and metric emissions.
  BatchResult summed(const BatchResult &mine) const;
  /// Gives back the memory set aside (reserved, never touched) for when a
  /// batch runs out of memory, so that reporting it does not run out too.
  void releaseMemoryReserve() { memoryReserve_.reset(); }

private:
  std::unique_ptr<char[]> memoryReserve_{new char[size_t(16) << 20]};
};

/// 0 when standard output took everything written to it (a full disk or a
/// closed pipe is an error, not a silent loss).
int flushed();

} // namespace foldc::rt
