// Which dev result `train --save` keeps.
#pragma once

#include "runtime/model/Model.h"

#include <optional>
#include <string>
#include <vector>

namespace foldc::rt {

/// Which dev result `train --save` keeps: `loss` (the lowest dev loss), a
/// metric's name (its highest dev mean, as papers select on accuracy:
/// `root_hits`), or `min:NAME` / `max:NAME` to say which way is better.
class Selection {
public:
  /// The metric index that `criterion` names: -1 for the loss, nullopt when
  /// it names nothing the model has.
  static std::optional<int> parse(const std::string &criterion,
                                  const std::vector<std::string> &metricNames, bool *minimize);

  /// `criterion` is one that parse() accepted.
  Selection(const std::string &criterion, const std::vector<std::string> &metricNames);

  /// Whether `dev` is the best so far (and remembers it).
  bool improves(const BatchResult &dev);
  /// The dev results since the best one (`train --patience` stops at N).
  int resultsSinceBest() const { return sinceBest_; }

  /// The best score so far and the results since, as text ("" before any),
  /// for a checkpoint.
  std::string saveState() const;
  void restoreState(const std::string &text);

private:
  bool minimize_ = true;
  int metric_;
  bool seen_ = false;
  double best_ = 0;
  int sinceBest_ = 0;
};

} // namespace foldc::rt
