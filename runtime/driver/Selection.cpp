// Which dev result `train --save` keeps (see Selection.h).
#include "runtime/driver/Selection.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace foldc::rt {

std::optional<int> Selection::parse(const std::string &criterion,
                                    const std::vector<std::string> &metricNames, bool *minimize) {
  std::string name = criterion;
  *minimize = name == "loss";
  for (const char *prefix : {"min:", "max:"})
    if (name.rfind(prefix, 0) == 0) {
      *minimize = prefix[1] == 'i';
      name = name.substr(4);
    }
  if (name == "loss")
    return -1;
  auto it = std::find(metricNames.begin(), metricNames.end(), name);
  if (it == metricNames.end())
    return std::nullopt;
  return int(it - metricNames.begin());
}

Selection::Selection(const std::string &criterion, const std::vector<std::string> &metricNames)
    : metric_(*parse(criterion, metricNames, &minimize_)) {}

bool Selection::improves(const BatchResult &dev) {
  double value = metric_ < 0 ? dev.loss : dev.metricMean(size_t(metric_));
  double score = minimize_ ? -value : value;
  if (seen_ && !(score > best_)) {
    ++sinceBest_;
    return false;
  }
  seen_ = true;
  best_ = score;
  sinceBest_ = 0;
  return true;
}

std::string Selection::saveState() const {
  return seen_ ? nlohmann::json{{"best", best_}, {"since_best", sinceBest_}}.dump() : "";
}

void Selection::restoreState(const std::string &text) {
  seen_ = !text.empty();
  if (!seen_)
    return;
  nlohmann::json state = nlohmann::json::parse(text);
  if (state.is_number()) { // written before --patience: the best score alone
    best_ = state.get<double>();
    return;
  }
  best_ = state.at("best").get<double>();
  sinceBest_ = state.at("since_best").get<int>();
}

} // namespace foldc::rt
