// The dynet-benchmark treenn Tree-LSTM (bench/treenn.fold, compiled by foldc)
// on the SST training trees: trees/s of training (Adam, lr 1e-3, one step
// per minibatch) and inference at several minibatch sizes, batched and
// --no-batching, with 1 and 2 threads (replicas of the model); GFLOP/s against the sgemm peak
// measured in the same run, where the time goes, and peak memory.
#include "bench/Measure.h"
#include "runtime/engine/GemmClock.h"
#include "runtime/engine/Optimizers.h"
#include "runtime/engine/Process.h"
#include "runtime/parallel/DataParallel.h"
#include "runtime/parallel/ThreadTeam.h"
#include "runtime/support/Memory.h"
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
  int trees = 8544; ///< trees per batched configuration: all of SST train (after a warm-up batch)
  int unbatchedTrees = 512; ///< trees per --no-batching configuration
};

/// One configuration's time, summed over its timed minibatches, by phase.
struct Phases {
  int trees = 0;
  double total = 0, unfold = 0, schedule = 0, gather = 0, gemm = 0, optimizer = 0;
  double sync = 0;  ///< replicas: waiting for the slower one and summing gradients
  double flops = 0; ///< forward FLOPs of the kernels run (training: x3)
};

/// Forward FLOPs of the kernels the last forward ran.
double forwardFlops(const Executor &executor) {
  double flops = 0;
  for (const Batch &batch : executor.schedule().batches)
    flops += batch.kernel->signature().flops * double(batch.rows);
  return flops;
}

/// The trees and their sizes (the lengths of their JSON lines, as the
/// driver's data-parallel split measures them).
struct Trees {
  std::vector<const treenn::Tree *> all;
  std::vector<double> sizes;
};

/// One minibatch step of a replica: training (gradients summed over the
/// team, then its own optimizer step) or inference of its share.
void step(treenn::Model &model, std::span<const treenn::Tree *const> mine, bool training,
          const RunOptions &options, Adam &adam, GradientExchange &exchange, Communicator &team,
          Phases &p) {
  if (!training) {
    if (!mine.empty())
      model.infer(mine, options);
    auto waitStart = Clock::now();
    team.barrier(); // the step ends with the slower replica
    p.sync += secondsSince(waitStart);
    return;
  }
  if (team.size() == 1) {
    model.train_step(mine, adam, options);
    p.optimizer += model.times().optimizer;
    return;
  }
  if (mine.empty())
    model.params().zeroGrads();
  else
    model.gradients(mine, options, true);
  GradientExchange::Timed sum = exchange.waitAndSum(model.params(), team);
  p.sync += sum.waitSeconds + sum.sumSeconds;
  auto optimizerStart = Clock::now();
  adam.step(model.params());
  p.optimizer += secondsSince(optimizerStart);
}

/// Runs `count` trees in minibatches of `batchSize` from freshly initialised
/// parameters, data-parallel over the team's replicas (`models`, one per
/// thread, each running its GEMMs on one thread). The first minibatch warms
/// the buffers up and is not timed. Gives replica 0's phases, with the
/// trees and FLOPs of all.
Phases run(ThreadTeam &team, std::vector<treenn::Model> &models, const Trees &trees, size_t count,
           int batchSize, bool batching, bool training) {
  std::vector<Phases> phases(size_t(team.size()));
  team.run(size_t(1) << 26, [&](Communicator &comm) {
    size_t rank = size_t(comm.rank());
    treenn::Model &model = models[rank];
    model.init(1); // the same parameters on every replica
    Adam adam(1e-3);
    GradientExchange exchange;
    RunOptions options;
    options.batching = batching;
    Phases &p = phases[rank];
    std::vector<const treenn::Tree *> mine;
    for (size_t first = 0; first < count; first += size_t(batchSize)) {
      size_t n = std::min(count - first, size_t(batchSize));
      mine.clear();
      for (uint32_t place :
           shareOfBatch(std::span(trees.sizes).subspan(first, n), comm.rank(), comm.size()))
        mine.push_back(trees.all[first + place]);
      comm.barrier(); // the replicas start each step together
      auto start = Clock::now();
      options.globalBatch = int(n); // each replica's gradients: its part of the minibatch's mean
      step(model, mine, training, options, adam, exchange, comm, p);
      double seconds = secondsSince(start);
      if (first == 0) {
        p = Phases{};
        comm.barrier();
        if (rank == 0)
          GemmClock::reset();
        comm.barrier();
        continue;
      }
      const ExecStats &stats = model.executor().stats();
      p.trees += int(mine.size());
      p.total += seconds;
      if (!mine.empty()) {
        p.unfold += model.times().unfold;
        p.schedule += stats.schedule;
        p.gather += stats.gather + stats.scatter;
        p.flops += forwardFlops(model.executor()) * (training ? 3 : 1);
      }
    }
    return 0;
  });
  Phases all = phases[0];
  for (size_t r = 1; r < phases.size(); ++r) {
    all.trees += phases[r].trees;
    all.flops += phases[r].flops;
  }
  all.gemm = GemmClock::seconds() / double(team.size()); // summed over the threads
  return all;
}

/// The sgemm throughput of `threads` single-threaded GEMMs running at once
/// (the replicas' machine), summed.
double sgemmPeak(int threads) {
  ThreadTeam team(threads);
  std::vector<double> each(size_t(threads), 0.0);
  team.run(size_t(1) << 26, [&](Communicator &comm) {
    comm.barrier();
    each[size_t(comm.rank())] = foldc::bench::sgemmPeak(1024);
    return 0;
  });
  double total = 0;
  for (double peak : each)
    total += peak;
  return total;
}

void printHeader(const char *mode) {
  std::printf("\n%s\n%7s %6s %8s %10s %8s %7s %6s %9s %6s %6s %6s %6s\n", mode, "threads", "batch",
              "batching", "trees/s", "GFLOP/s", "%peak", "unfold", "sched+gath", "GEMM", "other",
              "optim", "sync");
}

void printRow(int threads, int batch, bool batching, const Phases &p, double peak) {
  double treesPerSecond = p.trees / p.total;
  double gflops = p.flops / p.total / 1e9;
  double other = p.total - p.unfold - p.schedule - p.gather - p.gemm - p.optimizer - p.sync;
  auto share = [&](double seconds) { return 100 * seconds / p.total; };
  std::printf("%7d %6d %8s %10.0f %8.1f %6.0f%% %5.1f%% %9.1f%% %5.1f%% %5.1f%% %5.1f%% %5.1f%%\n",
              threads, batch, batching ? "yes" : "no", treesPerSecond, gflops, 100 * gflops / peak,
              share(p.unfold), share(p.schedule + p.gather), share(p.gemm), share(other),
              share(p.optimizer), share(p.sync));
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
  std::vector<long> lines;
  std::vector<treenn::Tree> examples = treenn::readExamples(o.data, &lines);
  Trees trees;
  trees.sizes = lineLengths(o.data, lines);
  for (const treenn::Tree &t : examples)
    trees.all.push_back(&t);
  std::printf("treenn (embedding 128, Tree-LSTM 128, loss at every node) on %zu SST trees\n",
              trees.all.size());
  // N threads are N replicas of the model, each with its share of every
  // minibatch and one GEMM thread, as the generated driver's --threads.
  // (GEMMs on several threads, the first design, reached 1.2-1.5x at 2
  // threads: a third of a step is not GEMM.)
  configureProcess(1);
  GemmClock::enable(true);
  std::map<int, double> peaks;
  for (int threads : o.threads) {
    std::fprintf(stderr, "[bench] sgemm peak of %d threads...\n", threads);
    peaks[threads] = sgemmPeak(threads);
    std::printf("sgemm peak, %d single-threaded GEMMs at once: %.1f GFLOP/s\n", threads,
                peaks[threads]);
  }
  std::printf("threads: replicas of the model, each on its share of every minibatch\n"
              "shares of the time: unfolding; scheduling and gathering/scattering rows; GEMM;\n"
              "other kernel work (element-wise, gradients' zero-fill); the optimizer step;\n"
              "sync: waiting for the slower replica and summing the replicas' gradients.\n"
              "Against DyNet and PyTorch side by side: bash bench/side_by_side.sh\n");
  for (bool training : {true, false}) {
    printHeader(training ? "training (Adam)" : "inference (outputs only)");
    for (int threads : o.threads) {
      ThreadTeam team(threads);
      std::vector<treenn::Model> models(static_cast<size_t>(threads));
      for (int batch : o.batches)
        for (bool batching : {true, false}) {
          size_t count =
              size_t(std::min(int(trees.all.size()), batching ? o.trees : o.unbatchedTrees));
          // a warm-up minibatch and a timed one
          count = std::min(trees.all.size(), std::max(count, size_t(2 * batch)));
          std::fprintf(stderr, "[bench] %s, %d threads, batch %d, %s: %zu trees...\n",
                       training ? "training" : "inference", threads, batch,
                       batching ? "batched" : "unbatched", count);
          Phases p = run(team, models, trees, count, batch, batching, training);
          printRow(threads, batch, batching, p, peaks[threads]);
        }
    }
  }
  std::printf("\npeak RSS: %.0f MiB\n", foldc::rt::peakResidentMiB());
  return 0;
}
