// The dynet-benchmark treenn Tree-LSTM (bench/treenn.fold, compiled by foldc)
// on the SST training trees: trees/s of training (Adam, lr 1e-3, one step
// per minibatch) and inference at several minibatch sizes, batched and
// --no-batching, with 1 and 2 threads; GFLOP/s against the sgemm peak
// measured in the same run, where the time goes, and peak memory.
#include "bench/Measure.h"
#include "runtime/GemmClock.h"
#include "runtime/Optimizers.h"
#include "runtime/Process.h"
#include "treenn.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace foldc::rt;
using foldc::bench::Clock;
using foldc::bench::secondsSince;

struct Options {
  std::string data = "build/sst/train.jsonl";
  std::vector<int> batches{1, 16, 64, 256};
  std::vector<int> threads{1, 2};
  int trees = 2048;          ///< trees per batched configuration (after a warm-up batch)
  int unbatchedTrees = 512;  ///< trees per --no-batching configuration
};

/// DyNet's autobatching on the same model and data, one thread (issue 12 of
/// this project, measured on this machine class; runs vary by 10-20%).
const std::map<int, double> kDynetTraining{{1, 1235}, {16, 2197}, {64, 2103}, {256, 1854}};
const std::map<int, double> kDynetInference{{1, 4777}, {16, 5624}, {64, 4915}, {256, 3682}};

/// One configuration's time, summed over its timed minibatches, by phase.
struct Phases {
  int trees = 0;
  double total = 0, unfold = 0, schedule = 0, gather = 0, gemm = 0, optimizer = 0;
  double flops = 0; ///< forward FLOPs of the kernels run (training: x3)
};

/// Forward FLOPs of the kernels the last forward ran.
double forwardFlops(const Executor &executor) {
  double flops = 0;
  for (const Batch &batch : executor.schedule().batches)
    flops += batch.kernel->signature().flops * double(batch.instances.size());
  return flops;
}

/// Runs `trees` in minibatches of `batchSize` from freshly initialised
/// parameters. The first minibatch warms the buffers up and is not timed.
Phases run(treenn::Model &model, std::span<const treenn::Tree *const> trees, int batchSize,
           bool batching, bool training) {
  model.init(1);
  Adam adam(1e-3);
  RunOptions options;
  options.batching = batching;
  Phases p;
  for (size_t first = 0; first < trees.size(); first += size_t(batchSize)) {
    auto batch = trees.subspan(first, std::min(trees.size() - first, size_t(batchSize)));
    if (first == 0)
      GemmClock::reset();
    auto start = Clock::now();
    if (training)
      model.train_step(batch, adam, options);
    else
      model.infer(batch, options);
    double seconds = secondsSince(start);
    if (first == 0) {
      GemmClock::reset();
      continue;
    }
    const ExecStats &stats = model.executor().stats();
    p.trees += int(batch.size());
    p.total += seconds;
    p.unfold += model.times().unfold;
    p.schedule += stats.schedule;
    p.gather += stats.gather + stats.scatter;
    p.optimizer += model.times().optimizer;
    p.flops += forwardFlops(model.executor()) * (training ? 3 : 1);
  }
  p.gemm = GemmClock::seconds();
  return p;
}

void printHeader(const char *mode) {
  std::printf("\n%s\n%7s %6s %8s %10s %9s %8s %7s %6s %9s %6s %6s %6s\n", mode, "threads",
              "batch", "batching", "trees/s", "vs DyNet", "GFLOP/s", "%peak", "unfold",
              "sched+gath", "GEMM", "other", "optim");
}

void printRow(int threads, int batch, bool batching, const Phases &p, double peak,
              const std::map<int, double> &dynet) {
  double treesPerSecond = p.trees / p.total;
  double gflops = p.flops / p.total / 1e9;
  double other = p.total - p.unfold - p.schedule - p.gather - p.gemm - p.optimizer;
  auto share = [&](double seconds) { return 100 * seconds / p.total; };
  auto reference = dynet.find(batch);
  std::string ratio = threads == 1 && batching && reference != dynet.end()
                          ? std::to_string(treesPerSecond / reference->second).substr(0, 4) + "x"
                          : "";
  std::printf("%7d %6d %8s %10.0f %9s %8.1f %6.0f%% %5.1f%% %9.1f%% %5.1f%% %5.1f%% %5.1f%%\n",
              threads, batch, batching ? "yes" : "no", treesPerSecond, ratio.c_str(), gflops,
              100 * gflops / peak, share(p.unfold), share(p.schedule + p.gather), share(p.gemm),
              share(other), share(p.optimizer));
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"treenn Tree-LSTM on SST: training and inference throughput"};
  Options o;
  app.add_option("--data", o.data, "SST training trees as JSON Lines (scripts/run.sh makes them)");
  app.add_option("--batches", o.batches, "minibatch sizes")->delimiter(',');
  app.add_option("--threads", o.threads, "thread counts")->delimiter(',');
  app.add_option("--trees", o.trees, "trees per batched configuration");
  app.add_option("--unbatched-trees", o.unbatchedTrees, "trees per --no-batching configuration");
  CLI11_PARSE(app, argc, argv);

  std::fprintf(stderr, "[bench] reading %s...\n", o.data.c_str());
  std::vector<treenn::Tree> examples = treenn::readExamples(o.data);
  std::vector<const treenn::Tree *> trees;
  for (const treenn::Tree &t : examples)
    trees.push_back(&t);
  std::printf("treenn (embedding 128, Tree-LSTM 128, loss at every node) on %zu SST trees\n",
              trees.size());
  GemmClock::enable(true);
  treenn::Model model;
  std::map<int, double> peaks;
  for (int threads : o.threads) {
    configureProcess(threads);
    std::fprintf(stderr, "[bench] sgemm peak with %d threads...\n", threads);
    peaks[threads] = foldc::bench::sgemmPeak(1024);
    std::printf("sgemm peak, %d threads: %.1f GFLOP/s\n", threads, peaks[threads]);
  }
  std::printf("shares of the time: unfolding; scheduling and gathering/scattering rows; GEMM;\n"
              "other kernel work (element-wise, gradients' zero-fill); the optimizer step.\n"
              "vs DyNet: against DyNet's autobatching on this model and data, one thread, as\n"
              "measured in issue 12 on a host whose sgemm peak was about 140 GFLOP/s\n");
  for (bool training : {true, false}) {
    printHeader(training ? "training (Adam)" : "inference (outputs only)");
    for (int threads : o.threads) {
      // As the generated driver's --threads: Eigen's GEMMs use the threads.
      // (Splitting rows over a WorkerPool as well nests one parallelism in
      // the other: measured slower than one thread here.)
      configureProcess(threads);
      for (int batch : o.batches)
        for (bool batching : {true, false}) {
          int count = std::min(int(trees.size()), batching ? o.trees : o.unbatchedTrees);
          count = std::max(count, 2 * batch); // a warm-up minibatch and a timed one
          std::fprintf(stderr, "[bench] %s, %d threads, batch %d, %s: %d trees...\n",
                       training ? "training" : "inference", threads, batch,
                       batching ? "batched" : "unbatched", count);
          Phases p = run(model, std::span(trees).first(size_t(std::min<size_t>(count, trees.size()))),
                         batch, batching, training);
          printRow(threads, batch, batching, p, peaks[threads],
                   training ? kDynetTraining : kDynetInference);
        }
    }
  }
  std::printf("\npeak RSS: %.0f MiB\n", foldc::bench::peakRssMiB());
  return 0;
}
