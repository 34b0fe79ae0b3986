// train --curve: the learning curve as CSV, a line per epoch (appended to
// when a run resumes).
#pragma once

#include "runtime/model/Model.h"

#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace foldc::rt {

class LearningCurve {
public:
  /// Opens `file` with its header (epoch, train loss and metrics, dev ones
  /// when `withDev`, seconds); a `resumed` run appends to a file that has one.
  LearningCurve(const std::string &file, const std::vector<std::string> &metricNames, bool withDev,
                bool resumed);
  void add(int epoch, const BatchResult &train, const std::optional<BatchResult> &dev,
           double seconds);

private:
  void writeMeans(const BatchResult &result);

  std::string file_;
  const std::vector<std::string> &metricNames_;
  std::ofstream out_;
};

} // namespace foldc::rt
