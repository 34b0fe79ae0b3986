// Finite-difference checks of every primitive kernel's backward pass.
#include "KernelHarness.h"
#include "runtime/reference/Layers.h"
#include "runtime/reference/TreeLstm.h"

namespace foldc::rt {
namespace {

using testing::KernelHarness;

ParamStore paramsWith(std::initializer_list<std::pair<std::string, std::vector<int64_t>>> specs,
                      uint64_t seed = 3) {
  ParamStore p;
  for (const auto &[name, shape] : specs)
    p.add(name, shape, {InitKind::Uniform, -0.5, 0.5});
  p.initialize(seed);
  return p;
}

class FcGradient : public ::testing::TestWithParam<Act> {};

TEST_P(FcGradient, MatchesFiniteDifferences) {
  ParamStore p = paramsWith({{"W", {4, 3}}, {"b", {3}}});
  FcKernel<4, 3> fc("fc", 0, 1, GetParam());
  KernelHarness(fc, p, 5, 11).checkGradients();
}

std::string activationName(const ::testing::TestParamInfo<Act> &info) {
  static const char *names[] = {"None", "Tanh", "ReLU", "Sigmoid"};
  return names[int(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Activations, FcGradient,
                         ::testing::Values(Act::None, Act::Tanh, Act::ReLU, Act::Sigmoid),
                         activationName);

TEST(KernelGradient, FcWithOneOutput) { // a readout: one column, stored as a column vector
  ParamStore p = paramsWith({{"W", {4, 1}}, {"b", {1}}});
  FcKernel<4, 1> fc("readout", 0, 1, Act::None);
  KernelHarness(fc, p, 3, 15).checkGradients();
}

TEST(KernelGradient, Embedding) {
  ParamStore p;
  p.add("E", {6, 3}, {InitKind::Uniform, -1, 1}, /*sparseRows=*/true);
  p.initialize(1);
  EmbeddingKernel<6, 3> embed("words", 0);
  KernelHarness h(embed, p, 4, 2);
  h.ints = {5, 0, 5, 2}; // row 5 used twice: its gradient accumulates
  h.checkGradients();
  p.zeroGrads();
  EXPECT_TRUE(p.at(0).touchedRows.empty());
  h.backward();
  std::vector<int32_t> touched = p.at(0).touchedRows;
  std::sort(touched.begin(), touched.end());
  EXPECT_EQ(touched, (std::vector<int32_t>{0, 2, 5}));
  EXPECT_FLOAT_EQ(p.at(0).grad[5 * 3], h.weights[0][0] + h.weights[0][2 * 3]);
  EXPECT_FLOAT_EQ(p.at(0).grad[1 * 3], 0.0f) << "unused rows get no gradient";
}

TEST(KernelGradient, EmbeddingRejectsIndexOutOfRange) {
  ParamStore p;
  p.add("E", {6, 3}, {InitKind::Zeros}, true);
  EmbeddingKernel<6, 3> embed("words", 0);
  KernelHarness h(embed, p, 1, 2);
  h.ints = {6};
  EXPECT_THROW(h.objective(), std::out_of_range);
}

TEST(KernelGradient, Lstm) {
  ParamStore p = paramsWith({{"W", {3, 8}}, {"U", {2, 8}}, {"b", {8}}});
  LstmKernel<3, 2> lstm("cell", 0, 1, 2);
  KernelHarness(lstm, p, 4, 5).checkGradients();
}

TEST(KernelGradient, Gru) {
  ParamStore p = paramsWith({{"W", {3, 6}}, {"U", {2, 6}}, {"b", {6}}});
  GruKernel<3, 2> gru("gru", 0, 1, 2);
  KernelHarness(gru, p, 4, 13).checkGradients();
}

TEST(KernelGradient, GruKeepsTheStateWhenTheUpdateGateIsOne) {
  ParamStore p = paramsWith({{"W", {1, 3}}, {"U", {1, 3}}, {"b", {3}}});
  p.at(0).value.assign(3, 0.0f);
  p.at(1).value.assign(3, 0.0f);
  p.at(2).value = {40.0f, 0.0f, 0.0f}; // z = sigmoid(40) = 1: s' = s
  GruKernel<1, 1> gru("gru", 0, 1, 2);
  KernelHarness h(gru, p, 2, 14);
  h.weights[0] = {1.0f, 1.0f};
  EXPECT_NEAR(h.objective(), h.args[1][0] + h.args[1][1], 1e-5);
}

TEST(KernelGradient, TreeLstmNode) {
  ParamStore p = paramsWith({{"U", {6, 15}}, {"b", {15}}});
  reference::TreeNodeKernel<3> node(0, 1);
  KernelHarness(node, p, 4, 6).checkGradients();
}

TEST(KernelGradient, TreeLstmLeaf) {
  ParamStore p;
  p.add("E", {5, 3}, {InitKind::Uniform, -1, 1}, true);
  p.initialize(4);
  reference::TreeLeafKernel<3> leaf(5, 0);
  KernelHarness h(leaf, p, 3, 7);
  h.ints = {4, 1, 4};
  h.checkGradients();
}

TEST(KernelGradient, Xent) {
  ParamStore p;
  XentKernel<4> xent("xent");
  KernelHarness h(xent, p, 3, 8);
  h.ints = {0, 3, 2};
  h.checkGradients(1e-3);
}

TEST(KernelGradient, XentValue) {
  ParamStore p;
  XentKernel<2> xent("xent");
  KernelHarness h(xent, p, 1, 8);
  h.args[0] = {0.0f, std::log(3.0f)}; // softmax = (1/4, 3/4)
  h.ints = {1};
  h.weights[0] = {1.0f};
  EXPECT_NEAR(h.objective(), -std::log(0.75), 1e-6);
}

TEST(KernelGradient, SigmoidXent) {
  ParamStore p;
  SigmoidXentKernel<3> loss("sigmoid_xent");
  KernelHarness(loss, p, 4, 9).checkGradients(1e-3);
}

TEST(KernelGradient, Mse) {
  ParamStore p;
  MseKernel<3> loss("mse");
  KernelHarness h(loss, p, 4, 10);
  h.checkGradients(1e-3);
  h.args[0] = {1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  h.args[1] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  h.weights[0] = {1, 0, 0, 0};
  EXPECT_NEAR(h.objective(), (0.0 + 4.0 + 9.0) / 3.0, 1e-6);
}

TEST(KernelGradient, DropoutWhenTraining) {
  ParamStore p;
  DropoutKernel<8> dropout("dropout", 0.5f);
  KernelHarness h(dropout, p, 3, 12, /*training=*/true);
  h.checkGradients(1e-3);
}

} // namespace
} // namespace foldc::rt
