// The learning curve's CSV file (see Curve.h).
#include "runtime/driver/Curve.h"

#include <filesystem>
#include <stdexcept>

namespace foldc::rt {

LearningCurve::LearningCurve(const std::string &file, const std::vector<std::string> &metricNames,
                             bool withDev, bool resumed)
    : file_(file), metricNames_(metricNames) {
  bool append = resumed && std::filesystem::exists(file) && std::filesystem::file_size(file) > 0;
  out_.open(file, append ? std::ios::app : std::ios::trunc);
  if (!out_)
    throw std::runtime_error("cannot write '" + file + "'");
  if (append)
    return;
  out_ << "epoch,train_loss";
  for (const std::string &m : metricNames)
    out_ << ",train_" << m;
  if (withDev) {
    out_ << ",dev_loss";
    for (const std::string &m : metricNames)
      out_ << ",dev_" << m;
  }
  out_ << ",seconds\n";
}

void LearningCurve::writeMeans(const BatchResult &result) {
  out_ << ',' << result.loss;
  for (size_t m = 0; m < metricNames_.size(); ++m)
    out_ << ',' << result.metricMean(m);
}

void LearningCurve::add(int epoch, const BatchResult &train, const std::optional<BatchResult> &dev,
                        double seconds) {
  out_ << epoch;
  writeMeans(train);
  if (dev)
    writeMeans(*dev);
  out_ << ',' << seconds << std::endl;
  if (!out_)
    throw std::runtime_error("cannot write '" + file_ + "'");
}

} // namespace foldc::rt
