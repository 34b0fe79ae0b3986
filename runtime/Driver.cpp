// The generated models' command line (see Driver.h).
#include "runtime/Driver.h"

#include "runtime/Jsonl.h"
#include "runtime/Process.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <pthread.h>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>

namespace foldc::rt {

namespace {

struct DriverOptions {
  std::string data, dev, params, save, curve, optimizer = "adam";
  int epochs = 10, batchSize = 32, threads = 1;
  long limit = 0, devLimit = 0; ///< use only the first N examples (0: all)
  double lr = 0, clip = 0;      ///< lr 0: the optimizer's default
  double step = 1e-2;           ///< check: the finite-difference step
  uint64_t seed = 1;
  bool noBatching = false;
  bool init = false; ///< eval, infer: fresh parameters, knowingly
};

/// Reports progress on stderr at most once a second.
class Progress {
public:
  bool due() {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(1))
      return false;
    last_ = now;
    return true;
  }

private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// Examples of one file: which dataset of the model holds them, and the line
/// each came from.
struct Dataset {
  int set = 0;
  std::string file;
  std::vector<long> lines;

  std::vector<int32_t> indices() const {
    std::vector<int32_t> all(lines.size());
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
};

class Driver {
public:
  Driver(const DriverOptions &options, DriverModel &model) : o_(options), model_(model) {}

  int train() {
    checkWritable(o_.save);
    checkWritable(o_.curve);
    Dataset data = loadSome(0, o_.data, o_.limit), dev;
    if (!o_.dev.empty())
      dev = loadSome(1, o_.dev, o_.devLimit);
    start();
    double lr = o_.lr > 0 ? o_.lr : o_.optimizer == "sgd" ? 0.1 : o_.optimizer == "adagrad" ? 0.05 : 1e-3;
    std::unique_ptr<Optimizer> optimizer = makeOptimizer(o_.optimizer, lr, o_.clip);
    std::ofstream curve;
    if (!o_.curve.empty())
      curve = openCurve();
    std::vector<int32_t> order = data.indices();
    std::mt19937_64 shuffle(o_.seed);
    double bestDev = 1e300;
    uint64_t step = 0;
    auto begin = std::chrono::steady_clock::now();
    for (int epoch = 1; epoch <= o_.epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), shuffle);
      BatchResult epochResult;
      Progress progress;
      for (size_t at = 0; at < order.size(); at += size_t(o_.batchSize)) {
        auto batch = slice(order, at);
        RunOptions run = runOptions();
        run.seed = o_.seed * 1000003u + ++step;
        epochResult.add(located(data, batch, [&] {
          return model_.trainStep(data.set, batch, *optimizer, run);
        }));
        if (!std::isfinite(epochResult.loss))
          throw std::runtime_error("epoch " + std::to_string(epoch) + ", step " + std::to_string(step) +
                                   ": the training loss is not finite (the parameters diverged: "
                                   "a lower --lr or a --clip may help); nothing more is saved");
        if (progress.due())
          std::cerr << "epoch " << epoch << ": " << epochResult.examples << "/" << order.size()
                    << " examples, train loss " << epochResult.loss << "\n";
      }
      nlohmann::json report = {{"epoch", epoch},
                               {"train", epochResult.toJson(model_.metricNames())}};
      std::optional<BatchResult> devResult;
      if (!dev.lines.empty()) {
        devResult = evaluate(dev);
        report["dev"] = devResult->toJson(model_.metricNames());
      }
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      report["seconds"] = seconds;
      std::cout << report.dump() << std::endl;
      std::cerr << "epoch " << epoch << " done: " << report.dump() << "\n";
      if (curve.is_open())
        writeCurveLine(curve, epoch, epochResult, devResult, seconds);
      // Keep the parameters with the best dev loss (the last ones without --dev).
      if (!o_.save.empty() && (!devResult || devResult->loss < bestDev)) {
        model_.saveParams(o_.save);
        if (devResult)
          bestDev = devResult->loss;
      }
    }
    return 0;
  }

  int eval() {
    Dataset data = loadSome(0, o_.data, o_.limit);
    start();
    std::cout << evaluate(data).toJson(model_.metricNames()).dump() << std::endl;
    return flushed();
  }

  int infer() {
    Dataset data = load(0, o_.data, o_.limit);
    start();
    std::vector<int32_t> all = data.indices();
    for (size_t at = 0; at < all.size(); at += size_t(o_.batchSize)) {
      auto batch = slice(all, at);
      for (const nlohmann::json &output :
           located(data, batch, [&] { return model_.infer(data.set, batch, runOptions()); }))
        std::cout << output.dump() << '\n';
    }
    return flushed();
  }

  /// Gradients of the whole of --data against finite differences, and
  /// batched against per-example: one JSON line; exit 1 when either fails.
  int check() {
    Dataset data = loadSome(0, o_.data, o_.limit);
    start();
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

  /// Threads, then the parameters: loaded with --params, else initialised from --seed.
  void start() {
    configureProcess(o_.threads);
    if (o_.params.empty())
      model_.init(o_.seed);
    else
      model_.loadParams(o_.params);
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

  BatchResult evaluate(const Dataset &data) {
    std::vector<int32_t> all = data.indices();
    BatchResult total;
    for (size_t at = 0; at < all.size(); at += size_t(o_.batchSize)) {
      auto batch = slice(all, at);
      total.add(located(data, batch, [&] { return model_.eval(data.set, batch, runOptions()); }));
    }
    return total;
  }

  std::ofstream openCurve() {
    std::ofstream curve(o_.curve);
    if (!curve)
      throw std::runtime_error("cannot write '" + o_.curve + "'");
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
      nlohmann::json j = r.toJson(model_.metricNames());
      curve << ',' << r.loss;
      for (const std::string &m : model_.metricNames())
        curve << ',' << j[m].template get<double>();
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

/// Runs `work` on a thread whose stack is `bytes` large; its exception, if
/// any, is rethrown here.
int onLargeStack(size_t bytes, const std::function<int()> &work) {
  struct Job {
    const std::function<int()> *work;
    int result = 0;
    std::exception_ptr error;
  } job;
  job.work = &work;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, bytes);
  pthread_t thread;
  auto run = [](void *p) -> void * {
    auto *j = static_cast<Job *>(p);
    try {
      j->result = (*j->work)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  int failed = pthread_create(&thread, &attributes, run, &job);
  pthread_attr_destroy(&attributes);
  if (failed)
    return work(); // no thread to be had: the ordinary stack
  pthread_join(thread, nullptr);
  if (job.error)
    std::rethrow_exception(job.error);
  return job.result;
}

} // namespace

int runDriver(int argc, char **argv, const std::string &name, DriverModel &model) {
  CLI::App app{name + ": train, evaluate or run the model (generated by foldc)"};
  app.require_subcommand(1);
  DriverOptions o;
  auto common = [&](CLI::App *cmd) {
    cmd->add_option("--data", o.data, "JSON Lines examples")->required();
    cmd->add_option("--params", o.params, "safetensors parameters to start from");
    cmd->add_option("--batch-size", o.batchSize, "examples per batch (default 32)")
        ->check(kUnsigned & CLI::Range(1, 1 << 30));
    cmd->add_option("--threads", o.threads, "threads for Eigen (default 1)")
        ->check(kUnsigned & CLI::Range(1, 1024));
    cmd->add_option("--seed", o.seed, "initialisation, shuffling and dropout seed (default 1)")
        ->check(kUnsigned);
    cmd->add_option("--limit", o.limit, "use only the first N examples of --data (0: all)")
        ->check(kUnsigned);
    cmd->add_flag("--no-batching", o.noBatching, "run every instance alone (the baseline)");
  };
  CLI::App *train = app.add_subcommand("train", "train on --data, evaluating --dev each epoch");
  common(train);
  train->add_option("--dev", o.dev, "JSON Lines examples evaluated after each epoch");
  train->add_option("--dev-limit", o.devLimit, "use only the first N examples of --dev")
      ->check(kUnsigned);
  train->add_option("--save", o.save, "write parameters here (the best dev loss with --dev)");
  train->add_option("--epochs", o.epochs, "passes over --data (default 10)")
      ->check(kUnsigned & CLI::Range(1, 1 << 30));
  train->add_option("--optimizer", o.optimizer, "sgd, adagrad or adam (default)")
      ->check(CLI::IsMember({"sgd", "adagrad", "adam"}));
  train->add_option("--lr", o.lr, "learning rate (default: sgd 0.1, adagrad 0.05, adam 0.001)")
      ->check(kFinite & CLI::PositiveNumber);
  train->add_option("--clip", o.clip, "clip gradients to this global L2 norm (default: none)")
      ->check(kFinite & CLI::NonNegativeNumber);
  train->add_option("--curve", o.curve, "write the learning curve here as CSV");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if ((eval->parsed() || infer->parsed()) && o.params.empty() && !o.init) {
    std::cerr << name << ": error: " << (eval->parsed() ? "eval" : "infer")
              << " needs --params FILE (or --init for new parameters from --seed)\n";
    return 2;
  }
  try {
    return onLargeStack(size_t(1) << 30, [&] {
      Driver driver(o, model);
      int status = train->parsed()   ? driver.train()
                   : eval->parsed()  ? driver.eval()
                   : check->parsed() ? driver.check()
                                     : driver.infer();
      model.unload();
      return status;
    });
  } catch (const std::exception &e) {
    std::cerr << name << ": error: " << e.what() << '\n';
    return 1;
  }
}

} // namespace foldc::rt
