// The generated models' command line (see Driver.h).
#include "runtime/Driver.h"

#include "runtime/DataParallel.h"
#include "runtime/Jsonl.h"
#include "runtime/Process.h"
#include "runtime/Threads.h"
#include "runtime/ThreadTeam.h"
#include "runtime/Timing.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <random>

namespace foldc::rt {

namespace {

struct DriverOptions {
  std::string data, dev, params, save, curve, optimizer = "adam";
  std::string select = "loss"; ///< what --save keeps the best of: dev loss, or a dev metric
  std::string checkpoint, resume; ///< train: the training state written each epoch, read to go on
  int epochs = 10, batchSize = 32, threads = 1;
  long limit = 0, devLimit = 0; ///< use only the first N examples (0: all)
  double lr = 0, clip = 0;      ///< lr 0: the optimizer's default
  double weightDecay = 0;
  double step = 1e-2;           ///< check: the finite-difference step
  uint64_t seed = 1;
  bool noBatching = false;
  bool allowUnknownFields = false;
  bool init = false; ///< eval, infer: fresh parameters, knowingly
};

/// Reports an epoch's progress on stderr: examples done, their rate, the
/// time left and the running train loss. In a terminal one line is redrawn
/// each second (and cleared by finish()); into a file or pipe, a line every
/// ten seconds.
class Progress {
public:
  Progress(int epoch, int epochs, size_t total) : epoch_(epoch), epochs_(epochs), total_(total) {}

  void update(size_t done, double loss) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(terminal_ ? 1 : 10))
      return;
    last_ = now;
    double rate = double(done) / secondsSince(begin_);
    std::fprintf(stderr, "%sepoch %d/%d: %zu/%zu examples, %.0f examples/s, %.0f s left, train loss %.4g%s",
                 terminal_ ? "\r\033[K" : "", epoch_, epochs_, done, total_, rate,
                 double(total_ - done) / rate, loss, terminal_ ? "" : "\n");
    shown_ = true;
  }
  /// Clears a redrawn line, so that what follows starts on a clean one.
  void finish() {
    if (terminal_ && shown_)
      std::fprintf(stderr, "\r\033[K");
  }
  double seconds() const { return secondsSince(begin_); }

private:
  int epoch_, epochs_;
  size_t total_;
  bool terminal_ = isatty(STDERR_FILENO) == 1, shown_ = false;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now(), last_ = begin_;
};

/// Which dev result `train --save` keeps: `loss` (the lowest dev loss), a
/// metric's name (its highest dev mean, as papers select on accuracy:
/// `root_hits`), or `min:NAME` / `max:NAME` to say which way is better.
class Selection {
public:
  /// The metric index that `criterion` names: -1 for the loss, nullopt when
  /// it names nothing the model has.
  static std::optional<int> parse(const std::string &criterion,
                                  const std::vector<std::string> &metricNames, bool *minimize) {
    std::string name = criterion;
    *minimize = name == "loss";
    for (const char *prefix : {"min:", "max:"})
      if (name.rfind(prefix, 0) == 0) {
        *minimize = prefix[1] == 'i';
        name = name.substr(4);
      }
    if (name == "loss")
      return -1;
    auto it = std::find(metricNames.begin(), metricNames.end(), name);
    if (it == metricNames.end())
      return std::nullopt;
    return int(it - metricNames.begin());
  }

  /// `criterion` is one that parse() accepted.
  Selection(const std::string &criterion, const std::vector<std::string> &metricNames)
      : metric_(*parse(criterion, metricNames, &minimize_)) {}

  /// Whether `dev` is the best so far (and remembers it).
  bool improves(const BatchResult &dev) {
    double value = metric_ < 0 ? dev.loss : dev.metricMean(size_t(metric_));
    double score = minimize_ ? -value : value;
    if (seen_ && !(score > best_))
      return false;
    seen_ = true;
    best_ = score;
    return true;
  }

  /// The best score so far as text ("" before any), for a checkpoint.
  std::string saveState() const { return seen_ ? nlohmann::json(best_).dump() : ""; }
  void restoreState(const std::string &text) {
    seen_ = !text.empty();
    if (seen_)
      best_ = nlohmann::json::parse(text).get<double>();
  }

private:
  bool minimize_ = true;
  int metric_;
  bool seen_ = false;
  double best_ = 0;
};

/// 6510300 as "6,510,300".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

/// `NAME info`: the parameters of each layer and def (the part of a
/// parameter's name before its last dot), their total, the kernels (one per
/// batching key) and the metrics.
void printSummary(const std::string &name, const DriverModel &model, std::ostream &out) {
  struct Owner {
    std::string name, params;
    int64_t weights = 0;
  };
  std::vector<Owner> owners;
  const ParamStore &params = model.params();
  int64_t total = 0;
  for (int id = 0; id < params.count(); ++id) {
    const Param &p = params.at(id);
    size_t dot = p.name.rfind('.');
    std::string owner = dot == std::string::npos ? "(global)" : p.name.substr(0, dot);
    if (owners.empty() || owners.back().name != owner)
      owners.push_back({owner, "", 0});
    int64_t weights = p.size();
    Owner &o = owners.back();
    o.params += (o.params.empty() ? "" : ", ") + p.name.substr(dot + 1) + " " + shapeText(p.shape) +
                (p.sparseRows ? " (rows updated when used)" : "");
    o.weights += weights;
    total += weights;
  }
  out << name << ": " << grouped(total) << " weights (" << (total * 4 + (1 << 19)) / (1 << 20)
      << " MiB as f32) in " << params.count() << " parameters\n";
  for (const Owner &o : owners) {
    std::string weights = grouped(o.weights);
    out << "  " << o.name << std::string(o.name.size() < 16 ? 16 - o.name.size() : 1, ' ')
        << std::string(weights.size() < 11 ? 11 - weights.size() : 0, ' ') << weights << "  "
        << o.params << "\n";
  }
  out << model.kernels().size() << " kernels (one per batching key):\n";
  for (const std::unique_ptr<Kernel> &k : model.kernels()) {
    const Kernel::Signature &sig = k->signature();
    std::vector<int64_t> in(sig.argWidths.begin(), sig.argWidths.end());
    std::vector<int64_t> results(sig.outWidths.begin(), sig.outWidths.end());
    out << "  " << sig.name << ": row widths in " << shapeText(in) << ", out " << shapeText(results)
        << ", " << grouped(int64_t(sig.flops)) << " FLOPs per instance\n";
  }
  out << "metrics:";
  for (const std::string &m : model.metricNames())
    out << " " << m;
  out << (model.metricNames().empty() ? " none\n" : "\n");
}

/// Examples of one file: which dataset of the model holds them, and the line
/// each came from.
struct Dataset {
  int set = 0;
  std::string file;
  std::vector<long> lines;
  /// Data-parallel runs: each example's size, to balance the ranks' shares.
  std::vector<double> sizes;

  std::vector<int32_t> indices() const {
    std::vector<int32_t> all(lines.size());
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
};

/// What data-parallel training spent outside its own share of the work.
struct ExchangeStats {
  double wait = 0;          ///< seconds waiting for the slowest rank's share
  double communication = 0; ///< seconds summing gradients
  double bytes = 0;         ///< bytes each rank sent into the sums
  long steps = 0;
};

class Driver {
public:
  Driver(const DriverOptions &options, DriverModel &model, Communicator &processes)
      : o_(options), model_(model), processes_(processes) {}

  int train() {
    if (leader()) {
      checkWritable(o_.save);
      checkWritable(o_.curve);
      checkWritable(o_.checkpoint);
    }
    Dataset data = loadSome(0, o_.data, o_.limit), dev;
    if (!o_.dev.empty())
      dev = loadSome(1, o_.dev, o_.devLimit);
    start();
    Selection selection(o_.select, model_.metricNames());
    double lr = o_.lr > 0 ? o_.lr : o_.optimizer == "sgd" ? 0.1 : o_.optimizer == "adagrad" ? 0.05 : 1e-3;
    std::unique_ptr<Optimizer> optimizer = makeOptimizer(o_.optimizer, lr, o_.clip, o_.weightDecay);
    int done = 0;
    if (!o_.resume.empty()) {
      done = readCheckpoint(*optimizer, selection, data.lines.size());
      if (done >= o_.epochs)
        throw std::runtime_error(o_.resume + ": has " + std::to_string(done) +
                                 " epochs done already; --epochs counts them too, ask for more");
      if (leader())
        std::cerr << o_.resume << ": resuming after epoch " << done << "\n";
    }
    std::ofstream curve;
    if (!o_.curve.empty() && leader())
      curve = openCurve(done > 0);
    // The epochs done are replayed to their shuffles and step count: the
    // rest of the run is the one that would have followed them.
    std::vector<int32_t> order = data.indices();
    std::mt19937_64 shuffle(o_.seed);
    uint64_t step = 0;
    for (int epoch = 1; epoch <= done; ++epoch) {
      std::shuffle(order.begin(), order.end(), shuffle);
      step += (order.size() + size_t(o_.batchSize) - 1) / size_t(o_.batchSize);
    }
    auto begin = std::chrono::steady_clock::now();
    for (int epoch = done + 1; epoch <= o_.epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), shuffle);
      BatchResult epochResult;
      ExchangeStats exchanged;
      Progress progress(epoch, o_.epochs, order.size());
      for (size_t at = 0; at < order.size(); at += size_t(o_.batchSize)) {
        auto batch = slice(order, at);
        RunOptions run = runOptions();
        run.seed = o_.seed * 1000003u + ++step;
        epochResult.add(trainStep(data, batch, *optimizer, run, exchanged));
        if (!std::isfinite(epochResult.loss))
          throw std::runtime_error("epoch " + std::to_string(epoch) + ", step " + std::to_string(step) +
                                   ": the training loss is not finite (the parameters diverged: "
                                   "a lower --lr or a --clip may help); nothing more is saved");
        if (leader())
          progress.update(at + batch.size(), epochResult.loss);
      }
      progress.finish();
      double trainSeconds = progress.seconds();
      epochResult = summed(epochResult);
      nlohmann::json report = {{"epoch", epoch},
                               {"train", epochResult.toJson(model_.metricNames())},
                               {"train_seconds", trainSeconds},
                               {"train_examples_per_second", double(order.size()) / trainSeconds}};
      if (processes_.size() > 1) {
        if (!paramsAgree(model_.params(), processes_))
          throw std::runtime_error("epoch " + std::to_string(epoch) +
                                   ": the ranks' parameters differ (their gradient sums were not "
                                   "the same on every rank)");
        report["ranks"] = processes_.size();
        report["wait_seconds"] = exchanged.wait;
        report["communication_seconds"] = exchanged.communication;
        report["communicated_bytes_per_step"] = exchanged.bytes / double(exchanged.steps);
      }
      std::optional<BatchResult> devResult;
      if (!dev.lines.empty()) {
        auto devBegin = std::chrono::steady_clock::now();
        devResult = evaluate(dev);
        report["dev"] = devResult->toJson(model_.metricNames());
        report["dev_seconds"] = secondsSince(devBegin);
      }
      double seconds = secondsSince(begin);
      report["seconds"] = seconds;
      // Keep the parameters of the best dev result (the last ones without --dev).
      bool save = !o_.save.empty() && (!devResult || selection.improves(*devResult));
      report["saved"] = save;
      if (!leader())
        continue;
      if (save)
        model_.saveParams(o_.save);
      std::cout << report.dump() << std::endl;
      if (!stdoutIsTerminal())
        summarizeEpoch(epoch, epochResult, devResult, trainSeconds, save);
      if (curve.is_open())
        writeCurveLine(curve, epoch, epochResult, devResult, seconds);
      if (!o_.checkpoint.empty())
        writeCheckpoint(epoch, *optimizer, selection, data.lines.size());
    }
    return 0;
  }

  int eval() {
    Dataset data = loadSome(0, o_.data, o_.limit);
    start();
    BatchResult result = evaluate(data);
    if (!leader())
      return 0;
    std::cout << result.toJson(model_.metricNames()).dump() << std::endl;
    return flushed();
  }

  /// Rank 0 alone runs `infer` and `check` (their outputs are per example,
  /// or one verdict): the other ranks of an mpirun have nothing to do.
  int infer() {
    if (!leader())
      return 0;
    Dataset data = load(0, o_.data, o_.limit);
    start(false);
    auto begin = std::chrono::steady_clock::now();
    std::vector<int32_t> all = data.indices();
    for (size_t at = 0; at < all.size(); at += size_t(o_.batchSize)) {
      auto batch = slice(all, at);
      std::vector<nlohmann::json> outputs =
          located(data, batch, [&] { return model_.infer(data.set, batch, runOptions()); });
      // Each output names the line of --data it came from.
      for (size_t i = 0; i < outputs.size(); ++i)
        std::cout << nlohmann::json{{"line", data.lines[size_t(batch[i])]}, {"output", outputs[i]}}.dump()
                  << '\n';
    }
    double seconds = secondsSince(begin);
    std::fprintf(stderr, "infer: %zu examples in %.3g s (%.0f examples/s)\n", all.size(), seconds,
                 double(all.size()) / seconds);
    return flushed();
  }

  /// Gradients of the whole of --data against finite differences, and
  /// batched against per-example: one JSON line; exit 1 when either fails.
  int check() {
    if (!leader())
      return 0;
    Dataset data = loadSome(0, o_.data, o_.limit);
    start(false);
    std::vector<int32_t> all = data.indices();
    GradientCheck c = located(data, all, [&] { return model_.checkGradients(data.set, all, o_.step); });
    nlohmann::json report = {{"probes", c.probes},
                             {"failures", c.failures},
                             {"kinks", c.kinks},
                             {"worst", c.worst},
                             {"worst_at", c.worstAt},
                             {"batched_equals_unbatched", c.batchedEqualsUnbatched}};
    if (!c.batchedEqualsUnbatched)
      report["mismatch_at"] = c.mismatchAt;
    std::cout << report.dump() << std::endl;
    return c.passed() ? 0 : 1;
  }

private:
  static bool stdoutIsTerminal() { return isatty(STDOUT_FILENO) == 1; }

  /// What a checkpoint must agree on with the run resuming it, so that the
  /// shuffles, the dropout masks and the optimizer's steps continue exactly.
  std::map<std::string, std::string> runIdentity(size_t examples) const {
    return {{"optimizer", o_.optimizer},
            {"seed", std::to_string(o_.seed)},
            {"batch_size", std::to_string(o_.batchSize)},
            {"examples", std::to_string(examples)},
            {"select", o_.select}};
  }

  /// --checkpoint: the last parameters, the optimizer's state, the epochs
  /// done and the best dev result so far, written like --save (a failed
  /// write leaves the previous checkpoint).
  void writeCheckpoint(int epoch, Optimizer &optimizer, const Selection &selection,
                       size_t examples) {
    std::map<std::string, std::string> metadata = runIdentity(examples);
    metadata["epoch"] = std::to_string(epoch);
    metadata["best"] = selection.saveState();
    OptimizerState state = optimizer.state(model_.params());
    metadata["steps"] = std::to_string(state.steps);
    std::vector<TensorView> tensors = paramViews(model_.params());
    std::vector<std::vector<int64_t>> shapes;
    shapes.reserve(state.slots.size());
    for (const auto &[name, values] : state.slots) {
      shapes.push_back({int64_t(values.size())});
      tensors.push_back({"optimizer/" + name, &shapes.back(), &values});
    }
    saveTensors(tensors, metadata, o_.checkpoint);
  }

  /// --resume: puts back a checkpoint's parameters, optimizer state and best
  /// dev result; gives the number of epochs it had done.
  int readCheckpoint(Optimizer &optimizer, Selection &selection, size_t examples) {
    std::map<std::string, std::string> metadata;
    std::map<std::string, TensorData> tensors = readSafetensors(o_.resume, &metadata);
    if (!metadata.count("epoch"))
      throw std::runtime_error(o_.resume + ": not a training checkpoint (written by --checkpoint)");
    for (const auto &[key, value] : runIdentity(examples))
      if (metadata[key] != value)
        throw std::runtime_error(o_.resume + ": written with " + key + " " + metadata[key] +
                                 ", this run has " + value + "; resuming must not change it");
    OptimizerState state;
    state.steps = std::stoll(metadata["steps"]);
    for (auto it = tensors.begin(); it != tensors.end();) {
      if (it->first.rfind("optimizer/", 0) == 0) {
        state.slots[it->first.substr(10)] = std::move(it->second.values);
        it = tensors.erase(it);
      } else {
        ++it;
      }
    }
    assignParams(model_.params(), std::move(tensors), o_.resume);
    optimizer.restore(model_.params(), std::move(state));
    selection.restoreState(metadata["best"]);
    return std::stoi(metadata["epoch"]);
  }

  /// An epoch in one line on stderr, for when stdout (its JSON) goes to a file.
  void summarizeEpoch(int epoch, const BatchResult &train, const std::optional<BatchResult> &dev,
                      double trainSeconds, bool saved) const {
    std::fprintf(stderr, "epoch %d/%d done in %.1f s: train loss %.4g", epoch, o_.epochs,
                 trainSeconds, train.loss);
    if (dev) {
      std::fprintf(stderr, ", dev loss %.4g", dev->loss);
      for (size_t m = 0; m < model_.metricNames().size(); ++m)
        std::fprintf(stderr, ", dev %s %.4g", model_.metricNames()[m].c_str(), dev->metricMean(m));
    }
    std::fprintf(stderr, "%s\n", saved ? " (saved)" : "");
  }

  /// A file that `--save` or `--curve` will write must have a folder to go
  /// in: known before training, not after the first epoch.
  static void checkWritable(const std::string &file) {
    if (file.empty())
      return;
    std::filesystem::path folder = std::filesystem::path(file).parent_path();
    if (!folder.empty() && !std::filesystem::is_directory(folder))
      throw std::runtime_error("cannot write '" + file + "': no folder '" + folder.string() + "'");
  }

  /// 0 when standard output took everything written to it (a full disk or
  /// a closed pipe is an error, not a silent loss).
  static int flushed() {
    std::cout.flush();
    if (std::cout)
      return 0;
    std::cerr << "error: cannot write the output\n";
    return 1;
  }

  Dataset load(int set, const std::string &file, long limit) {
    Dataset data;
    data.set = set;
    data.file = file;
    data.lines = model_.load(set, file, limit);
    if (processes_.size() > 1)
      data.sizes = lineLengths(file, data.lines);
    if (leader())
      std::cerr << file << ": " << data.lines.size() << " examples\n";
    return data;
  }

  /// load(), for the commands whose result is a mean over the examples.
  Dataset loadSome(int set, const std::string &file, long limit) {
    Dataset data = load(set, file, limit);
    if (data.lines.empty())
      throw DataError(file + ": no examples (every line is empty)");
    return data;
  }

  /// Runs `step` on `batch`; when it fails (a word id outside the embedding,
  /// a label outside the classes...), finds the first example that fails
  /// alone and reports it as `FILE:LINE: what`.
  template <class Step>
  auto located(const Dataset &data, DriverModel::Indices batch, Step &&step) -> decltype(step()) {
    try {
      return step();
    } catch (const std::exception &) {
      for (int32_t example : batch) {
        try {
          model_.eval(data.set, DriverModel::Indices(&example, 1), RunOptions{});
        } catch (const std::exception &e) {
          throw DataError(data.file + ":" + std::to_string(data.lines[size_t(example)]) + ": " +
                          e.what());
        }
      }
      throw;
    }
  }

  /// Threads, then the parameters: loaded with --params, else initialised
  /// from --seed; for work `shared` by the ranks, then rank 0's given to all.
  void start(bool shared = true) {
    configureProcess(o_.threads);
    if (o_.params.empty())
      model_.init(o_.seed);
    else
      model_.loadParams(o_.params);
    if (shared && processes_.size() > 1)
      broadcastParams(model_.params(), processes_);
  }

  bool leader() const { return processes_.rank() == 0; }

  /// This rank's share of a global batch, balanced by the examples' sizes
  /// (shareOfBatch). Positions are the examples' places in `batch`.
  struct Share {
    std::vector<int32_t> examples;
    std::vector<uint32_t> positions;
  };
  Share shareOf(const Dataset &data, DriverModel::Indices batch) const {
    std::vector<double> sizes;
    for (int32_t example : batch)
      sizes.push_back(data.sizes[size_t(example)]);
    Share mine;
    mine.positions = shareOfBatch(sizes, processes_.rank(), processes_.size());
    for (uint32_t position : mine.positions)
      mine.examples.push_back(batch[position]);
    return mine;
  }

  /// One optimizer step on `batch`. Over several ranks each runs its share,
  /// the gradients are summed, and every rank takes the same step; the
  /// result is this rank's share's.
  BatchResult trainStep(const Dataset &data, DriverModel::Indices batch, Optimizer &optimizer,
                        RunOptions run, ExchangeStats &exchanged) {
    if (processes_.size() == 1)
      return located(data, batch, [&] { return model_.trainStep(data.set, batch, optimizer, run); });
    Share mine = shareOf(data, batch);
    run.exampleIds = mine.positions; // the dropout masks of a one-process run
    run.globalBatch = int(batch.size());
    BatchResult result;
    if (!mine.examples.empty())
      result = located(data, mine.examples,
                       [&] { return model_.trainGradients(data.set, mine.examples, run); });
    GradientExchange::Timed sum = exchange_.waitAndSum(model_.params(), processes_);
    exchanged.wait += sum.waitSeconds;
    exchanged.communication += sum.sumSeconds;
    exchanged.bytes += double(sum.floats) * sizeof(float);
    ++exchanged.steps;
    optimizer.step(model_.params());
    return result;
  }

  /// Every rank's `mine` summed: examples, losses and metric emissions.
  BatchResult summed(const BatchResult &mine) {
    if (processes_.size() == 1)
      return mine;
    std::vector<double> sums = mine.sums(model_.metricNames().size());
    processes_.sum(sums);
    return BatchResult::fromSums(sums);
  }

  RunOptions runOptions() const {
    RunOptions run;
    run.batching = !o_.noBatching;
    return run;
  }

  DriverModel::Indices slice(const std::vector<int32_t> &all, size_t at) const {
    size_t n = std::min(all.size() - at, size_t(o_.batchSize));
    return DriverModel::Indices(all.data() + at, n);
  }

  /// The loss and metrics of all of `data`; each rank evaluates its share.
  BatchResult evaluate(const Dataset &data) {
    std::vector<int32_t> all = data.indices();
    std::vector<int32_t> mine = processes_.size() == 1 ? all : shareOf(data, all).examples;
    BatchResult total;
    for (size_t at = 0; at < mine.size(); at += size_t(o_.batchSize)) {
      auto batch = slice(mine, at);
      total.add(located(data, batch, [&] { return model_.eval(data.set, batch, runOptions()); }));
    }
    return summed(total);
  }

  /// The --curve file, with its header; resumed training appends to it.
  std::ofstream openCurve(bool resumed) {
    bool append = resumed && std::filesystem::exists(o_.curve) && std::filesystem::file_size(o_.curve) > 0;
    std::ofstream curve(o_.curve, append ? std::ios::app : std::ios::trunc);
    if (!curve)
      throw std::runtime_error("cannot write '" + o_.curve + "'");
    if (append)
      return curve;
    curve << "epoch,train_loss";
    for (const std::string &m : model_.metricNames())
      curve << ",train_" << m;
    if (!o_.dev.empty()) {
      curve << ",dev_loss";
      for (const std::string &m : model_.metricNames())
        curve << ",dev_" << m;
    }
    curve << ",seconds\n";
    return curve;
  }

  void writeCurveLine(std::ofstream &curve, int epoch, const BatchResult &train,
                      const std::optional<BatchResult> &dev, double seconds) {
    auto means = [&](const BatchResult &r) {
      curve << ',' << r.loss;
      for (size_t m = 0; m < model_.metricNames().size(); ++m)
        curve << ',' << r.metricMean(m);
    };
    curve << epoch;
    means(train);
    if (dev)
      means(*dev);
    curve << ',' << seconds << std::endl;
    if (!curve)
      throw std::runtime_error("cannot write '" + o_.curve + "'");
  }

  DriverOptions o_;
  DriverModel &model_;
  Communicator &processes_;
  GradientExchange exchange_;
};

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

/// A count or seed written without a sign (CLI11 would wrap -1 to 2^64 - 1).
const CLI::Validator kUnsigned(
    [](std::string &text) {
      return text.find_first_not_of("0123456789") == std::string::npos && !text.empty()
                 ? std::string()
                 : "expected a non-negative integer, found " + text;
    },
    "UINT");

/// `command` data-parallel over `options.threads` replicas of `model` on
/// threads of this process, each running its GEMMs on one thread.
int onReplicas(size_t stackBytes, const DriverOptions &options, DriverModel &model,
               const std::function<int(Driver &)> &command) {
  ThreadTeam team(options.threads);
  std::vector<std::unique_ptr<DriverModel>> replicas(size_t(team.size()));
  for (size_t r = 1; r < replicas.size(); ++r)
    replicas[r] = model.replica();
  DriverOptions each = options;
  each.threads = 1;
  return team.run(stackBytes, [&](Communicator &member) {
    DriverModel &mine = member.rank() == 0 ? model : *replicas[size_t(member.rank())];
    Driver driver(each, mine, member);
    int status = command(driver);
    mine.unload();
    return status;
  });
}

} // namespace

int runDriver(int argc, char **argv, const std::string &name, DriverModel &model,
              const std::string &dataFormat, Communicator &processes) {
  CLI::App app{name + ": train, evaluate or run the model (generated by foldc)"};
  app.footer(dataFormat);
  app.require_subcommand(1);
  DriverOptions o;
  auto common = [&](CLI::App *cmd) {
    cmd->add_option("--data", o.data, "JSON Lines examples")->required();
    cmd->add_option("--params", o.params, "safetensors parameters to start from");
    cmd->add_option("--batch-size", o.batchSize, "examples per batch (default 32)")
        ->check(kUnsigned & CLI::Range(1, 1 << 30));
    cmd->add_option("--threads", o.threads,
                    "threads (default 1): train and eval run this many replicas of the model, "
                    "each on its share of every batch; infer and check (and every command under "
                    "mpirun) share the GEMMs")
        ->check(kUnsigned & CLI::Range(1, 1024));
    cmd->add_option("--seed", o.seed, "initialisation, shuffling and dropout seed (default 1)")
        ->check(kUnsigned);
    cmd->add_option("--limit", o.limit, "use only the first N examples of --data (0: all)")
        ->check(kUnsigned);
    cmd->add_flag("--no-batching", o.noBatching, "run every instance alone (the baseline)");
    cmd->add_flag("--allow-unknown-fields", o.allowUnknownFields,
                  "ignore record fields the data types do not declare (default: an error)");
  };
  CLI::App *train = app.add_subcommand("train", "train on --data, evaluating --dev each epoch");
  common(train);
  train->add_option("--dev", o.dev, "JSON Lines examples evaluated after each epoch");
  train->add_option("--dev-limit", o.devLimit, "use only the first N examples of --dev")
      ->check(kUnsigned);
  train->add_option("--save", o.save, "write parameters here (with --dev: those of the best dev result)");
  train->add_option("--select", o.select,
                    "with --dev: 'loss' (default) saves the lowest dev loss, a metric's name "
                    "(e.g. root_hits) its highest dev mean, min:METRIC its lowest");
  train->add_option("--epochs", o.epochs, "passes over --data (default 10)")
      ->check(kUnsigned & CLI::Range(1, 1 << 30));
  train->add_option("--optimizer", o.optimizer, "sgd, adagrad or adam (default)")
      ->check(CLI::IsMember({"sgd", "adagrad", "adam"}));
  train->add_option("--lr", o.lr, "learning rate (default: sgd 0.1, adagrad 0.05, adam 0.001)")
      ->check(kFinite & CLI::PositiveNumber);
  train->add_option("--clip", o.clip, "clip gradients to this global L2 norm (default: none)")
      ->check(kFinite & CLI::NonNegativeNumber);
  train->add_option("--weight-decay", o.weightDecay,
                    "L2 penalty: adds this times each weight to its gradient (default 0)")
      ->check(kFinite & CLI::NonNegativeNumber);
  train->add_option("--curve", o.curve, "write the learning curve here as CSV (appended to on --resume)");
  train->add_option("--checkpoint", o.checkpoint,
                    "after each epoch, write the training state here: the last parameters, the "
                    "optimizer's state, the epochs done (for --resume)");
  train->add_option("--resume", o.resume,
                    "go on from a --checkpoint file: its parameters, optimizer state and epoch "
                    "count; the shuffles and dropout continue as in one run (--epochs is the total)")
      ->excludes(train->get_option("--params"));
  CLI::App *eval = app.add_subcommand("eval", "print the mean loss and metrics of --data as JSON");
  common(eval);
  CLI::App *infer = app.add_subcommand("infer", "print each example's output as a JSON line");
  common(infer);
  // Evaluating or running untrained parameters is rarely meant: it is asked for.
  for (CLI::App *cmd : {eval, infer})
    cmd->add_flag("--init", o.init, "use new parameters initialised from --seed (no --params)")
        ->excludes(cmd->get_option("--params"));
  CLI::App *check = app.add_subcommand(
      "check", "check the gradients on --data against finite differences, and batched against "
               "per-example execution; prints one JSON line, exits 1 on a mismatch");
  common(check);
  check->add_option("--step", o.step, "finite-difference step (default 0.01)")
      ->check(kFinite & CLI::PositiveNumber);
  CLI::App *info = app.add_subcommand(
      "info", "print the model's parameters per layer and def, their total, its kernels and metrics");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // Under mpirun every rank parses the same command line: one says it.
    int status = processes.rank() == 0 ? app.exit(e) : e.get_exit_code();
    return status == 0 ? 0 : 2;
  }
  if (info->parsed()) {
    if (processes.rank() != 0)
      return 0;
    printSummary(name, model, std::cout);
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  std::string misuse;
  if (train->parsed() && o.select != "loss") {
    const std::vector<std::string> &metrics = model.metricNames();
    bool minimize = true;
    if (!Selection::parse(o.select, metrics, &minimize)) {
      misuse = "--select " + o.select +
               ": expected loss or a metric of the model, optionally after min: or max:";
      for (size_t m = 0; m < metrics.size(); ++m)
        misuse += (m ? ", " : " (metrics: ") + metrics[m] + (m + 1 == metrics.size() ? ")" : "");
    } else if (o.dev.empty()) {
      misuse = "--select needs --dev (the data it selects on)";
    }
  }
  if ((eval->parsed() || infer->parsed()) && o.params.empty() && !o.init)
    misuse = std::string(eval->parsed() ? "eval" : "infer") +
             " needs --params FILE (or --init for new parameters from --seed)";
  if (!misuse.empty()) {
    if (processes.rank() == 0) // under mpirun, one rank says it
      std::cerr << name << ": error: " << misuse << "\n";
    return 2;
  }
  try {
    setAllowUnknownFields(o.allowUnknownFields);
    auto command = [&](Driver &driver) {
      return train->parsed()   ? driver.train()
             : eval->parsed()  ? driver.eval()
             : check->parsed() ? driver.check()
                               : driver.infer();
    };
    // Reading, unfolding and freeing an example recurse once per level of
    // its data: the work runs on threads with 1 GiB stacks.
    const size_t stack = size_t(1) << 30;
    if ((train->parsed() || eval->parsed()) && o.threads > 1 && processes.size() == 1) {
      if (train->parsed() && o.batchSize < o.threads)
        std::cerr << name << ": note: --batch-size " << o.batchSize << " gives some of the "
                  << o.threads << " replicas (--threads) no example in each batch; they still "
                  << "take part in every step, so fewer threads train faster\n";
      return onReplicas(stack, o, model, command);
    }
    int status = 0;
    for (const std::exception_ptr &error : onThreads(stack, 1, [&](int) {
           Driver driver(o, model, processes);
           status = command(driver);
           model.unload();
         }))
      if (error)
        std::rethrow_exception(error);
    return status;
  } catch (const std::exception &e) {
    if (processes.size() > 1) {
      std::cerr << name << ": error (rank " << processes.rank() << " of " << processes.size()
                << "): " << e.what() << std::endl;
      processes.abort(1);
    }
    std::cerr << name << ": error: " << e.what() << '\n';
    return 1;
  }
}

} // namespace foldc::rt
