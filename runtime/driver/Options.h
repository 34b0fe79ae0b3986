// What the command line of a generated driver asked for (CommandLine.cpp
// fills it; Session and Checkpoint read it).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace foldc::rt {

struct DriverOptions {
  std::string data, dev, params, save, curve, optimizer = "adam";
  std::string select = "loss";    ///< what --save keeps the best of: dev loss, or a dev metric
  std::string checkpoint, resume; ///< train: the training state written each epoch, read to go on
  std::string initFrom;           ///< train: safetensors with some of the parameters
  /// train: `LAYER=FILE` pairs: pretrained vectors for an embedding, and the
  /// vocabulary (line N is word id N - 1) that maps them onto its rows.
  std::vector<std::string> vectors, vocab;
  std::string schedule = "constant"; ///< train: the learning-rate schedule (Schedule.h)
  long warmup = 0;                   ///< train: steps of linear warm-up
  int patience = 0; ///< train: stop after this many dev results without a better one (0: never)
  int epochs = 10, batchSize = 32, threads = 1;
  long limit = 0, devLimit = 0; ///< use only the first N examples (0: all)
  double lr = 0, clip = 0;      ///< lr 0: the optimizer's default
  /// train: "mean" divides the batch's summed losses by its examples, "sum" not.
  std::string lossReduction = "mean";
  double weightDecay = -1; ///< below 0: the optimizer's default (OptimizerKind)
  double step = 1e-2;      ///< check: the finite-difference step
  uint64_t seed = 1;
  bool noBatching = false;
  /// eval, infer, serve: "f32", or "bf16" for the products with weights.
  std::string precision = "f32";
  bool profile = false; ///< train, eval, infer, check: report the GEMMs' time and operations
  bool allowUnknownFields = false;
  bool init = false; ///< eval, infer: fresh parameters, knowingly
  /// serve: where to listen; infer --data - and serve: the dynamic batching
  /// (a batch of at most --batch-size examples waits at most maxWaitMicros).
  std::string host = "127.0.0.1";
  int port = 8080;
  long maxWaitMicros = 2000;
  long maxQueue = 4096;
  long maxBodyBytes = 1 << 20;
  int httpThreads = 4;
  long maxConnections = 10000;
  long readTimeoutMs = 5000; ///< serve: a client silent this long is disconnected
  long requestTimeoutMs = 30000;
  long idleTimeoutMs = 10000;
  long drainMs = 1000;
};

/// `LAYER=FILE` as {LAYER, FILE}, split at the first '=' (FILE is empty
/// without one).
inline std::pair<std::string, std::string> splitAssignment(const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos)
    return {text, ""};
  return {text.substr(0, eq), text.substr(eq + 1)};
}

} // namespace foldc::rt
