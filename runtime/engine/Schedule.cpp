// Learning-rate schedules (see Schedule.h).
#include "runtime/engine/Schedule.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <vector>

namespace foldc::rt {

double LearningRateSchedule::at(long step) const {
  double ramp = step < warmup ? double(step + 1) / double(warmup) : 1.0;
  switch (kind) {
  case Kind::Constant:
    return ramp;
  case Kind::Step:
    return ramp * std::pow(factor, double(step / every));
  case Kind::Cosine: {
    double span = double(horizon - warmup);
    double progress = span > 0 ? std::clamp(double(step - warmup) / span, 0.0, 1.0) : 1.0;
    return ramp * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  }
  }
  return ramp;
}

namespace {

std::vector<std::string_view> splitColons(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  for (size_t colon; (colon = text.find(':', at)) != std::string_view::npos; at = colon + 1)
    parts.push_back(text.substr(at, colon - at));
  parts.push_back(text.substr(at));
  return parts;
}

template <class T> std::optional<T> number(std::string_view text) {
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

} // namespace

std::optional<LearningRateSchedule> LearningRateSchedule::parse(std::string_view text,
                                                                long stepsPerEpoch, int epochs,
                                                                long warmupSteps,
                                                                std::string *error) {
  LearningRateSchedule s;
  s.warmup = warmupSteps;
  std::vector<std::string_view> parts = splitColons(text);
  if (parts[0] == "constant" && parts.size() == 1)
    return s;
  if (parts[0] == "step" && parts.size() == 3) {
    std::optional<long> every = number<long>(parts[1]);
    std::optional<double> factor = number<double>(parts[2]);
    if (every && *every > 0 && factor && *factor > 0 && *factor <= 1) {
      s.kind = Kind::Step;
      s.every = *every * stepsPerEpoch;
      s.factor = *factor;
      s.text_ = std::string(text);
      return s;
    }
  }
  if (parts[0] == "cosine" && parts.size() <= 2) {
    std::optional<long> over = parts.size() == 2 ? number<long>(parts[1]) : long(epochs);
    if (over && *over > 0) {
      s.kind = Kind::Cosine;
      s.horizon = *over * stepsPerEpoch;
      s.text_ = "cosine:" + std::to_string(*over);
      return s;
    }
  }
  *error = "expected constant, step:EPOCHS:FACTOR (a positive count of epochs, a factor in "
           "(0, 1]) or cosine[:EPOCHS], found '" +
           std::string(text) + "'";
  return std::nullopt;
}

} // namespace foldc::rt
