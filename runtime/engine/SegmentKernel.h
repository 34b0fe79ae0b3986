// The variadic kernel of segment_sum, segment_mean and segment_max: each
// instance is one segment, reducing however many arguments it was given.
// One batch of it covers every segment of every graph at one depth: one
// call per message-passing round, whatever the graphs' degrees.
#pragma once

#include "runtime/engine/AxisPrimitives.h"
#include "runtime/engine/Choices.h"
#include "runtime/engine/Kernel.h"

#include <algorithm>
#include <string>

namespace foldc::rt {

template <ops::ReduceKind K, int W> class SegmentKernel : public Kernel {
  static_assert(K != ops::ReduceKind::Min, "segments reduce by sum, mean or max");

public:
  explicit SegmentKernel(std::string name)
      : Kernel({std::move(name), {W}, {W}, 0, 0, double(W), /*variadic=*/true}) {}

  /// Row r of the result reduces the next argCounts[r] rows of args[0];
  /// an empty segment gives zeros.
  void forward(const ForwardCall &call) const override {
    const float *x = call.args[0];
    float *y = call.outs[0];
    for (int r = 0; r < call.rows; ++r, y += W) {
      int n = call.argCounts[r];
      std::fill_n(y, W, 0.0f);
      if (n > 0 && K == ops::ReduceKind::Max)
        std::copy_n(x, W, y);
      for (int m = (K == ops::ReduceKind::Max ? 1 : 0); m < n; ++m)
        for (int k = 0; k < W; ++k)
          y[k] = K == ops::ReduceKind::Max ? std::max(y[k], x[m * W + k]) : y[k] + x[m * W + k];
      if (K == ops::ReduceKind::Mean && n > 0)
        for (int k = 0; k < W; ++k)
          y[k] /= float(n);
      if (K == ops::ReduceKind::Max && ChoiceLog::active())
        for (int k = 0; k < W; ++k)
          ChoiceLog::record(largestMember(x, n, k));
      x += size_t(n) * W;
    }
  }

  /// Sum: every member gets the segment's gradient; mean: a share of it;
  /// max: the member that was largest (the first on ties).
  void backward(const BackwardCall &call) const override {
    const float *x = call.args[0];
    const float *dy = call.outGrads[0];
    float *dx = call.argGrads[0];
    for (int r = 0; r < call.rows; ++r, dy += W) {
      int n = call.argCounts[r];
      for (int k = 0; k < W && n > 0; ++k) {
        if constexpr (K == ops::ReduceKind::Max) {
          dx[largestMember(x, n, k) * W + k] += dy[k];
        } else {
          float share = K == ops::ReduceKind::Mean ? dy[k] / float(n) : dy[k];
          for (int m = 0; m < n; ++m)
            dx[m * W + k] += share;
        }
      }
      x += size_t(n) * W;
      dx += size_t(n) * W;
    }
  }

private:
  /// Which of a segment's n members (rows of W at x) is largest in column
  /// k: the first on ties.
  static int largestMember(const float *x, int n, int k) {
    int best = 0;
    for (int m = 1; m < n; ++m)
      if (x[m * W + k] > x[best * W + k])
        best = m;
    return best;
  }
};

} // namespace foldc::rt
