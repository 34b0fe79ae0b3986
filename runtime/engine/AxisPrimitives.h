// Primitives along one axis of a tensor of any rank, and the rank-2 shape
// operations (transpose, outer product, reshape). A row holds one instance's
// tensor flattened row-major; along axis k it is seen as [O, N, I]: O the
// product of the dimensions before k, N the dimension k, I the product of
// those after. Element (o, n, i) sits at column (o * N + n) * I + i. The
// last axis of a vector is O = I = 1: Primitives.h's faster forms cover it.
#pragma once

#include "runtime/engine/BatchMath.h"
#include "runtime/engine/Choices.h"

#include <cmath>
#include <limits>

namespace foldc::rt::ops {

enum class ReduceKind { Sum, Mean, Max, Min };

/// Column of element (o, n, i) in a row seen as [O, N, I].
template <int N, int I> constexpr int axisColumn(int o, int n, int i) {
  return (o * N + n) * I + i;
}

/// The position along the axis that max (or min) picks for (o, i) of row r:
/// the first on ties.
template <bool Largest, int N, int I, typename X>
int pickAlongAxis(const X &x, Eigen::Index r, int o, int i) {
  int best = 0;
  for (int n = 1; n < N; ++n) {
    float v = x(r, axisColumn<N, I>(o, n, i)), b = x(r, axisColumn<N, I>(o, best, i));
    if (Largest ? v > b : v < b)
      best = n;
  }
  return best;
}

/// sum/mean/max/min along the axis: [O, N, I] -> [O, I].
template <ReduceKind K, int O, int N, int I> struct ReduceAxis {
  template <typename X, typename Y> static void forward(const X &x, Y &&y) {
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (int o = 0; o < O; ++o)
        for (int i = 0; i < I; ++i) {
          if constexpr (K == ReduceKind::Max || K == ReduceKind::Min) {
            int at = pickAlongAxis<K == ReduceKind::Max, N, I>(x, r, o, i);
            y(r, o * I + i) = x(r, axisColumn<N, I>(o, at, i));
            ChoiceLog::record(at);
          } else {
            float total = 0;
            for (int n = 0; n < N; ++n)
              total += x(r, axisColumn<N, I>(o, n, i));
            y(r, o * I + i) = K == ReduceKind::Mean ? total / float(N) : total;
          }
        }
  }
  template <typename X, typename G, typename D>
  static void backward(const X &x, const G &dy, D &&dx) {
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (int o = 0; o < O; ++o)
        for (int i = 0; i < I; ++i) {
          float g = dy(r, o * I + i);
          if constexpr (K == ReduceKind::Max || K == ReduceKind::Min) {
            dx(r, axisColumn<N, I>(o, pickAlongAxis<K == ReduceKind::Max, N, I>(x, r, o, i), i)) +=
                g;
          } else {
            float share = K == ReduceKind::Mean ? g / float(N) : g;
            for (int n = 0; n < N; ++n)
              dx(r, axisColumn<N, I>(o, n, i)) += share;
          }
        }
  }
};

/// softmax (Log = false) or log_softmax (Log = true) along the axis.
template <bool Log, int O, int N, int I> struct SoftmaxAxis {
  template <typename X, typename Y> static void forward(const X &x, Y &&y) {
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (int o = 0; o < O; ++o)
        for (int i = 0; i < I; ++i) {
          float top = x(r, axisColumn<N, I>(o, pickAlongAxis<true, N, I>(x, r, o, i), i));
          float total = 0;
          for (int n = 0; n < N; ++n)
            total += std::exp(x(r, axisColumn<N, I>(o, n, i)) - top);
          float logTotal = std::log(total);
          for (int n = 0; n < N; ++n) {
            int c = axisColumn<N, I>(o, n, i);
            float shifted = x(r, c) - top;
            y(r, c) = Log ? shifted - logTotal : std::exp(shifted) / total;
          }
        }
  }
  /// From the result y: softmax dx = y (dy - sum(y dy)); log_softmax
  /// dx = dy - exp(y) sum(dy).
  template <typename Y, typename G, typename D>
  static void backward(const Y &y, const G &dy, D &&dx) {
    for (Eigen::Index r = 0; r < y.rows(); ++r)
      for (int o = 0; o < O; ++o)
        for (int i = 0; i < I; ++i) {
          float inner = 0;
          for (int n = 0; n < N; ++n) {
            int c = axisColumn<N, I>(o, n, i);
            inner += Log ? dy(r, c) : y(r, c) * dy(r, c);
          }
          for (int n = 0; n < N; ++n) {
            int c = axisColumn<N, I>(o, n, i);
            dx(r, c) += Log ? dy(r, c) - std::exp(y(r, c)) * inner : y(r, c) * (dy(r, c) - inner);
          }
        }
  }
};

/// argmax along the axis as float indices (no gradient): [O, N, I] -> [O, I].
template <int O, int N, int I> struct ArgmaxAxis {
  template <typename X, typename Y> static void forward(const X &x, Y &&y) {
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (int o = 0; o < O; ++o)
        for (int i = 0; i < I; ++i)
          y(r, o * I + i) = float(pickAlongAxis<true, N, I>(x, r, o, i));
  }
};

/// [Lo, Hi) along the axis: [O, N, I] -> [O, Hi - Lo, I] (an index is a
/// range of one whose axis the result drops: the layout is the same).
template <int O, int N, int I, int Lo, int Hi> struct SliceAxis {
  static_assert(0 <= Lo && Lo < Hi && Hi <= N);
  static constexpr int kBlock = (Hi - Lo) * I;
  template <typename X, typename Y> static void forward(const X &x, Y &&y) {
    for (int o = 0; o < O; ++o)
      y.middleCols(o * kBlock, kBlock) = x.middleCols(axisColumn<N, I>(o, Lo, 0), kBlock);
  }
  template <typename G, typename D> static void backward(const G &dy, D &&dx) {
    for (int o = 0; o < O; ++o)
      dx.middleCols(axisColumn<N, I>(o, Lo, 0), kBlock) += dy.middleCols(o * kBlock, kBlock);
  }
};

/// The [A, B] matrix of a row, transposed: y[j, i] = x[i, j].
template <int A, int B> struct MatrixTranspose {
  template <typename X, typename Y> static void forward(const X &x, Y &&y) {
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j)
          y(r, j * A + i) = x(r, i * B + j);
  }
  template <typename G, typename D> static void backward(const G &dy, D &&dx) {
    for (Eigen::Index r = 0; r < dy.rows(); ++r)
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j)
          dx(r, i * B + j) += dy(r, j * A + i);
  }
};

/// The outer product of two vectors: y[i, j] = a[i] * b[j].
template <int A, int B> struct Outer {
  template <typename X, typename Z, typename Y> static void forward(const X &a, const Z &b, Y &&y) {
    for (Eigen::Index r = 0; r < a.rows(); ++r)
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j)
          y(r, i * B + j) = a(r, i) * b(r, j);
  }
  template <typename X, typename Z, typename G, typename DA, typename DB>
  static void backward(const X &a, const Z &b, const G &dy, DA &&da, DB &&db) {
    for (Eigen::Index r = 0; r < a.rows(); ++r)
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j) {
          da(r, i) += dy(r, i * B + j) * b(r, j);
          db(r, j) += dy(r, i * B + j) * a(r, i);
        }
  }
};

/// The same W numbers under another shape (row-major order is kept).
template <int W> struct Reshape {
  template <typename X, typename Y> static void forward(const X &x, Y &&y) { y = x; }
  template <typename G, typename D> static void backward(const G &dy, D &&dx) { dx += dy; }
};

/// One operand of a concatenation along an axis: [O, Width, I] placed at
/// `Offset` of the result's [O, Total, I].
template <int O, int Width, int Offset, int Total, int I> struct ConcatAxisPart {
  static constexpr int kBlock = Width * I;
  template <typename X, typename Y> static void forward(const X &x, Y &&y) {
    for (int o = 0; o < O; ++o)
      y.middleCols(axisColumn<Total, I>(o, Offset, 0), kBlock) = x.middleCols(o * kBlock, kBlock);
  }
  template <typename G, typename D> static void backward(const G &dy, D &&dx) {
    for (int o = 0; o < O; ++o)
      dx.middleCols(o * kBlock, kBlock) +=
          dy.middleCols(axisColumn<Total, I>(o, Offset, 0), kBlock);
  }
};

} // namespace foldc::rt::ops
