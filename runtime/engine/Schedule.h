// Learning-rate schedules: step decay, cosine decay, linear warm-up.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace foldc::rt {

/// A learning-rate schedule (`train --schedule`, `--warmup`): the rate of
/// each optimizer step as a multiple of the base rate. A function of the
/// step count alone, so that a resumed run continues it exactly.
struct LearningRateSchedule {
  enum class Kind { Constant, Step, Cosine };
  Kind kind = Kind::Constant;
  long every = 0;    ///< Step: the steps between decays
  double factor = 1; ///< Step: what each decay multiplies the rate by
  long horizon = 0;  ///< Cosine: the step at which the rate reaches 0
  long warmup = 0;   ///< the first steps ramp linearly up to the rate: 1/warmup, 2/warmup...

  /// The multiple of the base rate for step `step` (0 is the first): the
  /// warm-up's ramp times the decay. Cosine decays from the end of the
  /// warm-up to `horizon`: 0.5 * (1 + cos(pi * progress)).
  double at(long step) const;
  /// The schedule as `--schedule` takes it, with its epochs made explicit
  /// (`cosine:4`): what a checkpoint records.
  std::string text() const { return text_; }

  /// Parses `constant`, `step:EPOCHS:FACTOR` (multiply the rate by FACTOR
  /// every EPOCHS epochs) or `cosine[:EPOCHS]` (decay to 0 over EPOCHS
  /// epochs, by default `epochs`), for `stepsPerEpoch` steps an epoch and
  /// `warmupSteps` of warm-up. Nullopt, with the reason in `error`, for
  /// anything else.
  static std::optional<LearningRateSchedule> parse(std::string_view text, long stepsPerEpoch,
                                                   int epochs, long warmupSteps,
                                                   std::string *error);

private:
  std::string text_ = "constant";
};

} // namespace foldc::rt
