// The options of a generated driver's commands (see CommandOptions.h).
#include "runtime/driver/CommandOptions.h"

#include "runtime/driver/Selection.h"
#include "runtime/engine/Gemm.h"
#include "runtime/engine/Optimizers.h"
#include "runtime/engine/Schedule.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

namespace foldc::rt {

namespace {

/// A finite number (CLI11's range checks let NaN and infinities through).
const CLI::Validator kFinite(
    [](std::string &text) {
      double v = 0;
      try {
        v = std::stod(text);
      } catch (const std::exception &) {
        return std::string("not a number: ") + text;
      }
      return std::isfinite(v) ? std::string() : "not a finite number: " + text;
    },
    "FINITE");

/// A non-negative integer up to `largest`, written without a sign: CLI11
/// would wrap -1 to 2^64 - 1 and take 10^20 as the largest value it can hold.
CLI::Validator unsignedUpTo(uint64_t largest) {
  return CLI::Validator(
      [largest](std::string &text) {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return "expected a non-negative integer, found " + text;
        uint64_t value = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc::result_out_of_range || value > largest)
          return "expected an integer at most " + std::to_string(largest) + ", found " + text;
        return std::string();
      },
      "UINT");
}
/// A count (held in a signed 64-bit integer).
const CLI::Validator kUnsigned = unsignedUpTo(uint64_t(std::numeric_limits<int64_t>::max()));
/// A seed: any 64-bit unsigned value.
const CLI::Validator kSeed = unsignedUpTo(std::numeric_limits<uint64_t>::max());

/// `LAYER=FILE`.
const CLI::Validator kAssignment(
    [](std::string &text) {
      auto [layer, file] = splitAssignment(text);
      return !layer.empty() && !file.empty() ? std::string()
                                             : "expected LAYER=FILE, found '" + text + "'";
    },
    "LAYER=FILE");

/// A --schedule (its epochs are checked against the run by train).
const CLI::Validator kSchedule(
    [](std::string &text) {
      std::string error;
      LearningRateSchedule::parse(text, 1, 1, 0, &error);
      return error;
    },
    "SCHEDULE");

/// The options of every command that reads --data.
void addDataOptions(CLI::App *cmd, DriverOptions &options) {
  cmd->add_option("--data", options.data,
                  "JSON Lines examples (infer: - reads standard input and answers each line "
                  "as it comes)")
      ->required();
  cmd->add_option("--params", options.params, "safetensors parameters to start from");
  cmd->add_option("--batch-size", options.batchSize, "examples per batch (default 32)")
      ->check(kUnsigned & CLI::Range(1, 1 << 30));
  cmd->add_option("--threads", options.threads,
                  "threads (default 1): train and eval run this many replicas of the model, "
                  "each on its share of every batch; infer and check (and every command under "
                  "mpirun) share the GEMMs")
      ->check(kUnsigned & CLI::Range(1, 1024));
  cmd->add_option("--seed", options.seed, "initialisation, shuffling and dropout seed (default 1)")
      ->check(kSeed);
  cmd->add_option("--limit", options.limit, "use only the first N examples of --data (0: all)")
      ->check(kUnsigned);
  cmd->add_flag("--no-batching", options.noBatching, "run every instance alone (the baseline)");
  cmd->add_flag("--profile", options.profile,
                "at the end, print on stderr the time spent in matrix products (GEMMs), "
                "their operations and rate, summed over threads");
  cmd->add_flag("--allow-unknown-fields", options.allowUnknownFields,
                "ignore record fields the data types do not declare (default: an error)");
}

/// Evaluating or running untrained parameters is rarely meant: it is asked for.
void addInitFlag(CLI::App *cmd, DriverOptions &options, const std::string &what) {
  cmd->add_flag("--init", options.init, what)->excludes(cmd->get_option("--params"));
}

/// eval, infer and serve: the arithmetic of the products with weights.
void addPrecisionOption(CLI::App *cmd, DriverOptions &options) {
  cmd->add_option("--precision", options.precision,
                  "f32 (default), or bf16: the weights of linear layers and the rows they "
                  "multiply rounded to bfloat16, their products summed in fp32, everything "
                  "else fp32 (needs a CPU with AVX-512 BF16)")
      ->check(CLI::IsMember({"f32", "bf16"}));
}

/// How infer --data - and serve form batches of what arrives.
void addBatchingOptions(CLI::App *cmd, DriverOptions &options) {
  cmd->add_option("--max-wait-us", options.maxWaitMicros,
                  "dynamic batching: how long a batch waits for more examples, in "
                  "microseconds (default 2000); --batch-size is the largest batch")
      ->check(kUnsigned & CLI::Range(0L, 60L * 1000 * 1000));
}

/// train's optimizer and learning rate.
void addOptimizerOptions(CLI::App *train, DriverOptions &options) {
  std::vector<std::string> optimizers;
  std::string defaultRates;
  for (const OptimizerKind &kind : optimizerKinds()) {
    optimizers.emplace_back(kind.name);
    std::ostringstream rate;
    rate << kind.defaultLearningRate;
    defaultRates += (defaultRates.empty() ? "" : ", ") + std::string(kind.name) + " " + rate.str();
  }
  train
      ->add_option("--optimizer", options.optimizer,
                   "one of: " + CLI::detail::join(optimizers) + " (default adam)")
      ->check(CLI::IsMember(optimizers));
  train->add_option("--lr", options.lr, "learning rate (default: " + defaultRates + ")")
      ->check(kFinite & CLI::PositiveNumber);
  train
      ->add_option("--loss-reduction", options.lossReduction,
                   "mean (default): the objective is the batch's summed losses divided by its "
                   "examples; sum: not divided (DyNet's benchmarks), as a learning rate times "
                   "the batch size")
      ->check(CLI::IsMember({"mean", "sum"}));
  train->add_option("--clip", options.clip, "clip gradients to this global L2 norm (default: none)")
      ->check(kFinite & CLI::NonNegativeNumber);
  train
      ->add_option("--weight-decay", options.weightDecay,
                   "weight decay (default 0; adamw 0.01): adds this times each weight to its "
                   "gradient (L2), or for adamw shrinks each weight by lr times this (decoupled)")
      ->check(kFinite & CLI::NonNegativeNumber);
  train
      ->add_option("--schedule", options.schedule,
                   "learning-rate schedule: constant (default), step:EPOCHS:FACTOR (multiply the "
                   "rate by FACTOR every EPOCHS epochs) or cosine[:EPOCHS] (decay to 0 over "
                   "EPOCHS epochs, by default --epochs)")
      ->check(kSchedule);
  train
      ->add_option("--warmup", options.warmup,
                   "raise the learning rate linearly over this many first steps (default 0)")
      ->check(kUnsigned);
}

/// train's starting parameters beyond --params: --init-from, --vectors.
void addStartOptions(CLI::App *train, DriverOptions &options) {
  train->add_option("--init-from", options.initFrom,
                    "set the parameters this safetensors file holds (some or all of them; the "
                    "others are initialised from --seed); reports which");
  train
      ->add_option("--vectors", options.vectors,
                   "LAYER=FILE: initialise embedding LAYER from pretrained vectors (GloVe or "
                   "word2vec text: a word and its numbers per line), mapped by --vocab")
      ->check(kAssignment);
  train
      ->add_option("--vocab", options.vocab,
                   "LAYER=FILE: the vocabulary of embedding LAYER's word ids: line N of FILE is "
                   "the word of id N - 1 (with --vectors)")
      ->check(kAssignment);
  train->get_option("--init-from")->excludes(train->get_option("--params"));
}

/// train's files: --curve, --checkpoint, --resume.
void addTrainingFileOptions(CLI::App *train, DriverOptions &options) {
  train->add_option("--curve", options.curve,
                    "write the learning curve here as CSV (appended to on --resume)");
  train->add_option("--checkpoint", options.checkpoint,
                    "after each epoch, write the training state here: the last parameters, the "
                    "optimizer's state, the epochs done (for --resume)");
  train
      ->add_option("--resume", options.resume,
                   "go on from a --checkpoint file: its parameters, optimizer state and epoch "
                   "count; the shuffles and dropout continue as in one run (--epochs is the total)")
      ->excludes(train->get_option("--params"))
      ->excludes(train->get_option("--init-from"))
      ->excludes(train->get_option("--vectors"));
}

CLI::App *addTrainCommand(CLI::App &app, DriverOptions &options) {
  CLI::App *train = app.add_subcommand(commandName(Command::Train),
                                       "train on --data, evaluating --dev each epoch");
  addDataOptions(train, options);
  train->add_option("--dev", options.dev, "JSON Lines examples evaluated after each epoch");
  train->add_option("--dev-limit", options.devLimit, "use only the first N examples of --dev")
      ->check(kUnsigned);
  train->add_option("--save", options.save,
                    "write parameters here (with --dev: those of the best dev result)");
  train->add_option("--select", options.select,
                    "with --dev: 'loss' (default) saves the lowest dev loss, a metric's name "
                    "(e.g. root_hits) its highest dev mean, min:METRIC its lowest");
  train->add_option("--epochs", options.epochs, "passes over --data (default 10)")
      ->check(kUnsigned & CLI::Range(1, 1 << 30));
  addOptimizerOptions(train, options);
  train
      ->add_option("--patience", options.patience,
                   "with --dev: stop when this many epochs in a row bring no better dev result "
                   "(by --select; default 0: never)")
      ->check(kUnsigned & CLI::Range(0, 1 << 30));
  addStartOptions(train, options);
  addTrainingFileOptions(train, options);
  return train;
}

CLI::App *addEvalCommand(CLI::App &app, DriverOptions &options) {
  CLI::App *eval = app.add_subcommand(commandName(Command::Eval),
                                      "print the mean loss and metrics of --data as JSON");
  addDataOptions(eval, options);
  addInitFlag(eval, options, "use new parameters initialised from --seed (no --params)");
  addPrecisionOption(eval, options);
  return eval;
}

CLI::App *addInferCommand(CLI::App &app, DriverOptions &options) {
  CLI::App *infer =
      app.add_subcommand(commandName(Command::Infer), "print each example's output as a JSON line");
  addDataOptions(infer, options);
  addInitFlag(infer, options, "use new parameters initialised from --seed (no --params)");
  addBatchingOptions(infer, options);
  addPrecisionOption(infer, options);
  return infer;
}

CLI::App *addServeCommand(CLI::App &app, DriverOptions &options) {
  CLI::App *serve = app.add_subcommand(
      commandName(Command::Serve),
      "answer POST /infer (one example or a JSON array of them) over HTTP, batching "
      "concurrent requests; GET /healthz, GET /metrics (Prometheus); SIGTERM stops");
  serve->add_option("--params", options.params, "safetensors parameters to serve");
  addInitFlag(serve, options, "serve new parameters initialised from --seed");
  serve->add_option("--seed", options.seed, "with --init: the initialisation seed (default 1)")
      ->check(kSeed);
  serve->add_option("--host", options.host, "address to listen on (default 127.0.0.1)");
  serve->add_option("--port", options.port, "port (default 8080; 0 picks a free one)")
      ->check(kUnsigned & CLI::Range(0, 65535));
  serve->add_option("--batch-size", options.batchSize, "the largest batch (default 32)")
      ->check(kUnsigned & CLI::Range(1, 1 << 20));
  addBatchingOptions(serve, options);
  serve
      ->add_option("--max-queue", options.maxQueue,
                   "examples waiting at most; beyond, requests get 503 (default 4096)")
      ->check(kUnsigned & CLI::Range(1L, 1L << 30));
  serve
      ->add_option("--max-body-bytes", options.maxBodyBytes,
                   "larger request bodies get 413 (default 1048576)")
      ->check(kUnsigned & CLI::Range(1L, 1L << 30));
  serve
      ->add_option("--http-threads", options.httpThreads,
                   "threads reading request bodies and writing answers; waiting clients hold "
                   "none (default 4)")
      ->check(kUnsigned & CLI::Range(1, 4096));
  serve
      ->add_option("--max-connections", options.maxConnections,
                   "connections open at once; beyond, a new one gets 503 (default 10000)")
      ->check(kUnsigned & CLI::Range(1L, 1L << 24));
  serve
      ->add_option("--read-timeout-ms", options.readTimeoutMs,
                   "a client that sends or takes nothing for this long while a request or its "
                   "answer is under way gets 408 and is disconnected (default 5000)")
      ->check(kUnsigned & CLI::Range(1L, 3600L * 1000));
  serve
      ->add_option("--request-timeout-ms", options.requestTimeoutMs,
                   "a request must arrive whole within this time of its first byte "
                   "(default 30000)")
      ->check(kUnsigned & CLI::Range(1L, 3600L * 1000));
  serve
      ->add_option("--idle-timeout-ms", options.idleTimeoutMs,
                   "a connection waits this long for its next request (default 10000)")
      ->check(kUnsigned & CLI::Range(1L, 3600L * 1000));
  serve
      ->add_option("--drain-ms", options.drainMs,
                   "after SIGTERM, open connections are kept this long, answering 503 "
                   "(default 1000)")
      ->check(kUnsigned & CLI::Range(0L, 3600L * 1000));
  serve->add_option("--threads", options.threads, "threads for the model's GEMMs (default 1)")
      ->check(kUnsigned & CLI::Range(1, 1024));
  serve->add_flag("--no-batching", options.noBatching, "run every instance alone (the baseline)");
  addPrecisionOption(serve, options);
  serve->add_flag("--allow-unknown-fields", options.allowUnknownFields,
                  "ignore record fields the data types do not declare (default: an error)");
  return serve;
}

CLI::App *addCheckCommand(CLI::App &app, DriverOptions &options) {
  CLI::App *check = app.add_subcommand(
      commandName(Command::Check),
      "check the gradients on --data against finite differences, and batched against "
      "per-example execution; prints one JSON line, exits 1 on a mismatch");
  addDataOptions(check, options);
  check->add_option("--step", options.step, "finite-difference step (default 0.01)")
      ->check(kFinite & CLI::PositiveNumber);
  return check;
}

/// What is wrong with train's --select, or "".
std::string selectionMisuse(const DriverOptions &options, const std::vector<std::string> &metrics) {
  if (options.select == "loss")
    return "";
  bool minimize = true;
  if (!Selection::parse(options.select, metrics, &minimize)) {
    std::string misuse = "--select " + options.select +
                         ": expected loss or a metric of the model, optionally after min: or max:";
    for (size_t m = 0; m < metrics.size(); ++m)
      misuse += (m ? ", " : " (metrics: ") + metrics[m] + (m + 1 == metrics.size() ? ")" : "");
    return misuse;
  }
  return options.dev.empty() ? "--select needs --dev (the data it selects on)" : "";
}

/// What is wrong with train's other options taken together, or "".
std::string trainingMisuse(const DriverOptions &options) {
  if (options.patience > 0 && options.dev.empty())
    return "--patience needs --dev (the results it watches)";
  auto layers = [](const std::vector<std::string> &assignments) {
    std::vector<std::string> names;
    for (const std::string &a : assignments)
      names.push_back(splitAssignment(a).first);
    std::sort(names.begin(), names.end());
    return names;
  };
  std::vector<std::string> vectors = layers(options.vectors), vocab = layers(options.vocab);
  if (std::adjacent_find(vectors.begin(), vectors.end()) != vectors.end())
    return "--vectors names a layer twice";
  if (vectors != vocab)
    return "every --vectors LAYER=FILE needs a --vocab LAYER=FILE for the same layer, and "
           "every --vocab a --vectors";
  return "";
}

} // namespace

std::optional<Command> Subcommands::parsed() const {
  for (auto [command, app] : commands)
    if (app->parsed())
      return command;
  return std::nullopt;
}

Subcommands addSubcommands(CLI::App &app, DriverOptions &options) {
  Subcommands commands;
  commands.commands = {{Command::Train, addTrainCommand(app, options)},
                       {Command::Eval, addEvalCommand(app, options)},
                       {Command::Infer, addInferCommand(app, options)},
                       {Command::Serve, addServeCommand(app, options)},
                       {Command::Check, addCheckCommand(app, options)}};
  commands.info = app.add_subcommand(
      "info",
      "print the model's parameters per layer and def, their total, its kernels and metrics");
  return commands;
}

std::string misuseOf(Command command, const DriverOptions &options,
                     const std::vector<std::string> &metricNames) {
  switch (command) {
  case Command::Train: {
    std::string misuse = selectionMisuse(options, metricNames);
    return misuse.empty() ? trainingMisuse(options) : misuse;
  }
  case Command::Eval:
  case Command::Infer:
  case Command::Serve: {
    // --init: see addInitFlag
    if (options.params.empty() && !options.init)
      return std::string(commandName(command)) +
             " needs --params FILE (or --init for new parameters from --seed)";
    const char *why = nullptr;
    if (options.precision == "bf16" && !bf16Available(&why))
      return std::string("--precision bf16: ") + why;
    return "";
  }
  case Command::Check:
    return "";
  }
  return "";
}

} // namespace foldc::rt
