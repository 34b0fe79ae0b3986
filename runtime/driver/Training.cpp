// The training loop (see Training.h).
#include "runtime/driver/Training.h"

#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/Curve.h"
#include "runtime/driver/Dataset.h"
#include "runtime/driver/Evaluation.h"
#include "runtime/driver/InitialParams.h"
#include "runtime/driver/Progress.h"
#include "runtime/driver/Selection.h"
#include "runtime/parallel/DataParallel.h"
#include "runtime/support/Timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <unistd.h>

namespace foldc::rt {

namespace {

/// What data-parallel training spent outside its own share of the work.
struct ExchangeStats {
  double wait = 0;          ///< seconds waiting for the slowest rank's share
  double communication = 0; ///< seconds summing gradients
  double bytes = 0;         ///< bytes each rank sent into the sums
  long steps = 0;
};

/// A file that --save, --curve or --checkpoint will write must have a folder
/// to go in: known before training, not after the first epoch.
void checkWritable(const std::string &file) {
  if (file.empty())
    return;
  std::filesystem::path folder = std::filesystem::path(file).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder))
    throw std::runtime_error("cannot write '" + file + "': no folder '" + folder.string() + "'");
}

/// --optimizer with --lr, --clip and --weight-decay (the row's defaults
/// where not given).
std::unique_ptr<Optimizer> makeOptimizer(const DriverOptions &options, double lr) {
  const OptimizerKind &kind = *findOptimizer(options.optimizer);
  return kind.make(lr, options.clip,
                   options.weightDecay >= 0 ? options.weightDecay : kind.defaultWeightDecay);
}

/// --schedule over this run's steps (CommandLine checked its syntax).
LearningRateSchedule learningRateSchedule(const DriverOptions &options, long stepsPerEpoch) {
  std::string error;
  std::optional<LearningRateSchedule> schedule = LearningRateSchedule::parse(
      options.schedule, stepsPerEpoch, options.epochs, options.warmup, &error);
  if (!schedule)
    throw std::runtime_error("--schedule: " + error);
  return *schedule;
}

/// One run of `train`: its data, optimizer and schedule, and the epochs.
class Trainer {
public:
  explicit Trainer(Session &session)
      : s_(session), options_(session.options), data_(loadData()), dev_(loadDev()),
        selection_(options_.select, session.model.metricNames()),
        lr_(options_.lr > 0 ? options_.lr : findOptimizer(options_.optimizer)->defaultLearningRate),
        optimizer_(makeOptimizer(options_, lr_)),
        stepsPerEpoch_(long((data_.lines.size() + batchSize() - 1) / batchSize())),
        schedule_(learningRateSchedule(options_, stepsPerEpoch_)) {
    startParams(s_);
  }

  int run();

private:
  size_t batchSize() const { return size_t(options_.batchSize); }
  Dataset loadData();
  Dataset loadDev();
  /// Puts back the --resume checkpoint; gives the epochs it had done.
  int resume();
  /// One epoch over `order`; gives its summed result.
  BatchResult runEpoch(int epoch, const std::vector<int32_t> &order, uint64_t &step,
                       ExchangeStats &exchanged, double &trainSeconds);
  /// One optimizer step on `batch`. Over several ranks each runs its share
  /// and the step sums the gradients: every rank takes the same step; the
  /// result is this rank's share's.
  BatchResult step(DriverModel::Indices batch, RunOptions run, ExchangeStats &exchanged);
  /// The epoch's end: dev results, --save, its JSON line, --curve and
  /// --checkpoint. Gives whether --patience stops the run.
  bool endEpoch(int epoch, const BatchResult &train, double trainSeconds,
                const ExchangeStats &exchanged);
  /// An epoch in one line on stderr, for when stdout (its JSON) goes to a file.
  void summarizeEpoch(int epoch, const BatchResult &train, const std::optional<BatchResult> &dev,
                      double trainSeconds, bool saved) const;

  Session &s_;
  const DriverOptions &options_;
  Dataset data_, dev_;
  Selection selection_;
  double lr_;
  std::unique_ptr<Optimizer> optimizer_;
  long stepsPerEpoch_;
  LearningRateSchedule schedule_;
  std::optional<LearningCurve> curve_;
  GradientExchange exchange_;
  std::chrono::steady_clock::time_point begin_;
};

Dataset Trainer::loadData() {
  if (s_.leader()) {
    checkWritable(options_.save);
    checkWritable(options_.curve);
    checkWritable(options_.checkpoint);
  }
  return loadExamples(s_, 0, options_.data, options_.limit);
}

Dataset Trainer::loadDev() {
  Dataset dev;
  if (!options_.dev.empty())
    dev = loadExamples(s_, 1, options_.dev, options_.devLimit);
  return dev;
}

int Trainer::resume() {
  auto [done, warning] = readCheckpoint(options_, data_.lines.size(), s_.model.params(),
                                        *optimizer_, selection_, schedule_, s_.processes.size());
  if (s_.leader() && !warning.empty())
    std::cerr << "warning: " << warning << '\n';
  if (done >= options_.epochs)
    throw std::runtime_error(options_.resume + ": has " + std::to_string(done) +
                             " epochs done already; --epochs counts them too, ask for more");
  if (options_.patience > 0 && selection_.resultsSinceBest() >= options_.patience)
    throw std::runtime_error(options_.resume + ": its run stopped early (no better dev result in " +
                             std::to_string(selection_.resultsSinceBest()) +
                             " epochs, --patience " + std::to_string(options_.patience) + ")");
  if (s_.leader())
    std::cerr << options_.resume << ": resuming after epoch " << done << "\n";
  return done;
}

int Trainer::run() {
  int done = options_.resume.empty() ? 0 : resume();
  if (!options_.curve.empty() && s_.leader())
    curve_.emplace(options_.curve, s_.model.metricNames(), !options_.dev.empty(), done > 0);
  // The epochs done are replayed to their shuffles and step count: the rest
  // of the run is the one that would have followed them.
  std::vector<int32_t> order = data_.indices();
  std::mt19937_64 shuffle(options_.seed);
  uint64_t step = 0;
  for (int epoch = 1; epoch <= done; ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle);
    step += uint64_t(stepsPerEpoch_);
  }
  begin_ = std::chrono::steady_clock::now();
  for (int epoch = done + 1; epoch <= options_.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle);
    ExchangeStats exchanged;
    double trainSeconds = 0;
    BatchResult result = runEpoch(epoch, order, step, exchanged, trainSeconds);
    if (endEpoch(epoch, result, trainSeconds, exchanged))
      break;
  }
  return s_.leader() ? flushed() : 0;
}

BatchResult Trainer::runEpoch(int epoch, const std::vector<int32_t> &order, uint64_t &step,
                              ExchangeStats &exchanged, double &trainSeconds) {
  BatchResult result;
  Progress progress(epoch, options_.epochs, order.size());
  for (size_t at = 0; at < order.size(); at += batchSize()) {
    auto examples = s_.batchAt(order, at);
    optimizer_->setLearningRate(lr_ * schedule_.at(long(step)));
    RunOptions run = s_.runOptions();
    run.seed = options_.seed * 1000003u + ++step;
    result.add(this->step(examples, run, exchanged));
    if (!std::isfinite(result.loss))
      throw std::runtime_error("epoch " + std::to_string(epoch) + ", step " + std::to_string(step) +
                               ": the training loss is not finite (the parameters diverged: "
                               "a lower --lr or a --clip may help); nothing more is saved");
    if (s_.leader())
      progress.update(at + examples.size(), result.loss);
  }
  progress.finish();
  trainSeconds = progress.seconds();
  return s_.summed(result);
}

BatchResult Trainer::step(DriverModel::Indices batch, RunOptions run, ExchangeStats &exchanged) {
  // The objective's divisor: the global batch's examples, or 1 for the sum.
  bool summed = options_.lossReduction == "sum";
  if (summed)
    run.globalBatch = 1;
  if (s_.processes.size() == 1)
    return located(s_, data_, batch,
                   [&] { return s_.model.trainStep(data_.set, batch, *optimizer_, run); });
  Share mine = shareOf(s_, data_, batch);
  run.exampleIds = mine.positions; // the dropout masks of a one-process run
  run.globalBatch = summed ? 1 : int(batch.size());
  GradientSum sumOverRanks = [&](ParamStore &params) {
    GradientExchange::Timed sum = exchange_.waitAndSum(params, s_.processes);
    exchanged.wait += sum.waitSeconds;
    exchanged.communication += sum.sumSeconds;
    exchanged.bytes += double(sum.floats) * sizeof(float);
    ++exchanged.steps;
  };
  return located(s_, data_, mine.examples, [&] {
    return s_.model.trainStep(data_.set, mine.examples, *optimizer_, run, sumOverRanks);
  });
}

bool Trainer::endEpoch(int epoch, const BatchResult &train, double trainSeconds,
                       const ExchangeStats &exchanged) {
  const std::vector<std::string> &metrics = s_.model.metricNames();
  nlohmann::json report = {{"epoch", epoch},
                           {"train", train.toJson(metrics)},
                           {"train_seconds", trainSeconds},
                           {"train_examples_per_second", double(data_.lines.size()) / trainSeconds},
                           {"lr", optimizer_->learningRate()}};
  if (s_.processes.size() > 1) {
    if (!paramsAgree(s_.model.params(), s_.processes))
      throw std::runtime_error("epoch " + std::to_string(epoch) +
                               ": the ranks' parameters differ (their gradient sums were not "
                               "the same on every rank)");
    report["ranks"] = s_.processes.size();
    report["wait_seconds"] = exchanged.wait;
    report["communication_seconds"] = exchanged.communication;
    report["communicated_bytes_per_step"] = exchanged.bytes / double(exchanged.steps);
  }
  std::optional<BatchResult> dev;
  if (!dev_.lines.empty()) {
    auto devBegin = std::chrono::steady_clock::now();
    dev = evaluate(s_, dev_);
    report["dev"] = dev->toJson(metrics);
    report["dev_seconds"] = secondsSince(devBegin);
  }
  double seconds = secondsSince(begin_);
  report["seconds"] = seconds;
  // Keep the parameters of the best dev result (the last ones without --dev).
  bool best = !dev || selection_.improves(*dev);
  bool save = !options_.save.empty() && best;
  report["saved"] = save;
  bool stop = dev && options_.patience > 0 && selection_.resultsSinceBest() >= options_.patience;
  if (!s_.leader())
    return stop;
  if (save)
    s_.model.saveParams(options_.save);
  std::cout << report.dump() << std::endl;
  if (isatty(STDOUT_FILENO) != 1)
    summarizeEpoch(epoch, train, dev, trainSeconds, save);
  if (curve_)
    curve_->add(epoch, train, dev, seconds);
  if (!options_.checkpoint.empty())
    writeCheckpoint(options_, data_.lines.size(), epoch, s_.model.params(), *optimizer_, selection_,
                    schedule_, s_.processes.size());
  if (stop)
    std::fprintf(stderr,
                 "stopping early after epoch %d: no better dev %s in %d epochs (--patience %d)\n",
                 epoch, options_.select.c_str(), options_.patience, options_.patience);
  return stop;
}

void Trainer::summarizeEpoch(int epoch, const BatchResult &train,
                             const std::optional<BatchResult> &dev, double trainSeconds,
                             bool saved) const {
  std::fprintf(stderr, "epoch %d/%d done in %.1f s: train loss %.4g", epoch, options_.epochs,
               trainSeconds, train.loss);
  if (dev) {
    const std::vector<std::string> &metrics = s_.model.metricNames();
    std::fprintf(stderr, ", dev loss %.4g", dev->loss);
    for (size_t m = 0; m < metrics.size(); ++m)
      std::fprintf(stderr, ", dev %s %.4g", metrics[m].c_str(), dev->metricMean(m));
  }
  std::fprintf(stderr, "%s\n", saved ? " (saved)" : "");
}

} // namespace

int train(Session &session) { return Trainer(session).run(); }

} // namespace foldc::rt
