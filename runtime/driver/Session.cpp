// The commands of a generated driver: train (the training loop), eval,
// infer and check (see Session.h).
#include "runtime/driver/Session.h"

#include "runtime/driver/BatchQueue.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/Progress.h"
#include "runtime/driver/Selection.h"
#include "runtime/driver/Server.h"
#include "runtime/engine/GemmClock.h"
#include "runtime/io/Jsonl.h"
#include "runtime/io/Safetensors.h"
#include "runtime/io/Vectors.h"
#include "runtime/parallel/DataParallel.h"
#include "runtime/support/Memory.h"
#include "runtime/support/Timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <thread>
#include <unistd.h>

namespace foldc::rt {

namespace {

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

/// One command of a generated driver over a model, with this process's
/// part of `processes` (every rank and thread replica runs one).
class Session {
public:
  Session(const DriverOptions &options, DriverModel &model, Communicator &processes)
      : options_(options), model_(model), processes_(processes) {}

  int train() {
    if (leader()) {
      checkWritable(options_.save);
      checkWritable(options_.curve);
      checkWritable(options_.checkpoint);
    }
    Dataset data = loadSome(0, options_.data, options_.limit), dev;
    if (!options_.dev.empty())
      dev = loadSome(1, options_.dev, options_.devLimit);
    start();
    Selection selection(options_.select, model_.metricNames());
    const OptimizerKind &kind = *findOptimizer(options_.optimizer);
    double lr = options_.lr > 0 ? options_.lr : kind.defaultLearningRate;
    std::unique_ptr<Optimizer> optimizer =
        kind.make(lr, options_.clip,
                  options_.weightDecay >= 0 ? options_.weightDecay : kind.defaultWeightDecay);
    size_t batch = size_t(options_.batchSize);
    long stepsPerEpoch = long((data.lines.size() + batch - 1) / batch);
    LearningRateSchedule schedule = learningRateSchedule(stepsPerEpoch);
    int done = 0;
    if (!options_.resume.empty())
      done = resume(data, *optimizer, selection, schedule);
    std::ofstream curve;
    if (!options_.curve.empty() && leader())
      curve = openCurve(done > 0);
    // The epochs done are replayed to their shuffles and step count: the
    // rest of the run is the one that would have followed them.
    std::vector<int32_t> order = data.indices();
    std::mt19937_64 shuffle(options_.seed);
    uint64_t step = 0;
    for (int epoch = 1; epoch <= done; ++epoch) {
      std::shuffle(order.begin(), order.end(), shuffle);
      step += uint64_t(stepsPerEpoch);
    }
    auto begin = std::chrono::steady_clock::now();
    for (int epoch = done + 1; epoch <= options_.epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), shuffle);
      BatchResult epochResult;
      ExchangeStats exchanged;
      Progress progress(epoch, options_.epochs, order.size());
      for (size_t at = 0; at < order.size(); at += batch) {
        auto examples = slice(order, at);
        optimizer->setLearningRate(lr * schedule.at(long(step)));
        RunOptions run = runOptions();
        run.seed = options_.seed * 1000003u + ++step;
        epochResult.add(trainStep(data, examples, *optimizer, run, exchanged));
        if (!std::isfinite(epochResult.loss))
          throw std::runtime_error("epoch " + std::to_string(epoch) + ", step " +
                                   std::to_string(step) +
                                   ": the training loss is not finite (the parameters diverged: "
                                   "a lower --lr or a --clip may help); nothing more is saved");
        if (leader())
          progress.update(at + examples.size(), epochResult.loss);
      }
      progress.finish();
      double trainSeconds = progress.seconds();
      epochResult = summed(epochResult);
      nlohmann::json report = {{"epoch", epoch},
                               {"train", epochResult.toJson(model_.metricNames())},
                               {"train_seconds", trainSeconds},
                               {"train_examples_per_second", double(order.size()) / trainSeconds},
                               {"lr", optimizer->learningRate()}};
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
      bool best = !devResult || selection.improves(*devResult);
      bool save = !options_.save.empty() && best;
      report["saved"] = save;
      bool stop =
          devResult && options_.patience > 0 && selection.resultsSinceBest() >= options_.patience;
      if (leader()) {
        if (save)
          model_.saveParams(options_.save);
        std::cout << report.dump() << std::endl;
        if (!stdoutIsTerminal())
          summarizeEpoch(epoch, epochResult, devResult, trainSeconds, save);
        if (curve.is_open())
          writeCurveLine(curve, epoch, epochResult, devResult, seconds);
        if (!options_.checkpoint.empty())
          writeCheckpoint(options_, data.lines.size(), epoch, model_.params(), *optimizer,
                          selection, schedule, processes_.size());
        if (stop)
          std::fprintf(stderr,
                       "stopping early after epoch %d: no better dev %s in %d epochs "
                       "(--patience %d)\n",
                       epoch, options_.select.c_str(), options_.patience, options_.patience);
      }
      if (stop)
        break;
    }
    return leader() ? flushed() : 0;
  }

  int eval() {
    Dataset data = loadSome(0, options_.data, options_.limit);
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
    if (options_.data == "-")
      return inferStream();
    Dataset data = load(0, options_.data, options_.limit);
    start(false);
    auto begin = std::chrono::steady_clock::now();
    std::vector<int32_t> all = data.indices();
    size_t failed = 0;
    for (size_t at = 0; at < all.size(); at += size_t(options_.batchSize)) {
      auto batch = slice(all, at);
      std::vector<std::optional<nlohmann::json>> outputs = inferBatch(data, batch);
      // Each output names the line of --data it came from.
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (!outputs[i]) {
          ++failed;
          continue;
        }
        std::cout << nlohmann::json{{"line", data.lines[size_t(batch[i])]}, {"output", *outputs[i]}}
                         .dump()
                  << '\n';
      }
    }
    double seconds = secondsSince(begin);
    std::fprintf(stderr, "infer: %zu examples in %.3g s (%.0f examples/s)\n", all.size(), seconds,
                 double(all.size()) / seconds);
    if (failed)
      std::fprintf(stderr, "infer: %zu of %zu examples failed (reported above)\n", failed,
                   all.size());
    int status = flushed();
    return failed ? 1 : status;
  }

  /// `infer --data -`: answers each line of standard input as it comes,
  /// batching the lines that arrive within --max-wait-us of each other. A
  /// bad line is reported on stderr as `-:LINE: what`; the others still get
  /// their answers, in order.
  int inferStream() {
    start(false);
    BatchQueue queue(inferParsedBatch(), batchLimits());
    struct Pending {
      long line;
      std::future<std::vector<Outcome>> outcome;
    };
    std::deque<Pending> pending;
    std::mutex mutex;
    std::condition_variable changed;
    bool ended = false;
    size_t failed = 0;
    // Answers are printed in order by a thread of their own, so that reading
    // the next line never waits for an answer.
    std::thread printer([&] {
      for (;;) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return ended || !pending.empty(); });
        if (pending.empty())
          return;
        Pending next = std::move(pending.front());
        pending.pop_front();
        lock.unlock();
        Outcome o = std::move(next.outcome.get().at(0));
        if (o.output)
          std::cout << nlohmann::json{{"line", next.line}, {"output", *o.output}}.dump()
                    << std::endl;
        else {
          std::cerr << "-:" << next.line << ": " << o.error << std::endl;
          ++failed;
        }
      }
    });
    static const std::string stdinName = "-";
    std::string text;
    for (long line = 1; std::getline(std::cin, text); ++line) {
      if (text.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      BatchQueue::Item item;
      try {
        JsonPath at(stdinName, line);
        item = model_.parseExample(parseJson(text, at), at);
      } catch (const std::exception &e) {
        std::lock_guard lock(mutex);
        std::cerr << (dynamic_cast<const DataError *>(&e) ? "" : "-:" + std::to_string(line) + ": ")
                  << e.what() << std::endl;
        ++failed;
        continue;
      }
      std::optional<std::future<std::vector<Outcome>>> outcome;
      while (!(outcome = queue.submit({item}))) // the queue is full: wait for it to drain
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::lock_guard lock(mutex);
      pending.push_back({line, std::move(*outcome)});
      changed.notify_one();
    }
    {
      std::lock_guard lock(mutex);
      ended = true;
      changed.notify_one();
    }
    printer.join();
    int status = flushed();
    return failed ? 1 : status;
  }

  /// `serve`: the model over HTTP until SIGTERM or SIGINT (Server.h).
  int serve() {
    start(false);
    ServeOptions o;
    o.host = options_.host;
    o.port = options_.port;
    o.limits = batchLimits();
    o.maxBodyBytes = size_t(options_.maxBodyBytes);
    o.threads = options_.httpThreads;
    o.readTimeoutMs = options_.readTimeoutMs;
    int status = serveHttp(
        o,
        [this](const nlohmann::json &value, const JsonPath &at) {
          return model_.parseExample(value, at);
        },
        inferParsedBatch(),
        [&](int port) {
          std::cerr << "serving on http://" << o.host << ":" << port << " (batches of up to "
                    << o.limits.maxBatch << ", waiting at most " << o.limits.maxWait.count()
                    << " us)" << std::endl;
        });
    if (status != 0)
      throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port));
    std::cerr << "stopped: every request in flight was answered" << std::endl;
    return 0;
  }

  /// What serve and `infer --data -` run on each batch the queue forms.
  BatchQueue::RunBatch inferParsedBatch() {
    return [this](std::span<const BatchQueue::Item> items) {
      return model_.inferParsed(items, runOptions());
    };
  }

  BatchQueue::Limits batchLimits() const {
    BatchQueue::Limits limits;
    limits.maxBatch = size_t(options_.batchSize);
    limits.maxWait = std::chrono::microseconds(options_.maxWaitMicros);
    limits.maxQueued = size_t(options_.maxQueue);
    return limits;
  }

  /// Gradients of the whole of --data against finite differences, and
  /// batched against per-example: one JSON line; exit 1 when either fails.
  int check() {
    if (!leader())
      return 0;
    Dataset data = loadSome(0, options_.data, options_.limit);
    start(false);
    std::vector<int32_t> all = data.indices();
    GradientCheck c =
        located(data, all, [&] { return model_.checkGradients(data.set, all, options_.step); });
    nlohmann::json report = {
        {"probes", c.probes},    {"failures", c.failures},
        {"kinks", c.kinks},      {"worst", c.worst},
        {"worst_at", c.worstAt}, {"batched_equals_unbatched", c.batchedEqualsUnbatched}};
    if (!c.batchedEqualsUnbatched)
      report["mismatch_at"] = c.mismatchAt;
    std::cout << report.dump() << std::endl;
    return c.passed() ? 0 : 1;
  }

private:
  static bool stdoutIsTerminal() { return isatty(STDOUT_FILENO) == 1; }

  /// An epoch in one line on stderr, for when stdout (its JSON) goes to a file.
  void summarizeEpoch(int epoch, const BatchResult &train, const std::optional<BatchResult> &dev,
                      double trainSeconds, bool saved) const {
    std::fprintf(stderr, "epoch %d/%d done in %.1f s: train loss %.4g", epoch, options_.epochs,
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

  /// The outputs of `batch`. When the batch fails (a word id outside the
  /// embedding, a beam width of 0...), each example runs alone: the others
  /// keep their outputs, and each failing one is reported on stderr as
  /// `FILE:LINE: what` and has none.
  std::vector<std::optional<nlohmann::json>> inferBatch(const Dataset &data,
                                                        DriverModel::Indices batch) {
    std::vector<std::optional<nlohmann::json>> outputs;
    try {
      for (nlohmann::json &o : model_.infer(data.set, batch, runOptions()))
        outputs.emplace_back(std::move(o));
      return outputs;
    } catch (const std::exception &) {
      outputs.clear();
    }
    for (int32_t example : batch) {
      try {
        outputs.emplace_back(
            std::move(model_.infer(data.set, DriverModel::Indices(&example, 1), runOptions())[0]));
      } catch (const std::exception &e) {
        std::cerr << data.file << ":" << data.lines[size_t(example)] << ": " << e.what() << '\n';
        outputs.emplace_back(std::nullopt);
      }
    }
    return outputs;
  }

  /// `FILE:LINE: out of memory...` for a batch that ran out of memory, at
  /// its largest example, the likeliest cause: running the examples again
  /// one by one, as for other errors, would run out again (and then at
  /// whichever came first).
  std::string outOfMemory(const Dataset &data, DriverModel::Indices batch) {
    std::vector<long> lines;
    for (int32_t example : batch)
      lines.push_back(data.lines[size_t(example)]);
    std::vector<double> sizes = lineLengths(data.file, lines);
    size_t largest = size_t(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
    char used[32];
    std::snprintf(used, sizeof used, "%.0f MiB", peakResidentMiB());
    return data.file + ":" + std::to_string(lines[largest]) + ": out of memory: a batch of " +
           std::to_string(batch.size()) + " examples whose largest is this one (" +
           std::to_string(long(sizes[largest])) +
           " characters) needed more memory than the process could get, after " + used +
           " resident; run it alone (--batch-size 1), split it, or give the process more "
           "memory (files saved before stay as they were)";
  }

  /// Runs `step` on `batch`; when it fails (a word id outside the embedding,
  /// a label outside the classes...), finds the first example that fails
  /// alone and reports it as `FILE:LINE: what`.
  template <class Step>
  auto located(const Dataset &data, DriverModel::Indices batch, Step &&step) -> decltype(step()) {
    try {
      return step();
    } catch (const std::bad_alloc &) {
      memoryReserve_.reset(); // room to write the message in
      throw DataError(outOfMemory(data, batch));
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

  /// --schedule over this run's steps (CommandLine checked its syntax).
  LearningRateSchedule learningRateSchedule(long stepsPerEpoch) const {
    std::string error;
    std::optional<LearningRateSchedule> schedule = LearningRateSchedule::parse(
        options_.schedule, stepsPerEpoch, options_.epochs, options_.warmup, &error);
    if (!schedule)
      throw std::runtime_error("--schedule: " + error);
    return *schedule;
  }

  /// Puts back the --resume checkpoint; gives the epochs it had done.
  int resume(const Dataset &data, Optimizer &optimizer, Selection &selection,
             const LearningRateSchedule &schedule) {
    auto [done, warning] = readCheckpoint(options_, data.lines.size(), model_.params(), optimizer,
                                          selection, schedule, processes_.size());
    if (leader() && !warning.empty())
      std::cerr << "warning: " << warning << '\n';
    if (done >= options_.epochs)
      throw std::runtime_error(options_.resume + ": has " + std::to_string(done) +
                               " epochs done already; --epochs counts them too, ask for more");
    if (options_.patience > 0 && selection.resultsSinceBest() >= options_.patience)
      throw std::runtime_error(options_.resume +
                               ": its run stopped early (no better dev result "
                               "in " +
                               std::to_string(selection.resultsSinceBest()) +
                               " epochs, --patience " + std::to_string(options_.patience) + ")");
    if (leader())
      std::cerr << options_.resume << ": resuming after epoch " << done << "\n";
    return done;
  }

  /// --init-from: the parameters a file holds, over the initialised ones.
  void initFrom(const std::string &file) {
    PartialLoad load = initFromTensors(model_.params(), file);
    if (!leader())
      return;
    auto list = [](const std::vector<std::string> &names) {
      std::string text;
      for (const std::string &n : names)
        text += (text.empty() ? "" : ", ") + n;
      return names.empty() ? std::string("none") : text;
    };
    std::cerr << file << ": loaded " << load.loaded.size() << " of " << model_.params().count()
              << " parameters (" << list(load.loaded)
              << "); initialised from --seed: " << list(load.kept) << "\n";
    if (!load.ignored.empty())
      std::cerr << file << ": not in the model, ignored: " << list(load.ignored) << "\n";
  }

  /// --vectors LAYER=FILE with --vocab LAYER=FILE: pretrained rows of an
  /// embedding (CommandLine paired them).
  void loadPretrainedVectors() {
    for (size_t i = 0; i < options_.vectors.size(); ++i) {
      auto [layer, vectorsFile] = splitAssignment(options_.vectors[i]);
      std::string vocabFile;
      for (const std::string &v : options_.vocab)
        if (splitAssignment(v).first == layer)
          vocabFile = splitAssignment(v).second;
      int id = model_.params().find(layer + ".E");
      if (id < 0 || !model_.params().at(id).sparseRows)
        throw std::runtime_error("--vectors " + options_.vectors[i] + ": the model has no " +
                                 "embedding '" + layer + "'" + embeddingNames());
      VectorsReport report = loadVectors(model_.params().at(id), vectorsFile, vocabFile);
      if (leader())
        std::cerr << vectorsFile << ": " << report.found << " of the " << report.vocabulary
                  << " words of " << vocabFile << " found; the others keep the initialiser of '"
                  << layer << "'\n";
    }
  }

  /// " (its embeddings: a, b)", or " (it has none)".
  std::string embeddingNames() const {
    std::string names;
    for (int id = 0; id < model_.params().count(); ++id)
      if (model_.params().at(id).sparseRows) {
        const std::string &name = model_.params().at(id).name;
        names += (names.empty() ? "" : ", ") + name.substr(0, name.rfind('.'));
      }
    return names.empty() ? " (it has none)" : " (its embeddings: " + names + ")";
  }

  /// The parameters: loaded with --params, else initialised from --seed; for
  /// work `shared` by the ranks, then rank 0's given to all. (runDriver has
  /// set the process's threads.)
  void start(bool shared = true) {
    if (options_.params.empty())
      model_.init(options_.seed);
    else
      model_.loadParams(options_.params);
    if (!options_.initFrom.empty())
      initFrom(options_.initFrom);
    loadPretrainedVectors();
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
      return located(data, batch,
                     [&] { return model_.trainStep(data.set, batch, optimizer, run); });
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
    run.batching = !options_.noBatching;
    return run;
  }

  DriverModel::Indices slice(const std::vector<int32_t> &all, size_t at) const {
    size_t n = std::min(all.size() - at, size_t(options_.batchSize));
    return DriverModel::Indices(all.data() + at, n);
  }

  /// The loss and metrics of all of `data`; each rank evaluates its share.
  BatchResult evaluate(const Dataset &data) {
    std::vector<int32_t> all = data.indices();
    std::vector<int32_t> mine = processes_.size() == 1 ? all : shareOf(data, all).examples;
    BatchResult total;
    for (size_t at = 0; at < mine.size(); at += size_t(options_.batchSize)) {
      auto batch = slice(mine, at);
      total.add(located(data, batch, [&] { return model_.eval(data.set, batch, runOptions()); }));
    }
    return summed(total);
  }

  /// The --curve file, with its header; resumed training appends to it.
  std::ofstream openCurve(bool resumed) {
    bool append = resumed && std::filesystem::exists(options_.curve) &&
                  std::filesystem::file_size(options_.curve) > 0;
    std::ofstream curve(options_.curve, append ? std::ios::app : std::ios::trunc);
    if (!curve)
      throw std::runtime_error("cannot write '" + options_.curve + "'");
    if (append)
      return curve;
    curve << "epoch,train_loss";
    for (const std::string &m : model_.metricNames())
      curve << ",train_" << m;
    if (!options_.dev.empty()) {
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
      throw std::runtime_error("cannot write '" + options_.curve + "'");
  }

  DriverOptions options_;
  DriverModel &model_;
  Communicator &processes_;
  GradientExchange exchange_;
  /// Memory set aside (reserved, never touched) and given back when a batch
  /// runs out of memory, so that reporting it does not run out too.
  std::unique_ptr<char[]> memoryReserve_{new char[size_t(16) << 20]};
};

} // namespace

namespace {

int runSession(Command command, Session &session) {
  switch (command) {
  case Command::Train:
    return session.train();
  case Command::Eval:
    return session.eval();
  case Command::Infer:
    return session.infer();
  case Command::Check:
    return session.check();
  case Command::Serve:
    return session.serve();
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
