// Beam search for `beam(step, init, start, end, width, max)`: the host side
// of each step (which hypotheses survive) between the batched runs of the
// step's kernels for every live hypothesis of every example.
#pragma once

#include "runtime/engine/BatchGraph.h"
#include "runtime/engine/Unfold.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace foldc::rt {

/// The hypotheses of one beam search over states S. Each round the
/// generated code runs the step on every live hypothesis (state, last
/// token), waits for their log-probabilities, and calls advance(). Scores
/// are sums of log-probabilities (so they never grow): once the best
/// finished hypothesis scores at least the best live one, none can beat it
/// and the search ends. Ties go to the earlier hypothesis, then the smaller
/// token, so width 1 picks what argmax picks: greedy decoding.
template <class S> class BeamSearch {
public:
  BeamSearch(S init, int64_t start, int64_t end, int64_t width, int64_t max)
      : end_(end), width_(width), max_(max) {
    if (width < 1)
      throw UnfoldError("beam: the width must be at least 1, found " + std::to_string(width));
    loopBound("beam", max);
    live_.push_back(Hypothesis{std::move(init), {}, start, 0.0});
  }

  bool searching() const {
    if (live_.empty() || steps_ >= max_)
      return false;
    return finished_.empty() || bestOf(finished_).score < bestOf(live_).score;
  }
  size_t size() const { return live_.size(); }
  const S &state(size_t k) const { return live_[k].state; }
  int64_t token(size_t k) const { return live_[k].last; }

  /// `scores[k]`: the log-probabilities the step gave live hypothesis k
  /// (computed: `co_await untilComputed` gives them), `next[k]` its next state.
  void advance(const std::vector<std::span<const float>> &scores, std::vector<S> next) {
    struct Candidate {
      double score;
      size_t from;
      int64_t token;
    };
    std::vector<Candidate> candidates;
    for (size_t k = 0; k < live_.size(); ++k) {
      std::span<const float> logp = scores[k];
      for (size_t v = 0; v < logp.size(); ++v)
        candidates.push_back({live_[k].score + double(logp[v]), k, int64_t(v)});
    }
    size_t keep = std::min(candidates.size(), size_t(width_));
    std::partial_sort(candidates.begin(), candidates.begin() + std::ptrdiff_t(keep),
                      candidates.end(), [](const Candidate &a, const Candidate &b) {
                        if (a.score != b.score)
                          return a.score > b.score;
                        return a.from != b.from ? a.from < b.from : a.token < b.token;
                      });
    std::vector<Hypothesis> live;
    for (size_t c = 0; c < keep; ++c) {
      const Candidate &pick = candidates[c];
      const Hypothesis &parent = live_[pick.from];
      if (pick.token == end_) {
        finished_.push_back(Hypothesis{next[pick.from], parent.tokens, pick.token, pick.score});
        continue;
      }
      Hypothesis child{next[pick.from], parent.tokens, pick.token, pick.score};
      child.tokens.push_back(pick.token);
      live.push_back(std::move(child));
    }
    live_ = std::move(live);
    ++steps_;
  }

  /// The best finished hypothesis' tokens (without the end token); the best
  /// live one when none finished within the bound.
  std::vector<int64_t> best() const {
    if (!finished_.empty())
      return bestOf(finished_).tokens;
    return live_.empty() ? std::vector<int64_t>{} : bestOf(live_).tokens;
  }

private:
  struct Hypothesis {
    S state;
    std::vector<int64_t> tokens;
    int64_t last;
    double score;
  };
  static const Hypothesis &bestOf(const std::vector<Hypothesis> &hypotheses) {
    return *std::max_element(
        hypotheses.begin(), hypotheses.end(),
        [](const Hypothesis &a, const Hypothesis &b) { return a.score < b.score; });
  }

  int64_t end_, width_, max_;
  int64_t steps_ = 0;
  std::vector<Hypothesis> live_, finished_;
};

} // namespace foldc::rt
