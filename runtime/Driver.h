// The command line of a generated model (`NAME train|eval|infer|check`): the
// generated NAME_main.cpp calls runDriver with its Model and example reader.
#pragma once

#include "runtime/GradientCheck.h"
#include "runtime/Jsonl.h"
#include "runtime/Model.h"
#include "runtime/Process.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace foldc::rt {

struct DriverOptions {
  std::string data, dev, params, save, curve, optimizer = "adam";
  int epochs = 10, batchSize = 32, threads = 1;
  long limit = 0, devLimit = 0; ///< use only the first N examples (0: all)
  double lr = 0, clip = 0;      ///< lr 0: the optimizer's default
  double step = 1e-2;           ///< check: the finite-difference step
  uint64_t seed = 1;
  bool noBatching = false;
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

template <class M> class Driver {
public:
  using Example = typename M::Example;
  using Reader = std::vector<Example> (*)(const std::string &, std::vector<long> *);

  Driver(const DriverOptions &options, Reader read) : o_(options), read_(read) {}

  int train() {
    Dataset data = load(o_.data, o_.limit), dev;
    if (!o_.dev.empty())
      dev = load(o_.dev, o_.devLimit);
    start();
    double lr = o_.lr > 0 ? o_.lr : o_.optimizer == "sgd" ? 0.1 : o_.optimizer == "adagrad" ? 0.05 : 1e-3;
    std::unique_ptr<Optimizer> optimizer = makeOptimizer(o_.optimizer, lr, o_.clip);
    std::ofstream curve;
    if (!o_.curve.empty())
      curve = openCurve();
    std::vector<const Example *> order = data.pointers();
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
        epochResult.add(located(data, batch, [&] { return model_.train_step(batch, *optimizer, run); }));
        if (progress.due())
          std::cerr << "epoch " << epoch << ": " << epochResult.examples << "/" << order.size()
                    << " examples, train loss " << epochResult.loss << "\n";
      }
      nlohmann::json report = {{"epoch", epoch},
                               {"train", epochResult.toJson(model_.metricNames())}};
      std::optional<BatchResult> devResult;
      if (!dev.examples.empty()) {
        devResult = evaluate(dev);
        report["dev"] = devResult->toJson(model_.metricNames());
      }
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      report["seconds"] = seconds;
      std::cout << report.dump() << std::endl;
      std::cerr << "epoch " << epoch << " done: " << report.dump() << "\n";
      if (curve)
        writeCurveLine(curve, epoch, epochResult, devResult, seconds);
      // Keep the parameters with the best dev loss (the last ones without --dev).
      if (!o_.save.empty() && (!devResult || devResult->loss < bestDev)) {
        model_.save(o_.save);
        if (devResult)
          bestDev = devResult->loss;
      }
    }
    return 0;
  }

  int eval() {
    Dataset data = load(o_.data, o_.limit);
    start();
    std::cout << evaluate(data).toJson(model_.metricNames()).dump() << std::endl;
    return 0;
  }

  int infer() {
    Dataset data = load(o_.data, o_.limit);
    start();
    std::vector<const Example *> all = data.pointers();
    for (size_t at = 0; at < all.size(); at += size_t(o_.batchSize)) {
      auto batch = slice(all, at);
      for (const nlohmann::json &output :
           located(data, batch, [&] { return model_.infer(batch, runOptions()); }))
        std::cout << output.dump() << '\n';
    }
    std::cout.flush();
    return 0;
  }

  /// Gradients of the whole of --data against finite differences, and
  /// batched against per-example: one JSON line; exit 1 when either fails.
  int check() {
    Dataset data = load(o_.data, o_.limit);
    start();
    std::vector<const Example *> all = data.pointers();
    GradientCheck c = located(data, typename M::Batch(all), [&] {
      return checkGradients(model_, typename M::Batch(all), o_.step);
    });
    nlohmann::json report = {{"probes", c.probes},
                             {"failures", c.failures},
                             {"worst", c.worst},
                             {"worst_at", c.worstAt},
                             {"batched_equals_unbatched", c.batchedEqualsUnbatched}};
    if (!c.batchedEqualsUnbatched)
      report["mismatch_at"] = c.mismatchAt;
    std::cout << report.dump() << std::endl;
    return c.passed() ? 0 : 1;
  }

private:
  /// Examples and the line each came from.
  struct Dataset {
    std::string file;
    std::vector<Example> examples;
    std::vector<long> lines;

    std::vector<const Example *> pointers() const {
      std::vector<const Example *> out;
      for (const Example &e : examples)
        out.push_back(&e);
      return out;
    }
  };

  Dataset load(const std::string &file, long limit) {
    Dataset set;
    set.file = file;
    set.examples = read_(file, &set.lines);
    if (limit > 0 && set.examples.size() > size_t(limit))
      set.examples.resize(size_t(limit));
    std::cerr << file << ": " << set.examples.size() << " examples\n";
    return set;
  }

  /// Runs `step` on `batch`; when it fails (a word id outside the embedding,
  /// a label outside the classes...), finds the first example that fails
  /// alone and reports it as `FILE:LINE: what`.
  template <class Step>
  auto located(const Dataset &set, typename M::Batch batch, Step &&step) -> decltype(step()) {
    try {
      return step();
    } catch (const std::exception &) {
      for (const Example *example : batch) {
        try {
          model_.eval(typename M::Batch(&example, 1));
        } catch (const std::exception &e) {
          throw DataError(set.file + ":" + std::to_string(set.lines[size_t(example - set.examples.data())]) +
                          ": " + e.what());
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
      model_.load(o_.params);
  }

  RunOptions runOptions() const {
    RunOptions run;
    run.batching = !o_.noBatching;
    return run;
  }

  std::span<const Example *const> slice(const std::vector<const Example *> &all, size_t at) const {
    size_t n = std::min(all.size() - at, size_t(o_.batchSize));
    return std::span<const Example *const>(all.data() + at, n);
  }

  BatchResult evaluate(const Dataset &set) {
    std::vector<const Example *> all = set.pointers();
    BatchResult total;
    for (size_t at = 0; at < all.size(); at += size_t(o_.batchSize)) {
      auto batch = slice(all, at);
      total.add(located(set, batch, [&] { return model_.eval(batch, runOptions()); }));
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
  }

  DriverOptions o_;
  Reader read_;
  M model_;
};

/// `NAME train|eval|infer|check`. Exit status: 0, 1 on bad data,
/// parameters or files (or a failed check), 2 on bad usage.
template <class M>
int runDriver(int argc, char **argv, const std::string &name,
              typename Driver<M>::Reader read) {
  CLI::App app{name + ": train, evaluate or run the model (generated by foldc)"};
  app.require_subcommand(1);
  DriverOptions o;
  auto common = [&](CLI::App *cmd) {
    cmd->add_option("--data", o.data, "JSON Lines examples")->required();
    cmd->add_option("--params", o.params, "safetensors parameters to start from");
    cmd->add_option("--batch-size", o.batchSize, "examples per batch (default 32)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--threads", o.threads, "threads for Eigen (default 1)");
    cmd->add_option("--seed", o.seed, "initialisation, shuffling and dropout seed (default 1)");
    cmd->add_option("--limit", o.limit, "use only the first N examples of --data");
    cmd->add_flag("--no-batching", o.noBatching, "run every instance alone (the baseline)");
  };
  CLI::App *train = app.add_subcommand("train", "train on --data, evaluating --dev each epoch");
  common(train);
  train->add_option("--dev", o.dev, "JSON Lines examples evaluated after each epoch");
  train->add_option("--dev-limit", o.devLimit, "use only the first N examples of --dev");
  train->add_option("--save", o.save, "write parameters here (the best dev loss with --dev)");
  train->add_option("--epochs", o.epochs, "passes over --data (default 10)");
  train->add_option("--optimizer", o.optimizer, "sgd, adagrad or adam (default)")
      ->check(CLI::IsMember({"sgd", "adagrad", "adam"}));
  train->add_option("--lr", o.lr, "learning rate (default: sgd 0.1, adagrad 0.05, adam 0.001)");
  train->add_option("--clip", o.clip, "clip gradients to this global L2 norm (default: none)");
  train->add_option("--curve", o.curve, "write the learning curve here as CSV");
  CLI::App *eval = app.add_subcommand("eval", "print the mean loss and metrics of --data as JSON");
  common(eval);
  CLI::App *infer = app.add_subcommand("infer", "print each example's output as a JSON line");
  common(infer);
  CLI::App *check = app.add_subcommand(
      "check", "check the gradients on --data against finite differences, and batched against "
               "per-example execution; prints one JSON line, exits 1 on a mismatch");
  common(check);
  check->add_option("--step", o.step, "finite-difference step (default 0.01)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    Driver<M> driver(o, read);
    if (train->parsed())
      return driver.train();
    if (eval->parsed())
      return driver.eval();
    if (check->parsed())
      return driver.check();
    return driver.infer();
  } catch (const std::exception &e) {
    std::cerr << name << ": error: " << e.what() << '\n';
    return 1;
  }
}

} // namespace foldc::rt
