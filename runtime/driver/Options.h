// What the command line of a generated driver asked for (CommandLine.cpp
// fills it; Session and Checkpoint read it).
#pragma once

#include <cstdint>
#include <string>

namespace foldc::rt {

struct DriverOptions {
  std::string data, dev, params, save, curve, optimizer = "adam";
  std::string select = "loss";    ///< what --save keeps the best of: dev loss, or a dev metric
  std::string checkpoint, resume; ///< train: the training state written each epoch, read to go on
  int epochs = 10, batchSize = 32, threads = 1;
  long limit = 0, devLimit = 0; ///< use only the first N examples (0: all)
  double lr = 0, clip = 0;      ///< lr 0: the optimizer's default
  double weightDecay = 0;
  double step = 1e-2; ///< check: the finite-difference step
  uint64_t seed = 1;
  bool noBatching = false;
  bool allowUnknownFields = false;
  bool init = false; ///< eval, infer: fresh parameters, knowingly
};

} // namespace foldc::rt
