// A command's run (see Session.h): what every command shares, and the
// dispatch to the command.
#include "runtime/driver/Session.h"

#include "runtime/driver/Evaluation.h"
#include "runtime/driver/Inference.h"
#include "runtime/driver/Training.h"
#include "runtime/engine/GemmClock.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace foldc::rt {

RunOptions Session::runOptions() const {
  RunOptions run;
  run.batching = !options.noBatching;
  run.precision = options.precision == "bf16" ? Precision::Bf16 : Precision::F32;
  return run;
}

DriverModel::Indices Session::batchAt(const std::vector<int32_t> &all, size_t at) const {
  size_t n = std::min(all.size() - at, size_t(options.batchSize));
  return DriverModel::Indices(all.data() + at, n);
}

BatchResult Session::summed(const BatchResult &mine) const {
  if (processes.size() == 1)
    return mine;
  std::vector<double> sums = mine.sums(model.metricNames().size());
  processes.sum(sums);
  return BatchResult::fromSums(sums);
}

int flushed() {
  std::cout.flush();
  if (std::cout)
    return 0;
  std::cerr << "error: cannot write the output\n";
  return 1;
}

const char *commandName(Command command) {
  switch (command) {
  case Command::Train:
    return "train";
  case Command::Eval:
    return "eval";
  case Command::Infer:
    return "infer";
  case Command::Check:
    return "check";
  case Command::Serve:
    return "serve";
  }
  return "";
}

namespace {

int runSession(Command command, Session &session) {
  switch (command) {
  case Command::Train:
    return train(session);
  case Command::Eval:
    return eval(session);
  case Command::Infer:
    return infer(session);
  case Command::Check:
    return check(session);
  case Command::Serve:
    return serve(session);
  }
  return 1;
}

/// --profile's line: what the GEMMs took, so that the rest of the command's
/// time (unfolding, scheduling, gathering, other kernel work) is known too.
void reportGemms() {
  double seconds = GemmClock::seconds(), gflop = GemmClock::flops() * 1e-9;
  std::fprintf(stderr, "profile: GEMMs %.3g s, %.4g GFLOP, %.1f GFLOP/s\n", seconds, gflop,
               seconds > 0 ? gflop / seconds : 0.0);
}

} // namespace

int runCommand(Command command, const DriverOptions &options, DriverModel &model,
               Communicator &processes) {
  Session session(options, model, processes);
  if (!options.profile)
    return runSession(command, session);
  GemmClock::reset();
  GemmClock::enable(true);
  int status = runSession(command, session);
  GemmClock::enable(false);
  if (processes.rank() == 0)
    reportGemms();
  return status;
}

} // namespace foldc::rt
