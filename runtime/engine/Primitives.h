// Batched primitive operations with their gradients: the pieces generated
// kernels are made of. A fused kernel calls the forwards in order on batch
// matrices (one row per instance) and the backwards in reverse. Backward
// functions *accumulate* (+=) into input gradients, since one intermediate
// may feed several operations; parameter gradients accumulate likewise.
// Sizes are template parameters so every loop and GEMM has compile-time widths.
#pragma once

#include "runtime/engine/AxisPrimitives.h"
#include "runtime/engine/BatchMath.h"
#include "runtime/engine/Choices.h"
#include "runtime/engine/Gemm.h"
#include "runtime/engine/GemmClock.h"
#include "runtime/engine/Kernel.h"
#include "runtime/engine/Params.h"
#include "runtime/support/Random.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

namespace foldc::rt::ops {

template <int W> using In = ConstRows<W>;
template <int W> using Out = Rows<W>;

/// Stands for an operand or result that a backward formula does not read,
/// so that the kernel need not keep it (Unary and Binary backwards: the
/// builtin table's backwardReads). Reading it does not compile.
struct NotKept {};

/// A gradient view for the op that writes a gradient matrix first: its `+=`
/// and `-=` assign, so the matrix is not zero-filled before. The generated
/// code passes one only to backwards that write every element of it.
template <class View> struct FirstWrite {
  explicit FirstWrite(View v) : view(v) {} // clang 14 has no paren-init of aggregates
  View view;
  template <class E> void operator+=(const E &e) { view = e; }
  template <class E> void operator-=(const E &e) { view = -e; }
  struct ArrayView {
    View &view;
    template <class E> void operator+=(const E &e) { view.array() = e; }
    template <class E> void operator-=(const E &e) { view.array() = -e; }
  };
  ArrayView array() { return {view}; }
};

/// Where a kernel computes the gradient dy of a linear layer's output that
/// multiplies the whole weight `w`: in w's deferred product when the pass
/// defers it (then Linear::backwardPlaced() does not copy it), else in
/// `own`. Unwritten.
template <int W> Rows<W> placedDy(Param &w, int rows, RowsMatrix<W> &own) {
  if (w.deferred.active)
    return Rows<W>(w.placeDy(rows, W), rows, W);
  own.resize(rows, W);
  return Rows<W>(own.data(), rows, W);
}

/// y = x @ W for a parameter W: [I, O]; or, with COLS > O, y = x @ W[:, LO:LO+O]
/// for W: [I, COLS] (a recurrent cell's gates read their block of columns).
/// `xKept` in the backwards: x's rows live until the pass ends (a kernel's
/// kept values), so a deferred weight gradient reads them where they are.
template <int I, int O, int LO = 0, int COLS = O> struct Linear {
  static_assert(LO >= 0 && LO + O <= COLS);
  static void forward(In<I> x, const Param &w, Out<O> y) {
    gemmWithWeights(Transpose::No, Transpose::No, x.rows(), O, I, x.data(), I, w.value.data() + LO,
                    COLS, 0.0f, y.data(), O);
  }
  /// dx += dy W^T.
  static void backward(In<I> x, Param &w, In<O> dy, Out<I> dx, bool xKept = false) {
    weightGradient(x, w, dy, xKept);
    inputGradient(w, dy, dx, 1.0f);
  }
  /// dx = dy W^T: the first write of dx.
  static void backward(In<I> x, Param &w, In<O> dy, FirstWrite<Out<I>> dx, bool xKept = false) {
    weightGradient(x, w, dy, xKept);
    inputGradient(w, dy, dx.view, 0.0f);
  }
  /// backward() for a dy computed where placedDy() put it.
  template <class DX> static void backwardPlaced(In<I> x, Param &w, In<O> dy, DX &&dx, bool xKept) {
    static_assert(COLS == O, "placedDy is for products with the whole weight");
    if (!w.deferred.active)
      return backward(x, w, dy, std::forward<DX>(dx), xKept);
    w.deferX(x.data(), xKept, x.rows(), I);
    if constexpr (std::is_same_v<std::decay_t<DX>, FirstWrite<Out<I>>>)
      inputGradient(w, dy, dx.view, 0.0f);
    else
      inputGradient(w, dy, dx, 1.0f);
  }

private:
  static void weightGradient(In<I> x, Param &w, In<O> dy, bool xKept) {
    if (w.deferred.active && COLS == O)
      w.deferProduct(x.data(), xKept, dy.data(), x.rows(), I, O);
    else // a block of columns: its gradient at once, into that block
      gemm(Transpose::Yes, Transpose::No, I, O, x.rows(), x.data(), I, dy.data(), O, 1.0f,
           w.grad.data() + LO, COLS);
  }
  static void inputGradient(const Param &w, In<O> dy, Out<I> dx, float beta) {
    gemmWithWeights(Transpose::No, Transpose::Yes, dy.rows(), I, O, dy.data(), O,
                    w.value.data() + LO, COLS, beta, dx.data(), I);
  }
};

/// y = x + b for a parameter b: [W].
template <int W> struct BiasAdd {
  static void forward(In<W> x, const Param &b, Out<W> y) {
    y = x.rowwise() + Eigen::Map<const Eigen::Matrix<float, 1, W>>(b.value.data());
  }
  static void backward(Param &b, In<W> dy, Out<W> dx) {
    backwardBias(b, dy);
    dx += dy;
  }
  /// The bias's gradient alone: for y = x + b computed in place, where x's
  /// gradient is y's.
  static void backwardBias(Param &b, In<W> dy) {
    Eigen::Map<Eigen::Matrix<float, 1, W>>(b.grad.data()) += dy.colwise().sum();
  }
};

/// A parameter used as a value: every row holds the whole tensor (W floats, row-major).
template <int W> struct Read {
  static void forward(const Param &p, Out<W> y) {
    y.rowwise() = Eigen::Map<const Eigen::Matrix<float, 1, W>>(p.value.data());
  }
  static void backward(Param &p, In<W> dy) {
    Eigen::Map<Eigen::Matrix<float, 1, W>>(p.grad.data()) += dy.colwise().sum();
  }
};

/// Per row, [M, N] @ [N, P] -> [M, P] of two computed tensors (M = 1: a
/// vector times a matrix), each stored row-major in its row of the batch.
template <int M, int N, int P> struct MatMul {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using View = Eigen::Map<Matrix>;
  using ConstView = Eigen::Map<const Matrix>;
  static void forward(In<M * N> a, In<N * P> b, Out<M * P> y) {
    GemmClock::Scope timing(int64_t(2) * M * N * P * y.rows());
    for (Eigen::Index r = 0; r < y.rows(); ++r)
      View(y.data() + r * M * P, M, P).noalias() =
          ConstView(a.data() + r * M * N, M, N) * ConstView(b.data() + r * N * P, N, P);
  }
  static void backward(In<M * N> a, In<N * P> b, In<M * P> dy, Out<M * N> da, Out<N * P> db) {
    GemmClock::Scope timing(int64_t(4) * M * N * P * dy.rows());
    for (Eigen::Index r = 0; r < dy.rows(); ++r) {
      ConstView g(dy.data() + r * M * P, M, P);
      View(da.data() + r * M * N, M, N).noalias() +=
          g * ConstView(b.data() + r * N * P, N, P).transpose();
      View(db.data() + r * N * P, N, P).noalias() +=
          ConstView(a.data() + r * M * N, M, N).transpose() * g;
    }
  }
};

/// Ends each chain of formulas: a kind without one does not compile.
template <auto> inline constexpr bool kNoFormula = false;

/// Maximum/Minimum are element-wise (the pairwise step of max/min across a
/// sequence); their gradient goes to the operand chosen (the first on ties).
enum class BinaryKind { Add, Sub, Mul, Div, Maximum, Minimum };

/// Element-wise a (op) b where A and B are W or 1 (a scalar broadcast).
/// Operands and gradients are any row-major views of their widths: batch
/// matrices, or blocks of columns of wider ones (a slice read in place).
template <BinaryKind K, int A, int B> struct Binary {
  static constexpr int W = A > B ? A : B;
  template <int From, typename M> static auto wide(const M &m) {
    if constexpr (From == W)
      return m.array();
    else
      return m.array().replicate(1, W);
  }
  template <typename X, typename Z, typename Y> static void forward(const X &a, const Z &b, Y &&y) {
    auto x = wide<A>(a);
    auto z = wide<B>(b);
    if constexpr (K == BinaryKind::Add)
      y = (x + z).matrix();
    else if constexpr (K == BinaryKind::Sub)
      y = (x - z).matrix();
    else if constexpr (K == BinaryKind::Mul)
      y = (x * z).matrix();
    else if constexpr (K == BinaryKind::Div)
      y = (x / z).matrix();
    else if constexpr (K == BinaryKind::Maximum)
      y = x.max(z).matrix();
    else if constexpr (K == BinaryKind::Minimum)
      y = x.min(z).matrix();
    else
      static_assert(kNoFormula<K>, "a kind without a formula");
  }
  /// Sums a full-width gradient back to the operand's width.
  template <int To, typename D> static void accumulate(const RowsMatrix<W> &g, D &&d) {
    if constexpr (To == W)
      d += g;
    else
      d += g.rowwise().sum();
  }
  template <typename X, typename Z, typename G, typename DX, typename DZ>
  static void backward(const X &a, const Z &b, const G &dy, DX &&da, DZ &&db) {
    if constexpr (A == W && B == W && K != BinaryKind::Maximum && K != BinaryKind::Minimum) {
      // Same widths: accumulate straight into the gradients, no temporaries.
      auto g = dy.array();
      if constexpr (K == BinaryKind::Add) {
        da += dy;
        db += dy;
      } else if constexpr (K == BinaryKind::Sub) {
        da += dy;
        db -= dy;
      } else if constexpr (K == BinaryKind::Mul) {
        da.array() += g * b.array();
        db.array() += g * a.array();
      } else if constexpr (K == BinaryKind::Div) {
        auto z = b.array();
        da.array() += g / z;
        db.array() -= g * a.array() / z.square();
      } else
        static_assert(kNoFormula<K>, "a kind without a formula");
    } else {
      RowsMatrix<W> ga, gb;
      if constexpr (K == BinaryKind::Add) {
        ga = dy;
        gb = dy;
      } else if constexpr (K == BinaryKind::Sub) {
        ga = dy;
        gb = -dy;
      } else if constexpr (K == BinaryKind::Mul) {
        ga = (dy.array() * wide<B>(b)).matrix();
        gb = (dy.array() * wide<A>(a)).matrix();
      } else if constexpr (K == BinaryKind::Div) {
        auto x = wide<A>(a);
        auto z = wide<B>(b);
        ga = (dy.array() / z).matrix();
        gb = (-dy.array() * x / z.square()).matrix();
      } else if constexpr (K == BinaryKind::Maximum || K == BinaryKind::Minimum) {
        auto x = wide<A>(a);
        auto z = wide<B>(b);
        // The comparison is evaluated to a mask: x >= z and x <= z are
        // expressions of different types.
        Eigen::Array<bool, Eigen::Dynamic, W> first;
        if constexpr (K == BinaryKind::Maximum)
          first = x >= z;
        else
          first = x <= z;
        ga = first.select(dy.array(), 0.0f).matrix();
        gb = first.select(0.0f, dy.array()).matrix();
      } else {
        static_assert(kNoFormula<K>, "a kind without a formula");
      }
      accumulate<A>(ga, da);
      accumulate<B>(gb, db);
    }
  }
};

enum class UnaryKind {
  Neg,
  Tanh,
  Sigmoid,
  ReLU,
  Elu,
  Softplus,
  Silu,
  Exp,
  Log,
  Abs,
  Sqrt,
  Square,
  StopGradient
};

/// Element-wise functions. The backward reads the input x, the output y, both
/// or neither, by kind (a NotKept stands for one it does not read).
/// Views as for Binary.
template <UnaryKind K, int W> struct Unary {
  template <typename X, typename Y> static void forward(const X &x, Y &&y) {
    auto v = x.array();
    if constexpr (K == UnaryKind::Neg)
      y = -x;
    else if constexpr (K == UnaryKind::Tanh)
      elementwise(x, y, [](const auto &a) { return a.tanh(); });
    else if constexpr (K == UnaryKind::Sigmoid)
      elementwise(x, y, [](const auto &a) { return a.logistic(); });
    else if constexpr (K == UnaryKind::ReLU)
      y = v.max(0.0f).matrix();
    else if constexpr (K == UnaryKind::Elu)
      elementwise(x, y, [](const auto &a) { return (a > 0.0f).select(a, a.exp() - 1.0f); });
    else if constexpr (K == UnaryKind::Softplus)
      elementwise(x, y, [](const auto &a) { return a.max(0.0f) + (-a.abs()).exp().log1p(); });
    else if constexpr (K == UnaryKind::Silu)
      elementwise(x, y, [](const auto &a) { return a * a.logistic(); });
    else if constexpr (K == UnaryKind::Exp)
      elementwise(x, y, [](const auto &a) { return a.exp(); });
    else if constexpr (K == UnaryKind::Log)
      elementwise(x, y, [](const auto &a) { return a.log(); });
    else if constexpr (K == UnaryKind::Abs)
      y = v.abs().matrix();
    else if constexpr (K == UnaryKind::Sqrt) // Eigen's fast packet sqrt is approximate
      elementwise(x, y, [](const auto &a) { return a.sqrt(); });
    else if constexpr (K == UnaryKind::Square)
      y = v.square().matrix();
    else if constexpr (K == UnaryKind::StopGradient)
      y = x;
    else
      static_assert(kNoFormula<K>, "a kind without a formula");
  }
  template <typename X, typename Y, typename G, typename D>
  static void backward(const X &x, const Y &y, const G &dy, D &&dx) {
    auto g = dy.array();
    if constexpr (K == UnaryKind::Neg)
      dx -= dy;
    else if constexpr (K == UnaryKind::Tanh)
      dx += (g * (1.0f - y.array().square())).matrix();
    else if constexpr (K == UnaryKind::Sigmoid) {
      auto o = y.array();
      dx += (g * o * (1.0f - o)).matrix();
    } else if constexpr (K == UnaryKind::ReLU)
      dx += (g * (x.array() > 0.0f).template cast<float>()).matrix();
    else if constexpr (K == UnaryKind::Elu)
      dx += (g * (x.array() > 0.0f).select(1.0f, y.array() + 1.0f)).matrix();
    else if constexpr (K == UnaryKind::Softplus)
      dx += (g * x.array().logistic()).matrix();
    else if constexpr (K == UnaryKind::Silu) { // s + x s (1 - s), s = sigmoid(x)
      auto v = x.array();
      auto s = v.logistic();
      dx += (g * s * (1.0f + v * (1.0f - s))).matrix();
    } else if constexpr (K == UnaryKind::Exp)
      dx += (g * y.array()).matrix();
    else if constexpr (K == UnaryKind::Log)
      dx += (g / x.array()).matrix();
    else if constexpr (K == UnaryKind::Abs)
      dx += (g * x.array().sign()).matrix();
    else if constexpr (K == UnaryKind::Sqrt)
      dx += (g * 0.5f / y.array()).matrix();
    else if constexpr (K == UnaryKind::Square)
      dx += (g * 2.0f * x.array()).matrix();
    else if constexpr (K == UnaryKind::StopGradient)
      static_cast<void>(dx); // nothing flows back
    else
      static_assert(kNoFormula<K>, "a kind without a formula");
  }
};

/// x[Lo:Hi] on the last axis (an index i is the slice [i:i+1]).
template <int W, int Lo, int Hi> struct Slice {
  static void forward(In<W> x, Out<Hi - Lo> y) { y = x.middleCols(Lo, Hi - Lo); }
  static void backward(In<Hi - Lo> dy, Out<W> dx) { dx.middleCols(Lo, Hi - Lo) += dy; }
};

/// [a, b] on the last axis; longer concatenations chain it.
template <int A, int B> struct Concat {
  static void forward(In<A> a, In<B> b, Out<A + B> y) {
    y.leftCols(A) = a;
    y.rightCols(B) = b;
  }
  static void backward(In<A + B> dy, Out<A> da, Out<B> db) {
    da += dy.leftCols(A);
    db += dy.rightCols(B);
  }
};

/// dot(a, b) per row.
template <int W> struct Dot {
  static void forward(In<W> a, In<W> b, Out<1> y) { y = a.cwiseProduct(b).rowwise().sum(); }
  static void backward(In<W> a, In<W> b, In<1> dy, Out<W> da, Out<W> db) {
    da += (b.array().colwise() * dy.array()).matrix();
    db += (a.array().colwise() * dy.array()).matrix();
  }
};

/// sum/mean/max/min over the last axis (ties in max/min: the first wins).
template <ReduceKind K, int W> struct Reduce {
  static void forward(In<W> x, Out<1> y) {
    if constexpr (K == ReduceKind::Sum)
      y = x.rowwise().sum();
    else if constexpr (K == ReduceKind::Mean)
      y = x.rowwise().mean();
    else if constexpr (K == ReduceKind::Max)
      y = x.rowwise().maxCoeff();
    else if constexpr (K == ReduceKind::Min)
      y = x.rowwise().minCoeff();
    else
      static_assert(kNoFormula<K>, "a kind without a formula");
    if constexpr (K == ReduceKind::Max || K == ReduceKind::Min)
      if (ChoiceLog::active())
        for (Eigen::Index r = 0; r < x.rows(); ++r)
          ChoiceLog::record(picked(x, r));
  }
  static void backward(In<W> x, In<1> dy, Out<W> dx) {
    if constexpr (K == ReduceKind::Sum)
      dx.colwise() += dy.col(0);
    else if constexpr (K == ReduceKind::Mean)
      dx.colwise() += dy.col(0) / float(W);
    else if constexpr (K == ReduceKind::Max || K == ReduceKind::Min) {
      for (Eigen::Index r = 0; r < x.rows(); ++r)
        dx(r, picked(x, r)) += dy(r, 0);
    } else {
      static_assert(kNoFormula<K>, "a kind without a formula");
    }
  }

private:
  /// The column max (or min) takes in row r.
  static Eigen::Index picked(In<W> x, Eigen::Index r) {
    Eigen::Index at;
    if constexpr (K == ReduceKind::Max)
      x.row(r).maxCoeff(&at);
    else
      x.row(r).minCoeff(&at);
    return at;
  }
};

/// softmax over the last axis.
template <int W> struct Softmax {
  static void forward(In<W> x, Out<W> y) {
    y = x.colwise() - x.rowwise().maxCoeff();
    elementwise(y, y, [](const auto &a) { return a.exp(); });
    // The sums go to a temporary first: dividing y by its own lazily
    // evaluated row sums aliases (seen at W = 2: rows no longer sum to 1).
    Eigen::Matrix<float, Eigen::Dynamic, 1> total = y.rowwise().sum();
    y.array().colwise() /= total.array();
  }
  static void backward(In<W> y, In<W> dy, Out<W> dx) {
    Eigen::Matrix<float, Eigen::Dynamic, 1> inner = y.cwiseProduct(dy).rowwise().sum();
    dx += (y.array() * (dy.colwise() - inner).array()).matrix();
  }
};

/// log(softmax(x)) over the last axis, computed as x - max - log(sum(exp(x - max))).
template <int W> struct LogSoftmax {
  static void forward(In<W> x, Out<W> y) {
    Eigen::Matrix<float, Eigen::Dynamic, 1> top = x.rowwise().maxCoeff();
    y = x.colwise() - top;
    RowsMatrix<W> e(x.rows(), W);
    elementwise(y, e, [](const auto &a) { return a.exp(); });
    Eigen::Matrix<float, Eigen::Dynamic, 1> logSum = e.rowwise().sum();
    elementwise(logSum, logSum, [](const auto &a) { return a.log(); });
    y.colwise() -= logSum;
  }
  /// dx = dy - softmax(x) * sum(dy), with softmax(x) = exp(y).
  static void backward(In<W> y, In<W> dy, Out<W> dx) {
    Eigen::Matrix<float, Eigen::Dynamic, 1> total = dy.rowwise().sum();
    dx += dy - (y.array().exp().colwise() * total.array()).matrix();
  }
};

/// A row of D zeros with a 1 at `indices[r]` (no gradient).
template <int D> struct OneHot {
  static void forward(const std::vector<int32_t> &indices, Out<D> y) {
    y.setZero();
    for (size_t r = 0; r < indices.size(); ++r) {
      if (indices[r] < 0 || indices[r] >= D)
        throw std::out_of_range("one_hot: index " + std::to_string(indices[r]) +
                                " is outside [0, " + std::to_string(D) + ")");
      y(Eigen::Index(r), indices[r]) = 1.0f;
    }
  }
};

/// Integer indices held in a computed i32 scalar (stored as floats), one a row.
inline std::vector<int32_t> indices(In<1> x) {
  std::vector<int32_t> out(size_t(x.rows()));
  for (Eigen::Index r = 0; r < x.rows(); ++r)
    out[size_t(r)] = int32_t(std::lround(x(r, 0)));
  return out;
}

/// argmax over the last axis as a float index (no gradient).
template <int W> struct Argmax {
  static void forward(In<W> x, Out<1> y) {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      Eigen::Index at;
      x.row(r).maxCoeff(&at);
      y(r, 0) = float(at);
    }
  }
};

/// top_k over the last axis: the K largest of N values per row, largest
/// first (ties: the earlier position first), and their positions. The
/// gradient of each picked value goes to the position it came from.
template <int N, int K> struct TopK {
  static_assert(K >= 1 && K <= N);
  /// The positions of row `x`'s K largest values, in order.
  static std::array<int, K> pick(const float *x) {
    std::array<int, N> order;
    for (int i = 0; i < N; ++i)
      order[size_t(i)] = i;
    std::partial_sort(order.begin(), order.begin() + K, order.end(),
                      [x](int a, int b) { return x[a] != x[b] ? x[a] > x[b] : a < b; });
    std::array<int, K> top;
    std::copy_n(order.begin(), K, top.begin());
    return top;
  }
  static void forward(In<N> x, Out<K> y) {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      std::array<int, K> top = pick(x.data() + r * N);
      for (int j = 0; j < K; ++j)
        y(r, j) = x(r, top[size_t(j)]);
    }
  }
  static void backward(In<N> x, In<K> dy, Out<N> dx) {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      std::array<int, K> top = pick(x.data() + r * N);
      for (int j = 0; j < K; ++j)
        dx(r, top[size_t(j)]) += dy(r, j);
    }
  }
};

/// The positions top_k picks, as floats of an i32 tensor (no gradient).
template <int N, int K> struct TopKIndices {
  static void forward(In<N> x, Out<K> y) {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      std::array<int, K> top = TopK<N, K>::pick(x.data() + r * N);
      for (int j = 0; j < K; ++j)
        y(r, j) = float(top[size_t(j)]);
    }
  }
};

/// Row `indices[r]` of a parameter table: [N, W] (an embedding). Its
/// gradient touches only the rows used.
template <int W> struct Gather {
  static void forward(const std::vector<int32_t> &indices, const Param &table, Out<W> y) {
    gatherRows(table.value.data(), table.rows(), W, indices.data(), int(indices.size()), y.data(),
               table.name);
  }
  static void backward(const std::vector<int32_t> &indices, Param &table, In<W> dy) {
    table.scatterAddRows(indices.data(), int(indices.size()), dy.data());
  }
};

/// Softmax cross-entropy of K logits per row with an integer label per row.
template <int K> struct Xent {
  static void forward(In<K> logits, const std::vector<int32_t> &labels, Out<1> loss) {
    for (Eigen::Index r = 0; r < logits.rows(); ++r)
      loss(r, 0) = softmaxXent(logits.data() + r * K, K, checked(labels[size_t(r)]));
  }
  static void backward(In<K> logits, const std::vector<int32_t> &labels, In<1> dy, Out<K> dx) {
    float probs[K];
    for (Eigen::Index r = 0; r < logits.rows(); ++r) {
      int label = checked(labels[size_t(r)]);
      softmaxXent(logits.data() + r * K, K, label, probs);
      probs[label] -= 1.0f;
      for (int k = 0; k < K; ++k)
        dx(r, k) += probs[k] * dy(r, 0);
    }
  }
  static int checked(int32_t label) {
    if (label < 0 || label >= K)
      throw std::out_of_range("xent: label " + std::to_string(label) + " is outside [0, " +
                              std::to_string(K) + ")");
    return label;
  }
};

/// mse(a, b): the mean over W elements of (a - b)^2.
template <int W> struct Mse {
  static void forward(In<W> a, In<W> b, Out<1> y) {
    y = (a - b).rowwise().squaredNorm() / float(W);
  }
  static void backward(In<W> a, In<W> b, In<1> dy, Out<W> da, Out<W> db) {
    RowsMatrix<W> g = ((a - b).array().colwise() * (dy.array() * (2.0f / float(W)))).matrix();
    da += g;
    db -= g;
  }
};

/// sigmoid_xent(z, t) summed over W elements, in the stable form
/// max(z, 0) - z t + log(1 + exp(-|z|)).
template <int W> struct SigmoidXent {
  static void forward(In<W> z, In<W> t, Out<1> y) {
    RowsMatrix<W> softplus(z.rows(), W); // log(1 + exp(-|z|))
    elementwise(z, softplus, [](const auto &a) { return (-a.abs()).exp().log1p(); });
    auto v = z.array();
    y = (v.max(0.0f) - v * t.array() + softplus.array()).rowwise().sum().matrix();
  }
  static void backward(In<W> z, In<W> t, In<1> dy, Out<W> dz, Out<W> dt) {
    dz += ((z.array().logistic() - t.array()).colwise() * dy.array()).matrix();
    dt -= (z.array().colwise() * dy.array()).matrix();
  }
};

/// dropout(x, rate): element k of row r is kept when counterUniform(seed,
/// key[r], k) >= rate and scaled by 1 / (1 - rate); identity outside training.
/// `stream` tells the dropouts of one kernel apart (the op's index), so two
/// uses on one input draw different masks.
template <int W> struct Dropout {
  static void forward(In<W> x, float rate, uint32_t stream, const uint64_t *keys,
                      const ExecContext &ctx, Out<W> y) {
    apply(x, rate, stream, keys, ctx, y);
  }
  static void backward(float rate, uint32_t stream, const uint64_t *keys, const ExecContext &ctx,
                       In<W> dy, Out<W> dx) {
    RowsMatrix<W> g(dy.rows(), W);
    apply(dy, rate, stream, keys, ctx, Out<W>(g.data(), dy.rows(), W));
    dx += g;
  }
  static void apply(In<W> x, float rate, uint32_t stream, const uint64_t *keys,
                    const ExecContext &ctx, Out<W> y) {
    if (!ctx.training || rate <= 0) {
      y = x;
      return;
    }
    float scale = 1.0f / (1.0f - rate);
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (int k = 0; k < W; ++k)
        y(r, k) = counterUniform(ctx.seed, keys[r], uint64_t(stream) << 32 | uint64_t(k)) >= rate
                      ? x(r, k) * scale
                      : 0.0f;
  }
};

enum class CompareKind { Eq, Ne, Lt, Le, Gt, Ge };

/// Element-wise comparison giving 0/1 (no gradient: the result is a step).
template <CompareKind K, int A, int B> struct Compare {
  static constexpr int W = A > B ? A : B;
  static void forward(In<A> a, In<B> b, Out<W> y) {
    for (Eigen::Index r = 0; r < y.rows(); ++r)
      for (int k = 0; k < W; ++k) {
        float x = a(r, A == 1 ? 0 : k), z = b(r, B == 1 ? 0 : k);
        bool v = K == CompareKind::Eq   ? x == z
                 : K == CompareKind::Ne ? x != z
                 : K == CompareKind::Lt ? x < z
                 : K == CompareKind::Le ? x <= z
                 : K == CompareKind::Gt ? x > z
                                        : x >= z;
        y(r, k) = v ? 1.0f : 0.0f;
      }
  }
};

/// Column `slot` of a batch's host values (`count` per row), one per row.
template <typename T> std::vector<T> hostColumn(const T *values, int rows, int count, int slot) {
  std::vector<T> column(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r)
    column[size_t(r)] = values[size_t(r) * size_t(count) + size_t(slot)];
  return column;
}

} // namespace foldc::rt::ops
