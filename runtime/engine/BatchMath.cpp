// The out-of-line parts of BatchMath.h: softmax cross-entropy, the same code
// for every row whatever its size, compiled once instead of in every model.
#include "runtime/engine/BatchMath.h"

namespace foldc::rt {

float softmaxXent(const float *logits, int n, int label, float *probs) {
  constexpr int kBlock = 16;
  const float top = Eigen::Map<const Eigen::ArrayXf>(logits, n).maxCoeff(); // exact in any order
  // exp(logit - top) of 16 logits at a time, evaluated into aligned blocks so
  // that every logit goes through the same vector code (see elementwise).
  alignas(64) float in[kBlock], out[kBlock];
  const Eigen::Map<const Eigen::Array<float, kBlock, 1>, Eigen::Aligned64> inBlock(in);
  Eigen::Map<Eigen::Array<float, kBlock, 1>, Eigen::Aligned64> outBlock(out);
  Eigen::Array<double, kBlock, 1> sums = Eigen::Array<double, kBlock, 1>::Zero();
  for (int k = 0; k < n; k += kBlock) {
    const int count = std::min(kBlock, n - k);
    std::copy_n(logits + k, count, in);
    std::fill(in + count, in + kBlock, top); // exp(0) in the unused lanes, dropped below
    outBlock = (inBlock - top).exp();
    std::fill(out + count, out + kBlock, 0.0f);
    sums += outBlock.cast<double>();
    if (probs)
      std::copy_n(out, count, probs + k);
  }
  const double sum = sums.sum();
  if (probs) {
    const float scale = float(1.0 / sum);
    for (int k = 0; k < n; ++k)
      probs[k] *= scale;
  }
  return float(std::log(sum) + double(top) - double(logits[label]));
}

} // namespace foldc::rt
