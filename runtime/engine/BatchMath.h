// Eigen building blocks for batched kernels: row-major views of a batch,
// activations and their derivatives, softmax cross-entropy.
#pragma once

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace foldc::rt {

/// A row-major matrix of a batch, `Cols` floats a row (Eigen::Dynamic when not
/// known). Eigen spells a single column ColMajor; the memory is the same.
template <int Cols = Eigen::Dynamic>
using RowsMatrix =
    Eigen::Matrix<float, Eigen::Dynamic, Cols, Cols == 1 ? Eigen::ColMajor : Eigen::RowMajor>;
template <int Cols = Eigen::Dynamic> using Rows = Eigen::Map<RowsMatrix<Cols>>;
template <int Cols = Eigen::Dynamic> using ConstRows = Eigen::Map<const RowsMatrix<Cols>>;
/// A parameter matrix, row-major as stored. Its sizes are given at run time:
/// fully fixed-size Eigen matrices of this size would overflow Eigen's
/// unrolling heuristics, and GEMM gains nothing from them.
using ParamMatrix =
    Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

/// True for Eigen types whose rows are each a run of consecutive floats in
/// memory (row-major with direct access).
template <typename T>
constexpr bool
    kRowsAreRuns = (int(T::Flags) & Eigen::DirectAccessBit) &&
                   (int(T::Flags) & Eigen::RowMajorBit) && T::InnerStrideAtCompileTime == 1;

/// y = f(x) element by element, for an `f` of transcendental functions or
/// sqrt (an Eigen array expression of its argument), every element taken through the
/// same vectorised code: 16 consecutive elements (in row-major order) at a
/// time, evaluated into a fixed aligned block. Eigen evaluating `f` on the batch in place
/// computes the elements before the first aligned address and after the last
/// full packet with scalar code, whose exp or tanh can differ in the last
/// bit (and sqrt by more: its fast packet form is rsqrt and a Newton step): an element's value
/// would depend on its place in the batch, and batched results on the batch (two exp values equal
/// unbatched, not batched, made an argmax differ). Rows stored as runs of floats (the batch's own
/// matrices, and wide column blocks of them) are read a block at a time where they are.
template <typename X, typename Y, typename F> void elementwise(const X &x, Y &&y, F f) {
  constexpr Eigen::Index kBlock = 16;
  // Plain arrays under aligned maps: GCC 12 misreads the bounds of a
  // fixed-size Eigen array under AVX-512 (-Warray-bounds).
  alignas(64) float in[kBlock], out[kBlock];
  const Eigen::Map<const Eigen::Array<float, kBlock, 1>, Eigen::Aligned64> inBlock(in);
  Eigen::Map<Eigen::Array<float, kBlock, 1>, Eigen::Aligned64> outBlock(out);
  // f of the first n elements of `in`, the others zero (a partial block).
  auto compute = [&](Eigen::Index n) {
    std::fill(in + n, in + kBlock, 0.0f);
    outBlock = f(inBlock);
  };
  // f over `count` consecutive floats from `from` to `to`. A full block is
  // read where it is and evaluated into the aligned block (Eigen peels an
  // unaligned destination with scalar code), then stored with a copy of
  // constant size, a few vector moves: a copy of run-time size is a call to
  // memcpy, and two of them per 16 floats were a tenth of a Tree-LSTM's
  // inference. Only a partial last block goes through `in`.
  auto run = [&](const float *from, float *to, Eigen::Index count) {
    Eigen::Index k = 0;
    for (; k + kBlock <= count; k += kBlock) {
      outBlock = f(Eigen::Map<const Eigen::Array<float, kBlock, 1>>(from + k));
      std::memcpy(to + k, out, sizeof out);
    }
    if (const Eigen::Index n = count - k; n > 0) {
      std::copy_n(from + k, n, in);
      compute(n);
      std::copy_n(out, n, to + k);
    }
  };
  const Eigen::Index rows = x.rows(), cols = x.cols();
  if constexpr (kRowsAreRuns<std::decay_t<X>> && kRowsAreRuns<std::decay_t<Y>>) {
    if (x.outerStride() == cols && y.outerStride() == cols) { // the whole matrix is one run
      run(x.data(), y.data(), rows * cols);
      return;
    }
    if (cols >= kBlock) { // rows long enough that padding each costs little
      for (Eigen::Index r = 0; r < rows; ++r)
        run(x.data() + r * x.outerStride(), y.data() + r * y.outerStride(), cols);
      return;
    }
  }
  Eigen::Index r = 0, c = 0;
  for (Eigen::Index left = rows * cols; left > 0; left -= kBlock) {
    const Eigen::Index n = std::min(left, kBlock);
    const Eigen::Index r0 = r, c0 = c;
    for (Eigen::Index k = 0; k < n; ++k) {
      in[k] = x(r, c);
      if (++c == cols)
        c = 0, ++r;
    }
    compute(n);
    r = r0, c = c0;
    for (Eigen::Index k = 0; k < n; ++k) {
      y(r, c) = out[k];
      if (++c == cols)
        c = 0, ++r;
    }
  }
}

enum class Act { None, Tanh, ReLU, Sigmoid };

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

/// Applies `act` in place.
template <typename M> void applyActivation(Act act, M &&m) {
  switch (act) {
  case Act::None:
    break;
  case Act::Tanh:
    m = m.array().tanh();
    break;
  case Act::ReLU:
    m = m.array().max(0.0f);
    break;
  case Act::Sigmoid:
    m = m.unaryExpr([](float v) { return sigmoid(v); });
    break;
  }
}

/// Multiplies the incoming gradient by act'(z), written with the output y = act(z).
template <typename G, typename Y> void activationBackward(Act act, G &&grad, const Y &y) {
  switch (act) {
  case Act::None:
    break;
  case Act::Tanh:
    grad.array() *= 1.0f - y.array().square();
    break;
  case Act::ReLU:
    grad.array() *= (y.array() > 0.0f).template cast<float>();
    break;
  case Act::Sigmoid:
    grad.array() *= y.array() * (1.0f - y.array());
    break;
  }
}

/// Copies row `indices[r]` of a `rows x width` table into row r of `out`;
/// an index outside [0, rows) throws, naming `what`.
inline void gatherRows(const float *table, int64_t tableRows, int width, const int32_t *indices,
                       int count, float *out, const std::string &what) {
  for (int r = 0; r < count; ++r) {
    int32_t i = indices[r];
    if (i < 0 || i >= tableRows)
      throw std::out_of_range(what + ": index " + std::to_string(i) + " is outside [0, " +
                              std::to_string(tableRows) + ")");
    std::copy_n(table + size_t(i) * size_t(width), width, out + size_t(r) * size_t(width));
  }
}

/// Softmax cross-entropy of one row of `n` logits with an integer label.
/// With `probs`, also writes the softmax there (for the backward pass:
/// d/dlogits = probs - onehot). One vectorised float exp per logit, taken 16
/// logits of the row at a time whatever the row's address, and the sum in
/// double: a row's loss and softmax do not depend on its place in the batch.
float softmaxXent(const float *logits, int n, int label, float *probs = nullptr);

} // namespace foldc::rt
