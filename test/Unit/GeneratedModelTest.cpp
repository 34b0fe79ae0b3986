// Generated models (every program of examples/, built by foldc_add_model):
// their gradients against finite differences, and batched against
// per-example execution for the loss, metrics and every gradient.
#include "attention.h"
#include "calculator.h"
#include "language_id.h"
#include "ngrams.h"
#include "runtime/model/GradientCheck.h"
#include "sentiment.h"
#include "weave.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using foldc::rt::JsonPath;
using foldc::rt::RunOptions;

const std::string kFile = "inline";

template <class Read> auto readAll(const std::vector<std::string> &lines, Read read) {
  std::vector<decltype(read(nlohmann::json(), JsonPath(kFile, 1)))> out;
  for (size_t i = 0; i < lines.size(); ++i)
    out.push_back(read(nlohmann::json::parse(lines[i]), JsonPath(kFile, long(i + 1))));
  return out;
}

template <class Example> std::vector<const Example *> pointers(const std::vector<Example> &xs) {
  std::vector<const Example *> out;
  for (const Example &x : xs)
    out.push_back(&x);
  return out;
}

std::vector<calculator::Example> calculatorExamples() {
  return readAll(
      {R"({"expr": {"Num": {"value": 0.5}}, "result": 0.5})",
       R"({"expr": {"Op": {"op": 2, "left": {"Num": {"value": 0.7}}, "right": {"Num": {"value": -0.4}}}}, "result": -0.28})",
       R"({"expr": {"Op": {"op": 0, "left": {"Op": {"op": 1, "left": {"Num": {"value": 0.3}}, "right": {"Num": {"value": 0.9}}}}, "right": {"Num": {"value": 0.2}}}}, "result": -0.4})"},
      calculator::readExample);
}

std::vector<sentiment::Tree> sentimentExamples() {
  return readAll(
      {R"({"Leaf": {"word": 7, "label": 4}})",
       R"({"Node": {"label": 1, "left": {"Leaf": {"word": 3, "label": 2}}, "right": {"Node": {"label": 0, "left": {"Leaf": {"word": 3, "label": 1}}, "right": {"Leaf": {"word": 11, "label": 0}}}}}})",
       R"({"Node": {"label": 2, "left": {"Leaf": {"word": 5, "label": 3}}, "right": {"Leaf": {"word": 7, "label": 2}}}})"},
      sentiment::readTree);
}

/// Gradients against central differences of step `step` (models with relu
/// take a smaller one, so that few differences straddle its kink at 0), and
/// batched against per-example, by the runtime's checkGradients.
template <class Model, class Example>
void expectFiniteDifferences(Model &model, const std::vector<Example> &examples,
                             double step = 1e-2) {
  auto batch = pointers(examples);
  model.init(5);
  foldc::rt::GradientCheck check = foldc::rt::checkGradients(model, batch, step);
  EXPECT_EQ(check.failures, 0) << "worst at " << check.worstAt << ": " << check.worst
                               << " x the tolerance";
  EXPECT_TRUE(check.batchedEqualsUnbatched) << check.mismatchAt;
  EXPECT_GT(check.probes, 20);
}

template <class Model, class Example>
void expectBatchedEqualsUnbatched(Model &model, const std::vector<Example> &examples,
                                  bool training) {
  auto batch = pointers(examples);
  RunOptions batched, unbatched;
  batched.seed = unbatched.seed = 9;
  unbatched.batching = false;
  model.init(5);
  foldc::rt::BatchResult a = model.gradients(batch, batched, training);
  std::vector<std::vector<float>> ga = foldc::rt::gradientsOf(model.params());
  foldc::rt::BatchResult b = model.gradients(batch, unbatched, training);
  std::vector<std::vector<float>> gb = foldc::rt::gradientsOf(model.params());
  EXPECT_NEAR(a.loss, b.loss, 1e-4 * std::abs(b.loss));
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (size_t m = 0; m < a.metrics.size(); ++m) {
    EXPECT_NEAR(a.metrics[m].first, b.metrics[m].first, 1e-4 * std::abs(b.metrics[m].first) + 1e-6);
    EXPECT_EQ(a.metrics[m].second, b.metrics[m].second);
  }
  for (size_t id = 0; id < ga.size(); ++id)
    for (size_t i = 0; i < ga[id].size(); ++i)
      ASSERT_NEAR(ga[id][i], gb[id][i], 1e-4 * std::abs(gb[id][i]) + 1e-6)
          << model.params().at(int(id)).name << "[" << i << "]";
}

/// Training keeps each kernel's forward values for its backward; other
/// passes recompute them. For a model without dropout, the gradients must be
/// the same to the last bit.
template <class Model, class Example>
void expectKeptValuesEqualRecomputed(Model &model, const std::vector<Example> &examples) {
  auto batch = pointers(examples);
  model.init(5);
  model.gradients(batch, {}, /*training=*/true);
  std::vector<std::vector<float>> kept = foldc::rt::gradientsOf(model.params());
  model.gradients(batch, {}, /*training=*/false);
  EXPECT_EQ(kept, foldc::rt::gradientsOf(model.params()));
}

TEST(GeneratedCalculator, GradientsMatchFiniteDifferences) {
  calculator::Model model;
  expectFiniteDifferences(model, calculatorExamples());
}

TEST(GeneratedCalculator, BatchedEqualsUnbatched) {
  calculator::Model model;
  expectBatchedEqualsUnbatched(model, calculatorExamples(), false);
  expectKeptValuesEqualRecomputed(model, calculatorExamples());
}

TEST(GeneratedCalculator, MetricsAndOutputs) {
  calculator::Model model;
  model.init(5);
  std::vector<calculator::Example> examples = calculatorExamples();
  auto batch = pointers(examples);
  std::vector<nlohmann::json> outputs = model.infer(batch);
  ASSERT_EQ(outputs.size(), 3u);
  // abs_error is the mean of |y - result| over the examples; loss the mean of (y - result)^2.
  double absError = 0, squared = 0;
  for (size_t i = 0; i < 3; ++i) {
    double y = outputs[i].get<double>();
    absError += std::abs(y - examples[i].result) / 3;
    squared += (y - examples[i].result) * (y - examples[i].result) / 3;
  }
  foldc::rt::BatchResult r = model.eval(batch);
  EXPECT_NEAR(r.metrics[0].first / double(r.metrics[0].second), absError, 1e-5);
  EXPECT_NEAR(r.loss, squared, 1e-5);
}

TEST(GeneratedSentiment, GradientsMatchFiniteDifferences) {
  sentiment::Model model;
  expectFiniteDifferences(model, sentimentExamples());
}

TEST(GeneratedSentiment, BatchedEqualsUnbatchedWithAndWithoutDropout) {
  sentiment::Model model;
  expectBatchedEqualsUnbatched(model, sentimentExamples(), false);
  expectBatchedEqualsUnbatched(model, sentimentExamples(), true);
}

TEST(GeneratedSentiment, MetricsCountEveryNodeEveryRootAndTheRootsNotNeutral) {
  sentiment::Model model;
  model.init(5);
  std::vector<sentiment::Tree> trees = sentimentExamples();
  foldc::rt::BatchResult r = model.eval(pointers(trees));
  ASSERT_EQ(model.metricNames(),
            (std::vector<std::string>{"all_hits", "binary_root_hits", "root_hits"}));
  EXPECT_EQ(r.metrics[0].second, 1 + 5 + 3); // nodes of the three trees
  EXPECT_EQ(r.metrics[1].second, 2);         // the roots that are not neutral (label 2)
  EXPECT_EQ(r.metrics[2].second, 3);         // one root each
}

std::vector<attention::Text> attentionExamples() {
  return readAll({R"({"words": [4, 9, 4, 7], "label": 1})", R"({"words": [2], "label": 0})",
                  R"({"words": [8, 1, 3], "label": 0})"},
                 attention::readText);
}

std::vector<language_id::Sentence> languageExamples() {
  return readAll({R"({"chars": [104, 105, 33], "lang": 2})", R"({"chars": [], "lang": 0})",
                  R"({"chars": [97, 98, 99, 100, 101], "lang": 4})"},
                 language_id::readSentence);
}

std::vector<bigram_bag::Doc> ngramExamples() {
  return readAll({R"({"words": [4, 9, 4, 7, 1], "label": 1})", R"({"words": [2], "label": 0})",
                  R"({"words": [], "label": 1})", R"({"words": [8, 3], "label": 0})"},
                 bigram_bag::readDoc);
}

/// Molecules of `sizes[i]` atoms with features drawn from a fixed sequence.
std::vector<weave_net::Molecule> weaveExamples(std::vector<int> sizes) {
  std::vector<weave_net::Molecule> out;
  float next = 0.1f;
  auto features = [&](int n) {
    nlohmann::json row = nlohmann::json::array();
    for (int k = 0; k < n; ++k, next = std::fmod(next * 7.3f + 0.37f, 2.0f) - 1.0f)
      row.push_back(next);
    return row;
  };
  for (int atoms : sizes) {
    nlohmann::json m = {{"atoms", nlohmann::json::array()},
                        {"pairs", nlohmann::json::array()},
                        {"label", 0.5 * atoms}};
    for (int a = 0; a < atoms; ++a) {
      m["atoms"].push_back(features(32));
      nlohmann::json row = nlohmann::json::array();
      for (int b = 0; b < atoms; ++b)
        row.push_back(features(16));
      m["pairs"].push_back(row);
    }
    out.push_back(weave_net::readMolecule(m, JsonPath(kFile, 1)));
  }
  return out;
}

TEST(GeneratedAttention, GradientsAndBatching) {
  attention::Model model;
  expectFiniteDifferences(model, attentionExamples());
  expectBatchedEqualsUnbatched(model, attentionExamples(), false);
  expectKeptValuesEqualRecomputed(model, attentionExamples());
}

TEST(GeneratedLanguageId, GradientsAndBatching) {
  language_id::Model model;
  expectFiniteDifferences(model, languageExamples());
  expectBatchedEqualsUnbatched(model, languageExamples(), false);
  expectKeptValuesEqualRecomputed(model, languageExamples());
}

TEST(GeneratedNgrams, GradientsAndBatching) {
  bigram_bag::Model model;
  expectFiniteDifferences(model, ngramExamples(), 2e-4);
  expectBatchedEqualsUnbatched(model, ngramExamples(), false);
  expectKeptValuesEqualRecomputed(model, ngramExamples());
}

TEST(GeneratedWeave, GradientsAndBatching) {
  weave_net::Model model;
  expectFiniteDifferences(model, weaveExamples({1, 3, 2}), 2e-4);
  expectBatchedEqualsUnbatched(model, weaveExamples({1, 3, 2}), false);
  expectKeptValuesEqualRecomputed(model, weaveExamples({1, 3, 2}));
}

} // namespace
