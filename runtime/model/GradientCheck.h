// Checking a model's gradients: against central finite differences of its
// loss, and batched against per-example execution. Behind `NAME check` and
// the generated-model tests.
#pragma once

#include "runtime/engine/Choices.h"
#include "runtime/model/Model.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace foldc::rt {

/// The slopes of f around x at step h, given f(x) = `here`; x is left as it was.
struct FiniteDifferences {
  double central;  ///< (f(x + h) - f(x - h)) / 2h
  double forward;  ///< (f(x + h) - f(x)) / h
  double backward; ///< (f(x) - f(x - h)) / h
};

template <typename Objective>
FiniteDifferences finiteDifferences(float &x, double h, double here, Objective objective) {
  float saved = x;
  x = saved + float(h);
  double up = objective();
  x = saved - float(h);
  double down = objective();
  x = saved;
  return {(up - down) / (2 * h), (up - here) / h, (here - down) / h};
}

/// (f(x + h) - f(x - h)) / 2h, leaving x as it was (f(x) is not needed).
template <typename Objective> double centralDifference(float &x, double h, Objective objective) {
  return finiteDifferences(x, h, 0.0, objective).central;
}

/// Every parameter's gradient, in ParamStore order.
inline std::vector<std::vector<float>> gradientsOf(const ParamStore &params) {
  std::vector<std::vector<float>> out;
  for (int i = 0; i < params.count(); ++i)
    out.emplace_back(params.at(i).grad.begin(), params.at(i).grad.end());
  return out;
}

/// Entries of a parameter to check: a spread of them, and for embedding
/// tables the rows the examples used.
inline std::vector<size_t> gradientProbes(const Param &p) {
  std::vector<size_t> out;
  if (p.sparseRows) {
    for (int32_t row : p.touchedRows)
      for (int64_t k = 0; k < p.rowWidth(); k += p.rowWidth() / 3 + 1)
        out.push_back(size_t(row * p.rowWidth() + k));
    return out;
  }
  size_t step = size_t(p.size()) / 7 + 1;
  for (size_t i = 0; i < size_t(p.size()); i += step)
    out.push_back(i);
  return out;
}

struct GradientCheck {
  int probes = 0;                     ///< entries compared with a finite difference
  int failures = 0;                   ///< of those, how many differed beyond the tolerance
  int kinks = 0;                      ///< of those, how many sat on a kink (see checkGradients)
  int decisions = 0;                  ///< of those, how many moved a decision (see checkGradients)
  double worst = 0;                   ///< the largest |numeric - analytic| / tolerance seen
  std::string worstAt;                ///< PARAM[i] of it
  bool batchedEqualsUnbatched = true; ///< loss, metrics and every gradient
  std::string mismatchAt;             ///< the first that differed, if any
  bool passed() const { return failures == 0 && batchedEqualsUnbatched; }
};

/// Within `relative` of `b`, or `absolute` when both are near zero.
inline bool near(double a, double b, double relative, double absolute) {
  return std::abs(a - b) <= absolute + relative * std::abs(b);
}

/// The largest magnitude in `values` (0 for none).
inline double largestMagnitude(const std::vector<float> &values) {
  double largest = 0;
  for (float v : values)
    largest = std::max(largest, double(std::abs(v)));
  return largest;
}

/// The first entry where two computations of one gradient tensor differ
/// beyond float rounding, or -1. An entry is a sum whose rounding scales
/// with its terms, not with the sum: a small entry of a tensor of large ones
/// (terms that nearly cancel) may differ between two orders of summation by
/// the rounding of the large ones. So besides 1e-4 of the entry, the floor
/// is 1e-4 of the tensor's largest entry.
inline long firstGradientMismatch(const std::vector<float> &a, const std::vector<float> &b) {
  double floor = 1e-4 * std::max(largestMagnitude(a), largestMagnitude(b)) + 1e-9;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (!near(a[i], b[i], 1e-4, floor))
      return long(i);
  return a.size() == b.size() ? -1 : long(std::min(a.size(), b.size()));
}

/// Checks `model`'s gradients on `batch` (without dropout): analytic against
/// central differences of step `h` (agreeing within 2e-3 + 2e-2 |g|), and
/// the batched loss, metrics and gradients against per-example execution
/// (within 1e-4 relative; a gradient entry within 1e-4 of its tensor's
/// largest entry too). The model's parameters are left as they were.
///
/// A loss built from max, min, abs or relu has kinks, and a probe within `h`
/// of one gets a central difference that averages two slopes (two embedding
/// entries 1e-3 apart under an element-wise max are enough). Such a probe,
/// recognised by forward and backward slopes that disagree, passes when the
/// analytic gradient lies between them: a generalised (Clarke) gradient, such
/// as abs'(0) = 0 or the first of tied elements taking all of max's gradient.
///
/// A program that decides on computed values (a loop that stops, argmax,
/// beam search) is piecewise: a probe whose x + h or x - h takes another
/// path than x (a loop stops a step earlier, another token wins; seen as
/// another unfolded graph, BatchGraph::path) differences two pieces, and
/// says nothing of the gradient of the piece at x. So does a probe after
/// which a selecting kernel takes another value (segment_max another member,
/// max or min along an axis another position; ChoiceLog): near ties, a step
/// can cross a choice on each side, which the slopes test above cannot see.
/// Such probes are counted apart (`decisions`), as kinks are, and do not
/// fail the check.
template <class M> GradientCheck checkGradients(M &model, typename M::Batch batch, double h) {
  GradientCheck check;
  RunOptions unbatched;
  unbatched.batching = false;
  BatchResult a = model.gradients(batch);
  std::vector<std::vector<float>> analytic = gradientsOf(model.params());
  BatchResult b = model.gradients(batch, unbatched);
  std::vector<std::vector<float>> alone = gradientsOf(model.params());
  auto mismatch = [&](const std::string &what) {
    if (check.batchedEqualsUnbatched)
      check.mismatchAt = what;
    check.batchedEqualsUnbatched = false;
  };
  if (!near(a.loss, b.loss, 1e-4, 1e-6))
    mismatch("loss");
  for (size_t m = 0; m < a.metrics.size() && m < b.metrics.size(); ++m)
    if (!near(a.metrics[m].first, b.metrics[m].first, 1e-4, 1e-6) ||
        a.metrics[m].second != b.metrics[m].second)
      mismatch("metric " + model.metricNames()[m]);
  for (size_t id = 0; id < analytic.size(); ++id)
    if (long i = firstGradientMismatch(analytic[id], alone[id]); i >= 0)
      mismatch(model.params().at(int(id)).name + "[" + std::to_string(i) + "]");
  // The path and the choices of the unperturbed point.
  auto evalRecording = [&](uint64_t &path, uint64_t &choices) {
    ChoiceLog log;
    double loss = model.eval(batch).loss;
    path = model.lastPath();
    choices = log.digest();
    return loss;
  };
  uint64_t path = 0, choices = 0;
  double here = evalRecording(path, choices);
  for (int id = 0; id < model.params().count(); ++id) {
    Param &p = model.params().at(id);
    for (size_t i : gradientProbes(p)) {
      bool crossed = false;
      FiniteDifferences slopes = finiteDifferences(p.value[i], h, here, [&] {
        uint64_t probePath = 0, probeChoices = 0;
        double loss = evalRecording(probePath, probeChoices);
        crossed |= probePath != path || probeChoices != choices;
        return loss;
      });
      if (crossed) {
        ++check.probes;
        ++check.decisions;
        continue;
      }
      double g = analytic[size_t(id)][i];
      double tolerance = 2e-3 + 2e-2 * std::abs(g);
      double error = std::abs(slopes.central - g) / tolerance;
      ++check.probes;
      bool kink = std::abs(slopes.forward - slopes.backward) > tolerance;
      bool onKink = kink && g >= std::min(slopes.forward, slopes.backward) - tolerance &&
                    g <= std::max(slopes.forward, slopes.backward) + tolerance;
      if (error > 1 && onKink) {
        ++check.kinks;
        continue;
      }
      if (error > 1)
        ++check.failures;
      if (error > check.worst) {
        check.worst = error;
        check.worstAt = p.name + "[" + std::to_string(i) + "]";
      }
    }
  }
  return check;
}

} // namespace foldc::rt
