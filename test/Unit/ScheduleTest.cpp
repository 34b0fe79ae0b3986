// Learning-rate schedules: the rate at chosen steps, and what --schedule accepts.
#include "runtime/engine/Schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace foldc::rt {
namespace {

LearningRateSchedule parsed(const std::string &text, long stepsPerEpoch, int epochs,
                            long warmup = 0) {
  std::string error;
  std::optional<LearningRateSchedule> s =
      LearningRateSchedule::parse(text, stepsPerEpoch, epochs, warmup, &error);
  EXPECT_TRUE(s) << error;
  return s.value_or(LearningRateSchedule{});
}

TEST(Schedule, ConstantIsOneEverywhere) {
  LearningRateSchedule s = parsed("constant", 10, 3);
  for (long step : {0L, 1L, 29L, 1000L})
    EXPECT_EQ(s.at(step), 1.0);
  EXPECT_EQ(s.text(), "constant");
}

TEST(Schedule, StepDecaysEveryFewEpochs) {
  LearningRateSchedule s = parsed("step:2:0.5", 10, 6); // decays at steps 20 and 40
  EXPECT_EQ(s.at(0), 1.0);
  EXPECT_EQ(s.at(19), 1.0);
  EXPECT_EQ(s.at(20), 0.5);
  EXPECT_EQ(s.at(39), 0.5);
  EXPECT_EQ(s.at(40), 0.25);
  EXPECT_EQ(s.text(), "step:2:0.5");
}

TEST(Schedule, CosineDecaysToZeroOverItsEpochs) {
  LearningRateSchedule s = parsed("cosine", 10, 4); // horizon 40 steps
  EXPECT_EQ(s.text(), "cosine:4") << "the epochs are recorded";
  EXPECT_DOUBLE_EQ(s.at(0), 1.0);
  EXPECT_NEAR(s.at(10), 0.5 * (1 + std::cos(std::numbers::pi / 4)), 1e-12);
  EXPECT_NEAR(s.at(20), 0.5, 1e-12);
  EXPECT_NEAR(s.at(40), 0.0, 1e-12);
  EXPECT_NEAR(s.at(50), 0.0, 1e-12) << "past the horizon it stays at 0";
  EXPECT_EQ(parsed("cosine:2", 10, 4).horizon, 20);
}

TEST(Schedule, WarmupRampsLinearlyThenTheDecayBegins) {
  LearningRateSchedule s = parsed("cosine:3", 10, 3, /*warmup=*/4); // cosine over steps 4..30
  EXPECT_DOUBLE_EQ(s.at(0), 0.25);
  EXPECT_DOUBLE_EQ(s.at(1), 0.5);
  EXPECT_DOUBLE_EQ(s.at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.at(4), 1.0);
  EXPECT_NEAR(s.at(17), 0.5, 1e-12);
  LearningRateSchedule constant = parsed("constant", 10, 3, 4);
  EXPECT_DOUBLE_EQ(constant.at(2), 0.75);
  EXPECT_DOUBLE_EQ(constant.at(4), 1.0);
}

TEST(Schedule, RejectsWhatItDoesNotKnow) {
  for (const char *text : {"", "linear", "step", "step:2", "step:0:0.5", "step:2:0", "step:2:1.5",
                           "step:x:0.5", "cosine:0", "cosine:-1", "cosine:2:3", "constant:1"}) {
    std::string error;
    EXPECT_FALSE(LearningRateSchedule::parse(text, 10, 3, 0, &error)) << text;
    EXPECT_NE(error.find("expected constant, step:EPOCHS:FACTOR"), std::string::npos) << error;
  }
}

} // namespace
} // namespace foldc::rt
