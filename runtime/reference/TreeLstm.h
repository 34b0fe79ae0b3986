// A hand-written binary Tree-LSTM (Tai et al. 2015) on the runtime: the test
// oracle for batching and the model of the benchmark (Fold paper, Table 1).
// Leaves are embedding lookups (h = E[word], c = 0); internal nodes are
// Tree-LSTM cells; an optional classifier with softmax cross-entropy gives
// the loss at the root or at every node.
#pragma once

#include "runtime/engine/BatchGraph.h"
#include "runtime/engine/Gemm.h"
#include "runtime/reference/Layers.h"

#include <algorithm>
#include <random>
#include <vector>

namespace foldc::rt::reference {

/// A binary tree stored as nodes; leaves have a word, internal nodes children.
struct Tree {
  struct Node {
    int32_t word = -1;
    int32_t left = -1, right = -1;
    int32_t label = 0;
    bool isLeaf() const { return left < 0; }
  };
  std::vector<Node> nodes; ///< children before parents; the root is last
  int root() const { return int(nodes.size()) - 1; }
};

/// A random binary tree with `leaves` leaves: random words and labels, and a
/// random split at every node (so trees of one size differ in shape).
Tree randomTree(int leaves, int vocab, int classes, std::mt19937_64 &rng);
/// The complete-as-possible balanced tree: the shape every static batch shares.
Tree balancedTree(int leaves, int vocab, int classes, std::mt19937_64 &rng);

/// The Tree-LSTM cell math on a batch, shared by the dynamic kernel and the
/// static-batched baseline. X holds [h_left, h_right] per row. The forward
/// pass keeps the activated gates [i, f_l, f_r, o, u] (5N per row) for the
/// backward pass. Rows are processed in chunks whose gates fit in cache, so
/// each element-wise pass reads data the GEMM just wrote.
template <int N> struct TreeLstmCell {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using In = Eigen::Ref<const Mat, 0, Eigen::OuterStride<>>;
  using Out = Eigen::Ref<Mat, 0, Eigen::OuterStride<>>;
  static constexpr int kChunk = 256; // rows: GEMMs stay efficient, gates stay near cache

  static void forward(const In &x, const In &cl, const In &cr, Out gates, Out h, Out c,
                      const ParamStore &p, int u, int b) {
    ParamMatrix U(const_cast<float *>(p.at(u).value.data()), 2 * N, 5 * N);
    Eigen::Map<const Eigen::Matrix<float, 1, 5 * N>> bias(p.at(b).value.data());
    for (Eigen::Index r = 0; r < x.rows(); r += kChunk) {
      Eigen::Index n = std::min<Eigen::Index>(kChunk, x.rows() - r);
      auto g = gates.middleRows(r, n);
      gemmWithWeights(Transpose::No, Transpose::No, n, 5 * N, 2 * N, x.row(r).data(),
                      x.outerStride(), U.data(), 5 * N, 0.0f, g.data(), gates.outerStride());
      g.rowwise() += bias;
      g.leftCols(4 * N) = g.leftCols(4 * N).array().logistic();
      g.rightCols(N) = g.rightCols(N).array().tanh();
      auto cc = c.middleRows(r, n);
      cc = g.leftCols(N).cwiseProduct(g.rightCols(N)) +
           g.middleCols(N, N).cwiseProduct(cl.middleRows(r, n)) +
           g.middleCols(2 * N, N).cwiseProduct(cr.middleRows(r, n));
      h.middleRows(r, n) = g.middleCols(3 * N, N).array() * cc.array().tanh();
    }
  }

  /// `dGates` (may be null) is a gradient arriving at the saved gates
  /// themselves; in a model no one reads them and it is zero.
  static void backward(const In &x, const In &cl, const In &cr, const In &gates, const In &c,
                       const In &dh, const In &dcOut, const float *dGates, Out dx, Out dcl, Out dcr,
                       ParamStore &p, int u, int b) {
    ParamMatrix U(p.at(u).value.data(), 2 * N, 5 * N), dU(p.at(u).grad.data(), 2 * N, 5 * N);
    Eigen::Map<Eigen::Matrix<float, 1, 5 * N>> db(p.at(b).grad.data());
    Mat dg(kChunk, 5 * N), dc(kChunk, N), tc(kChunk, N);
    for (Eigen::Index r = 0; r < x.rows(); r += kChunk) {
      Eigen::Index n = std::min<Eigen::Index>(kChunk, x.rows() - r);
      auto g = gates.middleRows(r, n);
      auto i = g.leftCols(N).array(), fl = g.middleCols(N, N).array(),
           fr = g.middleCols(2 * N, N).array(), o = g.middleCols(3 * N, N).array(),
           uu = g.rightCols(N).array();
      auto dhr = dh.middleRows(r, n).array();
      auto t = tc.topRows(n);
      auto d = dc.topRows(n);
      auto dgr = dg.topRows(n);
      t = c.middleRows(r, n).array().tanh();
      d = dcOut.middleRows(r, n).array() + dhr * o * (1.0f - t.array().square());
      dgr.leftCols(N) = d.array() * uu * i * (1.0f - i);
      dgr.middleCols(N, N) = d.array() * cl.middleRows(r, n).array() * fl * (1.0f - fl);
      dgr.middleCols(2 * N, N) = d.array() * cr.middleRows(r, n).array() * fr * (1.0f - fr);
      dgr.middleCols(3 * N, N) = dhr * t.array() * o * (1.0f - o);
      dgr.rightCols(N) = d.array() * i * (1.0f - uu.square());
      if (dGates) {
        ConstRows<5 * N> dA(dGates + r * 5 * N, n, 5 * N);
        auto a = g.leftCols(4 * N).array();
        dgr.leftCols(4 * N).array() += dA.leftCols(4 * N).array() * a * (1.0f - a);
        dgr.rightCols(N).array() += dA.rightCols(N).array() * (1.0f - uu.square());
      }
      gemm(Transpose::Yes, Transpose::No, 2 * N, 5 * N, n, x.row(r).data(), x.outerStride(),
           dgr.data(), 5 * N, 1.0f, dU.data(), 5 * N);
      db += dgr.colwise().sum();
      gemmWithWeights(Transpose::No, Transpose::Yes, n, 2 * N, 5 * N, dgr.data(), 5 * N, U.data(),
                      5 * N, 0.0f, dx.row(r).data(), dx.outerStride());
      dcl.middleRows(r, n) = d.array() * fl;
      dcr.middleRows(r, n) = d.array() * fr;
    }
  }
};

/// Leaf: h = E[word], c = 0 (hostInts[0] is the word).
template <int N> class TreeLeafKernel : public Kernel {
public:
  TreeLeafKernel(int vocab, int table)
      : Kernel({"tree_leaf", {}, {N, N}, 1, 0, 0}), vocab_(vocab), e_(table) {}

  void forward(const ForwardCall &c) const override {
    gatherRows(c.ctx->params->at(e_).value.data(), vocab_, N, c.hostInts, c.rows, c.outs[0],
               "tree_leaf");
    std::fill_n(c.outs[1], size_t(c.rows) * N, 0.0f);
  }

  void backward(const BackwardCall &c) const override {
    c.ctx->params->at(e_).scatterAddRows(c.hostInts, c.rows, c.outGrads[0]);
  }

private:
  int vocab_, e_;
};

/// Internal node: args (h_left, c_left, h_right, c_right), results (h, c,
/// gates); the gates are kept for the backward pass and read by no one else.
template <int N> class TreeNodeKernel : public Kernel {
public:
  TreeNodeKernel(int u, int b)
      : Kernel({"tree_node", {N, N, N, N}, {N, N, 5 * N}, 0, 0, 2.0 * 2 * N * 5 * N + 25.0 * N}),
        u_(u), b_(b) {}

  void forward(const ForwardCall &c) const override {
    typename Cell::Mat x = children(c);
    Rows<N> h(c.outs[0], c.rows, N), cell(c.outs[1], c.rows, N);
    Rows<5 * N> gates(c.outs[2], c.rows, 5 * N);
    Cell::forward(x, ConstRows<N>(c.args[1], c.rows, N), ConstRows<N>(c.args[3], c.rows, N), gates,
                  h, cell, *c.ctx->params, u_, b_);
  }

  void backward(const BackwardCall &c) const override {
    typename Cell::Mat x = children(c), dx(c.rows, 2 * N);
    Rows<N> dcl(c.argGrads[1], c.rows, N), dcr(c.argGrads[3], c.rows, N);
    Cell::backward(x, ConstRows<N>(c.args[1], c.rows, N), ConstRows<N>(c.args[3], c.rows, N),
                   ConstRows<5 * N>(c.outs[2], c.rows, 5 * N), ConstRows<N>(c.outs[1], c.rows, N),
                   ConstRows<N>(c.outGrads[0], c.rows, N), ConstRows<N>(c.outGrads[1], c.rows, N),
                   c.outGrads[2], dx, dcl, dcr, *c.ctx->params, u_, b_);
    Rows<N>(c.argGrads[0], c.rows, N) = dx.leftCols(N);
    Rows<N>(c.argGrads[2], c.rows, N) = dx.rightCols(N);
  }

private:
  using Cell = TreeLstmCell<N>;
  static typename Cell::Mat children(const ForwardCall &c) {
    typename Cell::Mat x(c.rows, 2 * N);
    x.leftCols(N) = ConstRows<N>(c.args[0], c.rows, N);
    x.rightCols(N) = ConstRows<N>(c.args[2], c.rows, N);
    return x;
  }
  int u_, b_;
};

/// The whole model: parameters, kernels, and the unfolding of one tree.
template <int N, int K = 5> class TreeLstmModel {
public:
  TreeLstmModel(ParamStore &params, int vocab, bool classify, bool lossAtEveryNode)
      : vocab_(vocab), classify_(classify), everyNode_(lossAtEveryNode),
        e_(params.add("E", {vocab, N}, {InitKind::Uniform, -0.1, 0.1}, true)),
        u_(params.add("U", {2 * N, 5 * N}, {InitKind::Glorot})),
        b_(params.add("b", {5 * N}, {InitKind::Uniform, -0.1, 0.1})),
        wc_(params.add("classify.W", {N, K}, {InitKind::Glorot})),
        bc_(params.add("classify.b", {K}, {InitKind::Zeros})), leaf_(vocab, e_), node_(u_, b_),
        logits_("classify", wc_, bc_, Act::None), xent_("xent") {}

  /// Unfolds one tree into `graph` (after graph.beginExample()); returns the
  /// root's (h, c) instance.
  int32_t unfold(BatchGraph &graph, const Tree &tree) const {
    std::vector<int32_t> state(tree.nodes.size());
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      const Tree::Node &n = tree.nodes[i];
      if (n.isLeaf()) {
        state[i] = graph.add(leaf_, {}, {n.word});
      } else {
        int32_t l = state[size_t(n.left)], r = state[size_t(n.right)];
        state[i] = graph.add(node_, {{l, 0}, {l, 1}, {r, 0}, {r, 1}});
      }
      bool root = int(i) == tree.root();
      if (classify_ && (root || everyNode_)) {
        int32_t logits = graph.add(logits_, {{state[i], 0}});
        graph.addLoss({graph.add(xent_, {{logits, 0}}, {n.label}), 0});
      }
    }
    return state.back();
  }

  const TreeNodeKernel<N> &nodeKernel() const { return node_; }
  const FcKernel<N, K> &classifier() const { return logits_; }
  const XentKernel<K> &xent() const { return xent_; }
  int embedding() const { return e_; }
  int cellWeights() const { return u_; }
  int cellBias() const { return b_; }

private:
  int vocab_;
  bool classify_, everyNode_;
  int e_, u_, b_, wc_, bc_;
  TreeLeafKernel<N> leaf_;
  TreeNodeKernel<N> node_;
  FcKernel<N, K> logits_;
  XentKernel<K> xent_;
};

} // namespace foldc::rt::reference
