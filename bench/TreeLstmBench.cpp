// The Fold paper's Table 1 on this runtime: a Tree-LSTM over random binary
// trees of 128 leaves, per-tree time of (a) unbatched execution, (b) dynamic
// batching of differently shaped trees and (c) a hand-written static batch
// of identically shaped trees, for inference and training.
#include "bench/Measure.h"
#include "runtime/engine/Executor.h"
#include "runtime/engine/Gemm.h"
#include "runtime/engine/Optimizers.h"
#include "runtime/engine/Process.h"
#include "runtime/engine/WorkerPool.h"
#include "runtime/reference/TreeLstm.h"

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include <chrono>
#include <cstdio>
#include <iostream>

namespace {

using namespace foldc::rt;
using foldc::bench::Clock;
using foldc::bench::secondsSince;
using foldc::bench::sgemmPeak;
using reference::Tree;

constexpr int kLeaves = 128, kVocab = 1000, kClasses = 5;

struct Timing {
  double perTree = 0;       ///< seconds per tree
  double overheadShare = 0; ///< unfolding + scheduling + gathering, of the total
};

/// Dynamic batching (or, with batching off, the unbatched baseline).
template <int N>
Timing runDynamic(reference::TreeLstmModel<N, kClasses> &model, ParamStore &params,
                  const std::vector<Tree> &trees, int batchSize, bool batching, bool training,
                  Optimizer &optimizer, WorkerPool *pool) {
  Executor exec(params);
  exec.setWorkerPool(pool);
  double total = 0, overhead = 0;
  // The first batch is a warm-up (buffers grow to size); it is not timed.
  for (size_t first = 0, timed = 0; first < trees.size(); first += size_t(batchSize)) {
    auto start = Clock::now();
    BatchGraph graph;
    for (size_t t = first; t < std::min(trees.size(), first + size_t(batchSize)); ++t) {
      graph.beginExample();
      model.unfold(graph, trees[t]);
    }
    double unfold = secondsSince(start);
    exec.forward(graph, ExecOptions{batching, training, 1});
    if (training) {
      exec.backward();
      optimizer.step(params);
    }
    if (first == 0 && trees.size() > size_t(batchSize))
      continue;
    timed += std::min(trees.size() - first, size_t(batchSize));
    total += secondsSince(start);
    overhead += unfold + exec.stats().schedule + exec.stats().gather;
    if (first + size_t(batchSize) >= trees.size())
      return {total / double(timed), overhead / total};
  }
  return {};
}

/// The static batch: every tree is the balanced 128-leaf tree, so level l of
/// all trees is one matrix and a node's children are rows 2i and 2i+1 of the
/// level below: [h_left, h_right] is that matrix read as rows of 2N, with no
/// copy. Same math (TreeLstmCell), same classifier and loss at the root.
template <int N>
double runStatic(reference::TreeLstmModel<N, kClasses> &model, ParamStore &params,
                 const std::vector<Tree> &trees, int batchSize, bool training,
                 Optimizer &optimizer) {
  using Cell = reference::TreeLstmCell<N>;
  using Mat = typename Cell::Mat;
  using Strided = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;
  const Param &embedding = params.at(model.embedding());
  double total = 0;
  size_t timed = 0;
  for (size_t first = 0; first < trees.size(); first += size_t(batchSize)) {
    auto start = Clock::now();
    WeightPass pass; // the cell's weights packed once a batch, as the executor does
    int batch = int(std::min(trees.size() - first, size_t(batchSize)));
    std::vector<Mat> h, c, gates; // level 0: leaves
    h.emplace_back(batch * kLeaves, N);
    c.push_back(Mat::Zero(batch * kLeaves, N));
    gates.emplace_back();
    for (int t = 0; t < batch; ++t) {
      int leaf = 0;
      for (const Tree::Node &node : trees[first + size_t(t)].nodes)
        if (node.isLeaf())
          h[0].row(t * kLeaves + leaf++) = Eigen::Map<const Eigen::RowVectorXf>(
              embedding.value.data() + size_t(node.word) * N, N);
    }
    auto children = [&](Mat &m, int rows, int offset) {
      return Strided(m.data() + offset * N, rows, N, Eigen::OuterStride<>(2 * N));
    };
    for (int rows = batch * kLeaves / 2; rows >= batch; rows /= 2) {
      Mat &below = h.back(), &belowC = c.back();
      Eigen::Map<const Mat> x(below.data(), rows, 2 * N);
      Mat nh(rows, N), nc(rows, N), ng(rows, 5 * N);
      Cell::forward(x, children(belowC, rows, 0), children(belowC, rows, 1), ng, nh, nc, params,
                    model.cellWeights(), model.cellBias());
      h.push_back(std::move(nh));
      c.push_back(std::move(nc));
      gates.push_back(std::move(ng));
    }
    // Root classifier and loss, through the same kernels as the dynamic run.
    std::vector<int32_t> labels;
    for (int t = 0; t < batch; ++t)
      labels.push_back(trees[first + size_t(t)].nodes.back().label);
    Mat logits(batch, kClasses), losses(batch, 1);
    ExecContext ctx{&params, training, 1};
    const float *rootArgs[] = {h.back().data()};
    float *logitOuts[] = {logits.data()};
    ForwardCall fc = forwardCall(batch, rootArgs, logitOuts, {}, &ctx);
    model.classifier().forward(fc);
    const float *lossArgs[] = {logits.data()};
    float *lossOuts[] = {losses.data()};
    ForwardCall xc = forwardCall(batch, lossArgs, lossOuts, HostRows{labels.data()}, &ctx);
    model.xent().forward(xc);
    if (training) {
      Mat dLoss = Mat::Constant(batch, 1, 1.0f / float(batch)), dLogits(batch, kClasses);
      const float *dl[] = {dLoss.data()};
      float *dLogitsOut[] = {dLogits.data()};
      BackwardCall xb;
      static_cast<ForwardCall &>(xb) = xc;
      xb.outGrads = dl;
      xb.argGrads = dLogitsOut;
      model.xent().backward(xb);
      Mat dh(batch, N);
      const float *dLogitsIn[] = {dLogits.data()};
      float *dhOut[] = {dh.data()};
      BackwardCall fb;
      static_cast<ForwardCall &>(fb) = fc;
      fb.outGrads = dLogitsIn;
      fb.argGrads = dhOut;
      model.classifier().backward(fb);
      Mat dc = Mat::Zero(batch, N);
      for (size_t level = h.size() - 1; level > 0; --level) {
        int rows = int(h[level].rows());
        Mat dBelowH(2 * rows, N), dBelowC(2 * rows, N);
        Eigen::Map<Mat> dx(dBelowH.data(), rows, 2 * N);
        Eigen::Map<const Mat> x(h[level - 1].data(), rows, 2 * N);
        Cell::backward(x, children(c[level - 1], rows, 0), children(c[level - 1], rows, 1),
                       gates[level], c[level], dh, dc, nullptr, dx, children(dBelowC, rows, 0),
                       children(dBelowC, rows, 1), params, model.cellWeights(), model.cellBias());
        dh = std::move(dBelowH);
        dc = std::move(dBelowC);
      }
      Param &e = params.at(model.embedding());
      for (int t = 0; t < batch; ++t) {
        int leaf = 0;
        for (const Tree::Node &node : trees[first + size_t(t)].nodes)
          if (node.isLeaf()) {
            e.touchRow(node.word);
            Eigen::Map<Eigen::RowVectorXf>(e.grad.data() + size_t(node.word) * N, N) +=
                dh.row(t * kLeaves + leaf++);
          }
      }
      optimizer.step(params);
    }
    if (first == 0 && trees.size() > size_t(batchSize))
      continue; // warm-up
    timed += size_t(batch);
    total += secondsSince(start);
  }
  return total / double(timed);
}

struct Options {
  std::vector<int> batches{1, 4, 16, 64, 256};
  std::vector<int> batchesLarge{1, 4, 16, 64};
  int minTrees = 32;
  int minTreesLarge = 8;
  int unbatchedTrees = 16;
  int threads = 1;    // Eigen's GEMM threads: 2 measured slower here (bench/README.md)
  int rowThreads = 1; // threads splitting the rows of large forward batches
  bool large = true;
};

template <int N>
void benchmarkSize(const Options &o, double peak, const std::vector<int> &batches, int minTrees,
                   WorkerPool *pool) {
  std::mt19937_64 rng(N);
  ParamStore params;
  reference::TreeLstmModel<N, kClasses> model(params, kVocab, true, false);
  params.initialize(1);
  Sgd sgd(1e-4);
  double flopsPerTree =
      model.nodeKernel().signature().flops * (kLeaves - 1) + model.classifier().signature().flops;
  int maxBatch = *std::max_element(batches.begin(), batches.end());
  std::vector<Tree> randomTrees, balanced;
  for (int i = 0; i < std::max(2 * maxBatch, minTrees); ++i) {
    randomTrees.push_back(reference::randomTree(kLeaves, kVocab, kClasses, rng));
    balanced.push_back(reference::balancedTree(kLeaves, kVocab, kClasses, rng));
  }
  for (bool training : {false, true}) {
    const char *mode = training ? "training" : "inference";
    std::fprintf(stderr, "[bench] N=%d %s: unbatched baseline on %d trees...\n", N, mode,
                 o.unbatchedTrees);
    std::vector<Tree> few(randomTrees.begin(), randomTrees.begin() + o.unbatchedTrees);
    // Every instance runs alone; one optimizer step per group of trees. The
    // first half is the warm-up, the second half is timed.
    Timing unbatched = runDynamic<N>(model, params, few, std::max(1, int(few.size()) / 2), false,
                                     training, sgd, pool);
    double flops = training ? 3 * flopsPerTree : flopsPerTree; // backward ~ 2x forward
    std::printf("\nN = %d, %s (unbatched: %.3f ms/tree)\n", N, mode, unbatched.perTree * 1e3);
    std::printf("%6s %12s %12s %12s %9s %7s %9s %8s %9s\n", "batch", "(a) ms/tree", "(b) ms/tree",
                "(c) ms/tree", "(a)/(b)", "(b)/(c)", "GFLOP/s", "%peak", "overhead");
    for (int batch : batches) {
      std::fprintf(stderr, "[bench] N=%d %s batch %d...\n", N, mode, batch);
      size_t count = size_t(std::max(2 * batch, minTrees)); // a warm-up batch, then timed ones
      std::vector<Tree> dyn(randomTrees.begin(), randomTrees.begin() + long(count));
      std::vector<Tree> stat(balanced.begin(), balanced.begin() + long(count));
      Timing dynamic = runDynamic<N>(model, params, dyn, batch, true, training, sgd, pool);
      double staticTime = runStatic<N>(model, params, stat, batch, training, sgd);
      double gflops = flops / dynamic.perTree / 1e9;
      std::printf("%6d %12.3f %12.3f %12.3f %9.1f %7.2f %9.1f %7.0f%% %8.1f%%\n", batch,
                  unbatched.perTree * 1e3, dynamic.perTree * 1e3, staticTime * 1e3,
                  unbatched.perTree / dynamic.perTree, dynamic.perTree / staticTime, gflops,
                  100 * gflops / peak, 100 * dynamic.overheadShare);
      std::fflush(stdout);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Tree-LSTM dynamic batching benchmark (Fold paper, Table 1)"};
  Options o;
  app.add_option("--batches", o.batches, "batch sizes for N=256")->delimiter(',');
  app.add_option("--batches-large", o.batchesLarge, "batch sizes for N=1024")->delimiter(',');
  app.add_option("--min-trees", o.minTrees, "trees timed per configuration at N=256");
  app.add_option("--min-trees-large", o.minTreesLarge, "trees timed per configuration at N=1024");
  app.add_option("--unbatched-trees", o.unbatchedTrees,
                 "trees run for the unbatched baseline (half are timed)");
  app.add_option("--threads", o.threads, "threads for Eigen's GEMM");
  app.add_option("--row-threads", o.rowThreads,
                 "threads splitting the rows of large forward batches (dynamic batching)");
  app.add_flag("!--no-large", o.large, "skip state size 1024");
  CLI11_PARSE(app, argc, argv);
  configureProcess(o.threads);
  std::fprintf(stderr, "[bench] measuring the sgemm peak...\n");
  double peak = sgemmPeak(1024);
  std::printf("Tree-LSTM, random binary trees of %d leaves; GEMM threads %d, row threads %d; "
              "sgemm peak %.1f GFLOP/s\n",
              kLeaves, o.threads, o.rowThreads, peak);
  std::printf("(a) unbatched  (b) dynamic batching, trees of different shapes  "
              "(c) static batching, one shared shape\n"
              "overhead = unfolding + scheduling + gathering, share of (b)'s time\n");
  WorkerPool pool(o.rowThreads);
  benchmarkSize<256>(o, peak, o.batches, o.minTrees, &pool);
  if (o.large)
    benchmarkSize<1024>(o, peak, o.batchesLarge, o.minTreesLarge, &pool);
  return 0;
}
