// Dynamic batching equals per-example execution: outputs, losses, gradients.
#include "runtime/engine/Executor.h"
#include "runtime/engine/Gemm.h"
#include "runtime/engine/WorkerPool.h"
#include "runtime/model/GradientCheck.h"
#include "runtime/model/Model.h"
#include "runtime/reference/Layers.h"
#include "runtime/reference/TreeLstm.h"

#include <Eigen/Core>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace foldc::rt {
namespace {

using reference::Tree;
using reference::TreeLstmModel;

constexpr int kN = 8, kVocab = 20;

std::vector<Tree> randomTrees(int count, uint64_t seed, int maxLeaves = 12) {
  std::mt19937_64 rng(seed);
  std::vector<Tree> trees;
  for (int i = 0; i < count; ++i) {
    int leaves = std::uniform_int_distribution<int>(1, maxLeaves)(rng);
    trees.push_back(reference::randomTree(leaves, kVocab, 5, rng));
  }
  return trees;
}

std::vector<Tree> balancedTrees(int count, int leaves, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tree> trees;
  for (int i = 0; i < count; ++i)
    trees.push_back(reference::balancedTree(leaves, kVocab, 5, rng));
  return trees;
}

/// Unfolds each tree as one example; returns the roots' instances.
template <int N, int K>
std::vector<int32_t> unfoldAll(const TreeLstmModel<N, K> &model, const std::vector<Tree> &trees,
                               BatchGraph &graph) {
  std::vector<int32_t> roots;
  for (const Tree &t : trees) {
    graph.beginExample();
    roots.push_back(model.unfold(graph, t));
  }
  return roots;
}

/// Everything a run produces that batching must not change.
struct RunResult {
  double objective;
  std::vector<std::vector<float>> roots;
  std::vector<std::vector<float>> grads;
  ExecStats stats;
  int maxDepth;
};

template <typename Unfold>
RunResult run(ParamStore &params, Unfold unfold, int examples, bool batching) {
  BatchGraph graph;
  std::vector<ValueRef> roots;
  for (int e = 0; e < examples; ++e) {
    graph.beginExample();
    roots.push_back(unfold(graph, e));
  }
  Executor exec(params);
  params.zeroGrads();
  exec.forward(graph, ExecOptions{batching, false, 0});
  exec.backward();
  RunResult r{exec.objective(), {}, {}, exec.stats(), exec.schedule().maxDepth};
  for (ValueRef root : roots) {
    auto v = exec.value(root);
    r.roots.emplace_back(v.begin(), v.end());
  }
  for (int id = 0; id < params.count(); ++id)
    r.grads.emplace_back(params.at(id).grad.begin(), params.at(id).grad.end());
  return r;
}

void expectClose(const std::vector<float> &a, const std::vector<float> &b,
                 const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k)
    ASSERT_NEAR(a[k], b[k], 1e-5 + 1e-4 * std::abs(b[k])) << what << " element " << k;
}

void expectSameResults(const RunResult &batched, const RunResult &single) {
  EXPECT_NEAR(batched.objective, single.objective, 1e-4 * std::abs(single.objective));
  ASSERT_EQ(batched.roots.size(), single.roots.size());
  for (size_t i = 0; i < batched.roots.size(); ++i)
    expectClose(batched.roots[i], single.roots[i], "output of example " + std::to_string(i));
  for (size_t id = 0; id < batched.grads.size(); ++id)
    expectClose(batched.grads[id], single.grads[id], "gradient of param " + std::to_string(id));
}

class TreeLstmBatching : public ::testing::TestWithParam<bool> {};

TEST_P(TreeLstmBatching, BatchedEqualsUnbatched) {
  bool everyNode = GetParam();
  ParamStore params;
  TreeLstmModel<kN> model(params, kVocab, true, everyNode);
  params.initialize(7);
  std::vector<Tree> trees = randomTrees(24, 99);
  auto unfold = [&](BatchGraph &g, int e) { return ValueRef{model.unfold(g, trees[e]), 0}; };
  RunResult batched = run(params, unfold, 24, true);
  RunResult single = run(params, unfold, 24, false);
  expectSameResults(batched, single);
  EXPECT_LT(batched.stats.batches, single.stats.batches / 4) << "batching must merge instances";
}

INSTANTIATE_TEST_SUITE_P(LossPlacement, TreeLstmBatching, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "LossAtEveryNode" : "LossAtRoot");
                         });

TEST(TreeLstmBatching, ThreadCountDoesNotChangeResults) {
  ParamStore params;
  TreeLstmModel<kN> model(params, kVocab, true, true);
  params.initialize(3);
  std::vector<Tree> trees = randomTrees(16, 5);
  auto unfold = [&](BatchGraph &g, int e) { return ValueRef{model.unfold(g, trees[e]), 0}; };
  Eigen::setNbThreads(1);
  setGemmThreads(1);
  RunResult one = run(params, unfold, 16, true);
  Eigen::setNbThreads(2);
  setGemmThreads(2);
  RunResult two = run(params, unfold, 16, true);
  Eigen::setNbThreads(0);
  setGemmThreads(1); // the default, which later tests in this process expect
  expectSameResults(two, one);
}

TEST(TreeLstmBatching, RowThreadsDoNotChangeForwardValues) {
  ParamStore params;
  TreeLstmModel<kN> model(params, kVocab, true, true);
  params.initialize(4);
  BatchGraph graph; // batches large enough to split
  std::vector<int32_t> roots = unfoldAll(model, randomTrees(64, 6, 24), graph);
  Executor single(params), split(params);
  WorkerPool pool(2);
  split.setWorkerPool(&pool);
  single.forward(graph, ExecOptions{});
  split.forward(graph, ExecOptions{});
  // GEMM blocking differs with the row count, so only reassociation differs.
  EXPECT_NEAR(single.objective(), split.objective(), 1e-5 * std::abs(single.objective()));
  for (int32_t root : roots) {
    auto a = single.value({root, 0}), b = split.value({root, 0});
    expectClose({b.begin(), b.end()}, {a.begin(), a.end()}, "root state");
  }
}

/// A Tree-LSTM with a classifier and loss at every node, unfolded over 12
/// random trees drawn from `seed`.
struct UnfoldedForest {
  ParamStore params;
  TreeLstmModel<kN> model{params, kVocab, true, true};
  BatchGraph graph;
  std::vector<int32_t> rootIds;
  explicit UnfoldedForest(uint64_t seed) {
    params.initialize(8);
    rootIds = unfoldAll(model, randomTrees(12, seed), graph);
  }
};

/// Inference runs only what the outputs depend on: here the states, not the
/// classifier and loss of every node; the states are the full forward's.
// `check`'s batched-against-unbatched comparison of a gradient tensor: a
// small entry of a tensor of large ones may differ by the rounding of the
// large terms summed into it (the greedy decoder: 5.8e-4 against
// 5.8e-4 + 1.2e-6 in a tensor whose largest entry is 0.05); a difference
// beyond that is still a mismatch, at its index.
TEST(GradientComparison, ScalesWithTheTensorNotOnlyTheEntry) {
  EXPECT_EQ(firstGradientMismatch({0.05f, 5.8e-4f}, {0.05f, 5.8e-4f + 1.2e-6f}), -1);
  EXPECT_EQ(firstGradientMismatch({0.05f, 5.8e-4f}, {0.05f, 6.5e-4f}), 1);
  EXPECT_EQ(firstGradientMismatch({0.05f, 5.8e-4f}, {0.0501f, 5.8e-4f}), 0);
  EXPECT_EQ(firstGradientMismatch({1e-8f, 0.0f}, {1e-8f, 0.0f}), -1);
  EXPECT_EQ(firstGradientMismatch({1.0f}, {1.0f, 2.0f}), 1);
}

// A model written by hand for checkGradients: loss = w0^2 + w1 * (w2 > 0 ?
// 1 : -1), whose branch is a "decision" (its path changes when w2 crosses
// 0), and whose reported gradient of w0 can be made wrong on purpose.
class HandModel {
public:
  using Batch = int;
  explicit HandModel(bool wrongGradient) : wrong_(wrongGradient) {
    params_.add("w", {3}, InitSpec{});
    params_.at(0).value = {0.5f, 0.25f, 0.004f};
  }
  BatchResult eval(Batch, const RunOptions & = {}) {
    const std::vector<float> &w = params_.at(0).value;
    path_ = w[2] > 0 ? 1 : 2;
    BatchResult r;
    r.examples = 1;
    r.loss = double(w[0]) * w[0] + double(w[1]) * (w[2] > 0 ? 1 : -1);
    return r;
  }
  BatchResult gradients(Batch batch, const RunOptions &options = {}) {
    params_.zeroGrads();
    BatchResult r = eval(batch, options);
    const std::vector<float> &w = params_.at(0).value;
    std::span<float> g = params_.at(0).grad;
    g[0] = (wrong_ ? 3 : 2) * w[0];
    g[1] = w[2] > 0 ? 1 : -1;
    g[2] = 0;
    return r;
  }
  ParamStore &params() { return params_; }
  const std::vector<std::string> &metricNames() const { return metrics_; }
  uint64_t lastPath() const { return path_; }

private:
  bool wrong_;
  ParamStore params_;
  std::vector<std::string> metrics_;
  uint64_t path_ = 0;
};

// w2 = 0.004 is within the default step 0.01 of the branch: its probe
// crosses the decision and is counted apart; the gradients pass.
TEST(GradientCheckDecisions, AProbeThatCrossesADecisionIsCountedApart) {
  HandModel model(false);
  GradientCheck check = checkGradients(model, 0, 0.01);
  EXPECT_EQ(check.decisions, 1);
  EXPECT_EQ(check.failures, 0);
  EXPECT_TRUE(check.passed());
}

// A wrong gradient still fails, decisions or not.
TEST(GradientCheckDecisions, AWrongGradientStillFails) {
  HandModel model(true);
  GradientCheck check = checkGradients(model, 0, 0.01);
  EXPECT_EQ(check.failures, 1);
  EXPECT_EQ(check.worstAt, "w[0]");
  EXPECT_FALSE(check.passed());
}

TEST(Executor, OnlyRootsRunsWhatTheOutputsNeed) {
  UnfoldedForest forest(9);
  auto &[params, model, graph, rootIds] = forest;
  std::vector<ValueRef> roots;
  for (int32_t id : rootIds)
    roots.push_back({id, 0});
  auto classifying = [&forest](int32_t id) { // (clang 14 cannot capture structured bindings)
    const Kernel *kernel = forest.graph.instance(id).kernel;
    return kernel == &forest.model.classifier() || kernel == &forest.model.xent();
  };
  for (bool batching : {true, false}) {
    Executor full(params), pruned(params);
    full.forward(graph, ExecOptions{batching, false, 0});
    pruned.forward(graph, ExecOptions{batching, false, 0}, std::span<const ValueRef>(roots));
    size_t classifiers = 0;
    for (int32_t id = 0; id < int32_t(graph.size()); ++id) {
      classifiers += classifying(id);
      EXPECT_EQ(pruned.isComputed(id), !classifying(id)) << "instance " << id;
    }
    EXPECT_GT(classifiers, 0u);
    EXPECT_EQ(pruned.objective(), 0.0);
    for (ValueRef root : roots) {
      auto a = full.value(root), b = pruned.value(root);
      EXPECT_EQ(std::vector<float>(a.begin(), a.end()), std::vector<float>(b.begin(), b.end()));
    }
  }
}

/// A tree whose every internal node has a leaf on its right: a chain of
/// `leaves` - 1 cells, each waiting for the one before.
Tree caterpillar(int leaves) {
  Tree tree;
  tree.nodes.push_back({0, -1, -1, 0});
  for (int i = 1; i < leaves; ++i) {
    int32_t chain = int32_t(tree.nodes.size()) - 1;
    tree.nodes.push_back({i % kVocab, -1, -1, i % 5});
    tree.nodes.push_back({-1, chain, chain + 1, 0});
  }
  return tree;
}

/// Inference along a chain reuses the space of every value once its readers
/// have run: its arena stays a few cells' worth instead of one a cell, and
/// the root's value is the full forward's.
TEST(Executor, InferenceOnAChainReusesTheValuesSpace) {
  ParamStore params;
  TreeLstmModel<kN> model(params, kVocab, true, false);
  params.initialize(4);
  BatchGraph graph;
  graph.beginExample();
  ValueRef root{model.unfold(graph, caterpillar(400)), 0};
  for (bool batching : {true, false}) {
    Executor full(params), pruned(params);
    full.forward(graph, ExecOptions{batching, false, 0});
    pruned.forward(graph, ExecOptions{batching, false, 0}, std::span<const ValueRef>(&root, 1));
    auto a = full.value(root), b = pruned.value(root);
    EXPECT_EQ(std::vector<float>(a.begin(), a.end()), std::vector<float>(b.begin(), b.end()));
    // Every cell's values (h, c, gates: 7N floats) and every leaf's (2N)
    // take space of their own in a full forward. Inference keeps a few
    // cells' worth, and (batched) the leaves: one batch at depth 1, whose
    // block the last cell still reads.
    EXPECT_GT(full.stats().valueFloats, 399u * 7 * kN);
    EXPECT_LT(pruned.stats().valueFloats, (batching ? 400u * 2 * kN : 0u) + 10u * 7 * kN)
        << "batching " << batching;
  }
}

/// A batch of thousands of rows (one tree's 4,096 leaves) runs its
/// inference forward in tiles of rows: every value is the unbatched one.
TEST(Executor, ABatchOfManyRowsRunsInTilesWithTheSameValues) {
  ParamStore params;
  TreeLstmModel<kN> model(params, kVocab, true, false);
  params.initialize(5);
  BatchGraph graph;
  std::vector<int32_t> roots = unfoldAll(model, balancedTrees(1, 4096, 3), graph);
  Executor tiled(params), single(params);
  tiled.forward(graph, ExecOptions{true, false, 0});
  single.forward(graph, ExecOptions{false, false, 0});
  int widest = 0;
  for (const Batch &batch : tiled.schedule().batches)
    widest = std::max(widest, int(batch.rows));
  EXPECT_EQ(widest, 4096);
  for (int32_t id = 0; id < int32_t(graph.size()); ++id) {
    auto a = tiled.value({id, 0}), b = single.value({id, 0});
    ASSERT_EQ(std::vector<float>(a.begin(), a.end()), std::vector<float>(b.begin(), b.end()))
        << "instance " << id;
  }
}

/// Rounds that run only what some values need leave the rest pending: a
/// later round runs it, and every value and the objective come out as in one
/// forward over everything (the interleaved runtime's infer, then eval).
TEST(Executor, WhatARoundLeavesRunsInALaterOne) {
  UnfoldedForest forest(10);
  auto &[params, model, graph, rootIds] = forest;
  for (bool batching : {true, false}) {
    Executor full(params), rounds(params);
    full.forward(graph, ExecOptions{batching, false, 0});
    WeightPass pass;
    rounds.beginForward(graph, ExecOptions{batching, false, 0});
    std::vector<ValueRef> firstHalf;
    for (size_t j = 0; j < rootIds.size() / 2; ++j)
      firstHalf.push_back({rootIds[j], 0});
    rounds.runPendingFor(firstHalf);
    EXPECT_TRUE(rounds.isComputed(rootIds.front()));
    EXPECT_FALSE(rounds.isComputed(rootIds.back()));
    const size_t firstRound = rounds.stats().instances;
    EXPECT_LT(firstRound, graph.size());
    rounds.runPending();
    rounds.endForward();
    EXPECT_EQ(rounds.stats().instances, graph.size()) << "every instance ran exactly once";
    EXPECT_NEAR(rounds.objective(), full.objective(), 1e-6 * std::abs(full.objective()));
    for (int32_t id = 0; id < int32_t(graph.size()); ++id) {
      auto a = full.value({id, 0}), b = rounds.value({id, 0});
      expectClose({b.begin(), b.end()}, {a.begin(), a.end()}, "value");
    }
  }
}

TEST(Model, CollectValueRefsFindsEveryTensorOfAnOutput) {
  std::tuple<ValueRef, std::vector<std::tuple<ValueRef, int64_t>>, int64_t, std::optional<ValueRef>,
             std::optional<ValueRef>>
      output{{1, 0}, {{{2, 0}, 5}, {{3, 1}, 6}}, 7, ValueRef{4, 0}, std::nullopt};
  std::vector<ValueRef> refs;
  collectValueRefs(output, refs);
  ASSERT_EQ(refs.size(), 4u);
  EXPECT_EQ(refs[0].instance, 1);
  EXPECT_EQ(refs[1].instance, 2);
  EXPECT_EQ(refs[2].instance, 3);
  EXPECT_EQ(refs[2].output, 1);
  EXPECT_EQ(refs[3].instance, 4);
}

TEST(Scheduler, BalancedTreeHasOneNodeBatchPerLevel) {
  ParamStore params;
  TreeLstmModel<kN> model(params, kVocab, false, false);
  params.initialize(1);
  BatchGraph graph;
  unfoldAll(model, balancedTrees(3, 8, 1), graph);
  Schedule s = scheduleByDepth(graph);
  ASSERT_EQ(s.batches.size(), 4u); // leaves, then levels of 4, 2, 1 nodes
  EXPECT_EQ(s.batches[0].rows, 24);
  EXPECT_EQ(s.batches[1].rows, 12);
  EXPECT_EQ(s.batches[2].rows, 6);
  EXPECT_EQ(s.batches[3].rows, 3);
  EXPECT_EQ(s.maxDepth, 4);
}

/// Every instance sits once in rowInstances, at its batch's row rowOf, and a
/// batch's rows keep creation order: in one schedule, and in rounds, each
/// appended after the last.
TEST(Scheduler, RowsListEachInstanceOnceAtItsRow) {
  UnfoldedForest forest(5);
  const BatchGraph &graph = forest.graph;
  std::vector<int32_t> firstRound, secondRound;
  for (int32_t id = 0; id < int32_t(graph.size()); ++id)
    (id < int32_t(graph.size()) / 2 ? firstRound : secondRound).push_back(id);
  Schedule rounds;
  appendByDepth(rounds, graph, firstRound);
  appendByDepth(rounds, graph, secondRound);
  for (const Schedule &s : {scheduleByDepth(graph), scheduleUnbatched(graph), rounds}) {
    ASSERT_EQ(s.rowInstances.size(), graph.size());
    int32_t nextRow = 0;
    for (const Batch &batch : s.batches) {
      EXPECT_EQ(batch.firstRow, nextRow) << "batches are contiguous, in order";
      nextRow += batch.rows;
      std::span<const int32_t> ids = s.instances(batch);
      EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
      for (int32_t id : ids)
        EXPECT_EQ(graph.instance(id).kernel, batch.kernel);
    }
    for (int32_t id = 0; id < int32_t(graph.size()); ++id)
      EXPECT_EQ(s.instances(s.batches[size_t(s.batchOf[id])])[size_t(s.rowOf[id])], id);
  }
}

TEST(Scheduler, ChainDepthIsItsLength) {
  ParamStore params;
  params.add("W", {3, 3}, {InitKind::Glorot});
  params.add("b", {3}, {InitKind::Zeros});
  ConstantKernel<3> zeros("zeros", 0.0f);
  FcKernel<3, 3> step("step", 0, 1, Act::Tanh);
  BatchGraph graph;
  graph.beginExample();
  ValueRef s{graph.add(zeros, {}), 0};
  for (int i = 0; i < 7; ++i)
    s = {graph.add(step, {s}), 0};
  Schedule schedule = scheduleByDepth(graph);
  EXPECT_EQ(schedule.maxDepth, 8);
  EXPECT_EQ(schedule.batches.size(), 8u);
}

TEST(Scheduler, DepthIsOneMoreThanTheDeepestArgument) {
  ConstantKernel<2> c("c", 1.0f);
  MseKernel<2> mse("mse");
  ParamStore params;
  params.add("W", {2, 2}, {InitKind::Glorot});
  params.add("b", {2}, {InitKind::Zeros});
  FcKernel<2, 2> f("f", 0, 1, Act::None);
  BatchGraph graph;
  graph.beginExample();
  int32_t a = graph.add(c, {});
  int32_t b = graph.add(f, {{a, 0}});
  int32_t d = graph.add(f, {{b, 0}});
  int32_t m = graph.add(mse, {{a, 0}, {d, 0}}); // reads a (depth 1) far later
  Schedule s = scheduleByDepth(graph);
  EXPECT_EQ(s.batches[size_t(s.batchOf[m])].depth, 4);
  EXPECT_EQ(s.batchOf[b] + 1, s.batchOf[d]);
}

/// A loss read by nothing at each step of a chain (a language model's
/// prediction of each word): the losses run as one batch at the last depth,
/// not one a step.
TEST(Scheduler, SinksRunTogetherAtTheLastDepth) {
  ConstantKernel<2> zeros("zeros", 0.0f);
  MseKernel<2> loss("loss");
  ParamStore params;
  params.add("W", {2, 2}, {InitKind::Glorot});
  params.add("b", {2}, {InitKind::Zeros});
  FcKernel<2, 2> step("step", 0, 1, Act::Tanh);
  BatchGraph graph;
  graph.beginExample();
  ValueRef s{graph.add(zeros, {}), 0};
  std::vector<int32_t> losses;
  for (int i = 0; i < 4; ++i) {
    s = {graph.add(step, {s}), 0};
    losses.push_back(graph.add(loss, {s, s}));
  }
  Schedule schedule = scheduleByDepth(graph);
  EXPECT_EQ(schedule.maxDepth, 6); // zeros, 4 steps, then every loss
  ASSERT_EQ(schedule.batches.size(), 6u);
  const Batch &last = schedule.batches.back();
  EXPECT_EQ(last.kernel, &loss);
  EXPECT_EQ(last.rows, 4);
  for (int32_t id : losses)
    EXPECT_EQ(schedule.batchOf[id], 5);
}

TEST(Executor, ValuesConsumedInOrderAreReadInPlace) {
  ParamStore params;
  TreeLstmModel<kN> model(params, kVocab, true, true);
  params.initialize(2);
  BatchGraph graph;
  unfoldAll(model, balancedTrees(4, 4, 4), graph);
  Executor exec(params);
  exec.forward(graph, ExecOptions{});
  // The classifier reads each depth's states in row order: no copies.
  EXPECT_GT(exec.stats().inPlaceArgs, 0u);
  EXPECT_GT(exec.stats().gatheredArgs, 0u); // node children are interleaved: gathered
}

/// An LSTM over variable-length sequences: embed, rnn, classify the last state.
struct LstmModel {
  static constexpr int E = 4, H = 5, V = 12;
  ParamStore &params;
  EmbeddingKernel<V, E> embed;
  ConstantKernel<H> zeros{"zeros", 0.0f};
  LstmKernel<E, H> cell;
  FcKernel<H, 3> out;
  XentKernel<3> xent{"xent"};

  explicit LstmModel(ParamStore &p)
      : params(p), embed("chars", p.add("chars.E", {V, E}, {InitKind::Uniform, -0.5, 0.5}, true)),
        cell("cell", p.add("cell.W", {E, 4 * H}, {InitKind::Glorot}),
             p.add("cell.U", {H, 4 * H}, {InitKind::Glorot}),
             p.add("cell.b", {4 * H}, {InitKind::Uniform, -0.1, 0.1})),
        out("out", p.add("out.W", {H, 3}, {InitKind::Glorot}),
            p.add("out.b", {3}, {InitKind::Zeros}), Act::None) {}

  ValueRef unfold(BatchGraph &g, const std::vector<int32_t> &chars, int32_t label) const {
    int32_t z = g.add(zeros, {});
    ValueRef h{z, 0}, c{z, 0};
    for (int32_t ch : chars) {
      int32_t x = g.add(embed, {}, {ch});
      int32_t s = g.add(cell, {{x, 0}, h, c});
      h = {s, 0};
      c = {s, 1};
    }
    int32_t logits = g.add(out, {h});
    g.addLoss({g.add(xent, {{logits, 0}}, {label}), 0});
    return {logits, 0};
  }
};

TEST(LstmBatching, VariableLengthSequencesBatchedEqualsUnbatched) {
  ParamStore params;
  LstmModel model(params);
  params.initialize(9);
  std::mt19937_64 rng(17);
  std::vector<std::vector<int32_t>> sequences;
  std::vector<int32_t> labels;
  size_t longest = 0;
  for (int i = 0; i < 20; ++i) {
    std::vector<int32_t> s(size_t(std::uniform_int_distribution<int>(0, 9)(rng)));
    for (int32_t &ch : s)
      ch = std::uniform_int_distribution<int32_t>(0, LstmModel::V - 1)(rng);
    longest = std::max(longest, s.size());
    sequences.push_back(s);
    labels.push_back(std::uniform_int_distribution<int32_t>(0, 2)(rng));
  }
  auto unfold = [&](BatchGraph &g, int e) { return model.unfold(g, sequences[e], labels[e]); };
  RunResult batched = run(params, unfold, 20, true);
  RunResult single = run(params, unfold, 20, false);
  expectSameResults(batched, single);
  // Embeddings have depth 1 and the cells chain after the zero state: a
  // sequence of n runs its cells at depths 2..n+1, then logits and loss.
  EXPECT_EQ(batched.maxDepth, int(longest) + 3);
}

TEST(WholeModelGradient, TreeLstmMatchesFiniteDifferences) {
  ParamStore params;
  TreeLstmModel<3, 3> model(params, 6, true, true);
  params.initialize(21);
  std::mt19937_64 rng(8);
  std::vector<Tree> trees;
  for (int i = 0; i < 3; ++i)
    trees.push_back(reference::randomTree(4, 6, 3, rng));
  BatchGraph graph;
  unfoldAll(model, trees, graph);
  Executor exec(params);
  params.zeroGrads();
  exec.forward(graph, ExecOptions{});
  exec.backward();
  for (int id = 0; id < params.count(); ++id) {
    Param &p = params.at(id);
    std::vector<float> analytic(p.grad.begin(), p.grad.end());
    for (size_t k = 0; k < p.value.size(); ++k) {
      double numeric = foldc::rt::centralDifference(p.value[k], 1e-2, [&] {
        exec.forward(graph, ExecOptions{});
        return exec.objective();
      });
      EXPECT_NEAR(analytic[k], numeric, 2e-3 + 2e-2 * std::abs(numeric))
          << p.name << "[" << k << "]";
    }
  }
}

TEST(Dropout, SameMaskBatchedAndUnbatchedAndSeedDependent) {
  ParamStore params;
  params.add("E", {10, 64}, {InitKind::Ones}, true);
  params.initialize(0);
  EmbeddingKernel<10, 64> embed("e", 0);
  DropoutKernel<64> dropout("dropout", 0.25f);
  BatchGraph graph;
  std::vector<ValueRef> outs;
  for (int e = 0; e < 6; ++e) {
    graph.beginExample();
    for (int i = 0; i < 3; ++i)
      outs.push_back({graph.add(dropout, {{graph.add(embed, {}, {e + i}), 0}}), 0});
  }
  auto masks = [&](bool batching, uint64_t seed) {
    Executor exec(params);
    exec.forward(graph, ExecOptions{batching, true, seed});
    std::vector<float> all;
    for (ValueRef v : outs)
      for (float x : exec.value(v))
        all.push_back(x);
    return all;
  };
  std::vector<float> a = masks(true, 5), b = masks(false, 5), c = masks(true, 6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  size_t dropped = size_t(std::count(a.begin(), a.end(), 0.0f));
  EXPECT_NEAR(double(dropped) / double(a.size()), 0.25, 0.05);
  for (float x : a)
    EXPECT_TRUE(x == 0.0f || std::abs(x - 1.0f / 0.75f) < 1e-6f);
  Executor inference(params);
  inference.forward(graph, ExecOptions{true, false, 5});
  for (float x : inference.value(outs[0]))
    EXPECT_EQ(x, 1.0f) << "dropout is the identity outside training";
}

} // namespace
} // namespace foldc::rt
