// Finite-difference checks of every batched primitive's backward pass.
#include "runtime/engine/Primitives.h"
#include "passes/builtins/Ops.h"
#include "runtime/engine/SegmentKernel.h"
#include "runtime/model/GradientCheck.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <random>

namespace foldc::rt::ops {
namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <int W> In<W> in(const Mat &m) { return In<W>(m.data(), m.rows(), W); }
template <int W> Out<W> out(Mat &m) { return Out<W>(m.data(), m.rows(), W); }

/// One primitive under test: input widths, output width, and its passes.
struct OpCase {
  std::vector<int> widths;
  int outWidth;
  std::function<void(const std::vector<Mat> &, Mat &)> forward;
  std::function<void(const std::vector<Mat> &, const Mat &, const Mat &, std::vector<Mat> &)>
      backward;
  ParamStore *params = nullptr;
  float lo = -1.0f, hi = 1.0f; ///< input range (positive for log and sqrt)
};

/// Objective sum(weights * output); compares analytic gradients of inputs
/// and parameters with central differences.
void checkOp(const OpCase &op, uint64_t seed = 1, int rows = 3) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(op.lo, op.hi), wdist(-1.0f, 1.0f);
  std::vector<Mat> inputs;
  for (int w : op.widths) {
    inputs.emplace_back(rows, w);
    for (float &v : inputs.back().reshaped())
      v = dist(rng);
  }
  Mat weights(rows, op.outWidth);
  for (float &v : weights.reshaped())
    v = wdist(rng);
  auto objective = [&]() {
    Mat y(rows, op.outWidth);
    op.forward(inputs, y);
    return double(y.cwiseProduct(weights).sum());
  };
  Mat y(rows, op.outWidth);
  op.forward(inputs, y);
  std::vector<Mat> grads;
  for (int w : op.widths)
    grads.push_back(Mat::Zero(rows, w));
  if (op.params)
    op.params->zeroGrads();
  op.backward(inputs, y, weights, grads);
  const double h = 1e-3;
  auto numeric = [&](float &x) { return foldc::rt::centralDifference(x, h, objective); };
  for (size_t i = 0; i < inputs.size(); ++i)
    for (Eigen::Index k = 0; k < inputs[i].size(); ++k)
      EXPECT_NEAR(grads[i].data()[k], numeric(inputs[i].data()[k]),
                  2e-2 * std::max(1.0, std::abs(double(grads[i].data()[k]))))
          << "input " << i << " element " << k;
  if (!op.params)
    return;
  for (int id = 0; id < op.params->count(); ++id) {
    Param &p = op.params->at(id);
    std::vector<float> analytic(p.grad.begin(), p.grad.end());
    for (size_t k = 0; k < p.value.size(); ++k)
      EXPECT_NEAR(analytic[k], numeric(p.value[k]),
                  2e-2 * std::max(1.0, std::abs(double(analytic[k]))))
          << p.name << "[" << k << "]";
  }
}

TEST(Primitives, Linear) {
  ParamStore p;
  p.add("W", {4, 3}, {InitKind::Uniform, -1, 1});
  p.initialize(2);
  checkOp({{4},
           3,
           [&](auto &x, Mat &y) { Linear<4, 3>::forward(in<4>(x[0]), p.at(0), out<3>(y)); },
           [&](auto &x, const Mat &, const Mat &dy, auto &dx) {
             Linear<4, 3>::backward(in<4>(x[0]), p.at(0), in<3>(dy), out<4>(dx[0]));
           },
           &p});
}

/// Random rows x width values in [-1, 1).
Mat randomRows(int rows, int width, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Mat m(rows, width);
  for (float &v : m.reshaped())
    v = dist(rng);
  return m;
}

TEST(Primitives, ADeferredWeightGradientEqualsTheImmediateOneBitForBit) {
  // Three batches' backwards, as a pass makes them: one copies x and dy, one
  // reads x where it was kept, one computes dy where placedDy put it. The
  // flush multiplies their rows in the order they came, as one GEMM over
  // all the rows copied into one matrix does.
  const std::vector<int> batchRows = {3, 7, 2};
  std::vector<Mat> xs, dys;
  for (size_t b = 0; b < batchRows.size(); ++b) {
    xs.push_back(randomRows(batchRows[b], 4, 10 + b));
    dys.push_back(randomRows(batchRows[b], 3, 20 + b));
  }
  ParamStore deferred;
  deferred.add("W", {4, 3}, {InitKind::Uniform, -1, 1});
  deferred.initialize(2);
  deferred.deferWeightGradients();
  Mat dx(7, 4);
  Linear<4, 3>::backward(in<4>(xs[0]), deferred.at(0), in<3>(dys[0]), Out<4>(dx.data(), 3, 4));
  Linear<4, 3>::backward(in<4>(xs[1]), deferred.at(0), in<3>(dys[1]), out<4>(dx), true);
  RowsMatrix<3> own;
  Rows<3> placed = placedDy<3>(deferred.at(0), 2, own);
  placed = dys[2];
  Linear<4, 3>::backwardPlaced(in<4>(xs[2]), deferred.at(0), In<3>(placed.data(), 2, 3),
                               Out<4>(dx.data(), 2, 4), false);
  EXPECT_EQ(own.size(), 0) << "a deferring pass places dy in the parameter";
  // Every batch's rows start on a cache line, whatever the widths before
  // (Eigen's results can depend on where the first aligned element is).
  EXPECT_EQ(reinterpret_cast<uintptr_t>(placed.data()) % 64, 0u);
  deferred.flushDeferredGradients();

  Mat x(12, 4), dy(12, 3);
  x << xs[0], xs[1], xs[2];
  dy << dys[0], dys[1], dys[2];
  std::vector<float> expected(12, 0.0f);
  gemm(Transpose::Yes, Transpose::No, 4, 3, 12, x.data(), 4, dy.data(), 3, 1.0f, expected.data(),
       3);
  std::vector<float> got(deferred.at(0).grad.begin(), deferred.at(0).grad.end());
  EXPECT_EQ(got, expected);
}

TEST(Primitives, PlacedDyOutsideADeferringPassIsTheKernelsOwn) {
  ParamStore p;
  p.add("W", {4, 3}, {InitKind::Uniform, -1, 1});
  p.initialize(2);
  Mat x = randomRows(5, 4, 1), dy = randomRows(5, 3, 2), dxPlaced = Mat::Zero(5, 4);
  RowsMatrix<3> own;
  Rows<3> placed = placedDy<3>(p.at(0), 5, own);
  EXPECT_EQ(placed.data(), own.data());
  placed = dy;
  Linear<4, 3>::backwardPlaced(in<4>(x), p.at(0), In<3>(placed.data(), 5, 3), out<4>(dxPlaced),
                               false);
  std::vector<float> placedGrad(p.at(0).grad.begin(), p.at(0).grad.end());
  p.zeroGrads();
  Mat dxPlain = Mat::Zero(5, 4);
  Linear<4, 3>::backward(in<4>(x), p.at(0), in<3>(dy), out<4>(dxPlain));
  EXPECT_EQ(placedGrad, std::vector<float>(p.at(0).grad.begin(), p.at(0).grad.end()));
  EXPECT_EQ(dxPlaced, dxPlain);
}

/// `backward(dx)` into a matrix of NaNs through FirstWrite gives what it
/// gives accumulating into zeros: every element written, none read.
template <class Backward> void expectFirstWriteAssigns(int width, const Backward &backward) {
  Mat zeros = Mat::Zero(4, width);
  backward(Out<Eigen::Dynamic>(zeros.data(), 4, width), false);
  Mat nans = Mat::Constant(4, width, std::numeric_limits<float>::quiet_NaN());
  backward(Out<Eigen::Dynamic>(nans.data(), 4, width), true);
  EXPECT_EQ(nans, zeros);
}

TEST(Primitives, AFirstWriteAssignsWhatAccumulatingOntoZerosGives) {
  Mat x = randomRows(4, 3, 3), z = randomRows(4, 3, 4), s = randomRows(4, 1, 5),
      dy = randomRows(4, 3, 6);
  Mat y(4, 3);
  auto run = [](auto &&d, bool first, auto &&call) {
    if (first)
      call(FirstWrite(d));
    else
      call(d);
  };
  Unary<UnaryKind::Tanh, 3>::forward(in<3>(x), out<3>(y));
  expectFirstWriteAssigns(3, [&](Out<Eigen::Dynamic> d, bool first) {
    run(d, first,
        [&](auto &&dx) { Unary<UnaryKind::Tanh, 3>::backward(in<3>(x), in<3>(y), in<3>(dy), dx); });
  });
  expectFirstWriteAssigns(3, [&](Out<Eigen::Dynamic> d, bool first) {
    run(d, first, [&](auto &&dx) {
      Unary<UnaryKind::Neg, 3>::backward(NotKept{}, NotKept{}, in<3>(dy), dx);
    });
  });
  for (int operand : {0, 1}) { // each side of a - b and of a / s (s broadcast)
    Mat other = Mat::Zero(4, 3), otherScalar = Mat::Zero(4, 1);
    expectFirstWriteAssigns(3, [&](Out<Eigen::Dynamic> d, bool first) {
      run(d, first, [&](auto &&g) {
        if (operand == 0)
          Binary<BinaryKind::Sub, 3, 3>::backward(in<3>(x), in<3>(z), in<3>(dy), g, out<3>(other));
        else
          Binary<BinaryKind::Sub, 3, 3>::backward(in<3>(x), in<3>(z), in<3>(dy), out<3>(other), g);
      });
    });
    expectFirstWriteAssigns(operand == 0 ? 3 : 1, [&](Out<Eigen::Dynamic> d, bool first) {
      run(d, first, [&](auto &&g) {
        if (operand == 0)
          Binary<BinaryKind::Div, 3, 1>::backward(in<3>(x), in<1>(s), in<3>(dy), g,
                                                  out<1>(otherScalar));
        else
          Binary<BinaryKind::Div, 3, 1>::backward(in<3>(x), in<1>(s), in<3>(dy), out<3>(other), g);
      });
    });
  }
}

TEST(Primitives, BiasAdd) {
  ParamStore p;
  p.add("b", {3}, {InitKind::Uniform, -1, 1});
  p.initialize(3);
  checkOp({{3},
           3,
           [&](auto &x, Mat &y) { BiasAdd<3>::forward(in<3>(x[0]), p.at(0), out<3>(y)); },
           [&](auto &, const Mat &, const Mat &dy, auto &dx) {
             BiasAdd<3>::backward(p.at(0), in<3>(dy), out<3>(dx[0]));
           },
           &p});
}

template <BinaryKind K, int A, int B> OpCase binaryCase() {
  using Op = Binary<K, A, B>;
  OpCase c{{A, B},
           Op::W,
           [](auto &x, Mat &y) { Op::forward(in<A>(x[0]), in<B>(x[1]), out<Op::W>(y)); },
           [](auto &x, const Mat &, const Mat &dy, auto &dx) {
             Op::backward(in<A>(x[0]), in<B>(x[1]), in<Op::W>(dy), out<A>(dx[0]), out<B>(dx[1]));
           }};
  if (K == BinaryKind::Div) { // keep the divisor away from zero
    c.lo = 0.5f;
    c.hi = 2.0f;
  }
  return c;
}

TEST(Primitives, BinaryWithBroadcasting) {
  checkOp(binaryCase<BinaryKind::Add, 3, 3>());
  checkOp(binaryCase<BinaryKind::Sub, 3, 1>());
  checkOp(binaryCase<BinaryKind::Mul, 1, 3>());
  checkOp(binaryCase<BinaryKind::Mul, 3, 3>());
  checkOp(binaryCase<BinaryKind::Div, 3, 3>());
  checkOp(binaryCase<BinaryKind::Div, 1, 3>());
  checkOp(binaryCase<BinaryKind::Maximum, 3, 3>());
  checkOp(binaryCase<BinaryKind::Minimum, 3, 3>());
}

TEST(Primitives, MaximumRoutesTheGradientToTheChosenOperandFirstOnTies) {
  Mat a(1, 3), b(1, 3), y(1, 3), dy(1, 3), da = Mat::Zero(1, 3), db = Mat::Zero(1, 3);
  a << 1, 5, 2;
  b << 3, 4, 2;
  dy << 10, 20, 30;
  Binary<BinaryKind::Maximum, 3, 3>::forward(in<3>(a), in<3>(b), out<3>(y));
  EXPECT_EQ(y, (Mat(1, 3) << 3, 5, 2).finished());
  Binary<BinaryKind::Maximum, 3, 3>::backward(in<3>(a), in<3>(b), in<3>(dy), out<3>(da),
                                              out<3>(db));
  EXPECT_EQ(da, (Mat(1, 3) << 0, 20, 30).finished());
  EXPECT_EQ(db, (Mat(1, 3) << 10, 0, 0).finished());
}

template <UnaryKind K> void checkUnary(float lo = -1.0f, float hi = 1.0f) {
  using Op = Unary<K, 4>;
  OpCase c{{4},
           4,
           [](auto &x, Mat &y) { Op::forward(in<4>(x[0]), out<4>(y)); },
           [](auto &x, const Mat &y, const Mat &dy, auto &dx) {
             Op::backward(in<4>(x[0]), in<4>(y), in<4>(dy), out<4>(dx[0]));
           }};
  c.lo = lo;
  c.hi = hi;
  checkOp(c, uint64_t(K) + 10);
}

/// Whether Unary<K> is defined on [lo, hi] (log and sqrt are not below 0).
template <UnaryKind K> bool definedOn(float lo, float hi) {
  Mat x(1, 4), y(1, 4);
  x << lo, (2 * lo + hi) / 3, (lo + 2 * hi) / 3, hi;
  Unary<K, 4>::forward(in<4>(x), out<4>(y));
  return y.allFinite();
}

/// stop_gradient: the value as it is forward, nothing added backward (its
/// gradient is 0 by definition, not the 1 that differences would measure).
void checkStopGradient() {
  Mat x(2, 4), y(2, 4), dy = Mat::Constant(2, 4, 3.0f), dx = Mat::Constant(2, 4, 5.0f);
  x << 1, -2, 3, -4, 0.5, 0.25, -0.125, 8;
  Unary<UnaryKind::StopGradient, 4>::forward(in<4>(x), out<4>(y));
  EXPECT_EQ(y, x);
  Unary<UnaryKind::StopGradient, 4>::backward(in<4>(x), in<4>(y), in<4>(dy), out<4>(dx));
  EXPECT_EQ(dx, Mat::Constant(2, 4, 5.0f)) << "no gradient flows back";
}

/// Every element-wise function of the compiler's op table (Ops.def) has a
/// formula here (a row without one does not compile: the chain ends in a
/// static_assert) whose gradient matches central differences, on each side
/// of 0 where it is defined (away from the kinks of relu and abs).
template <UnaryKind K> void checkElementwise() {
  SCOPED_TRACE(int(K));
  if constexpr (K == UnaryKind::StopGradient) {
    checkStopGradient();
    return;
  }
  checkUnary<K>(0.5f, 2.0f);
  if (definedOn<K>(-2.0f, -0.5f))
    checkUnary<K>(-2.0f, -0.5f);
}

TEST(Primitives, EveryElementwiseFunctionOfTheOpTable) {
  checkUnary<UnaryKind::Neg>(); // `-x`: a Unary op that is not a builtin
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) checkElementwise<UnaryKind::Kind>();
#include "passes/builtins/Ops.def"
}

/// An operand or result as a kernel passes it to a backward: the value when
/// the op table's backwardReads says the formula reads it, else a NotKept.
template <bool Reads> auto keptOr(const Mat &value) {
  if constexpr (Reads)
    return in<4>(value);
  else
    return NotKept{};
}

/// Unary<K>'s backward given only what backwardReads(Op) says it reads (it
/// would not compile if the formula read more) gives the gradient it gives
/// with everything: kernels keep no more than that (KernelCodegen).
template <OpKind Op, UnaryKind K> void checkUnaryReadsOnly() {
  SCOPED_TRACE(opInfo(Op).name);
  constexpr BackwardReads reads = backwardReads(Op);
  Mat x = Mat::Random(3, 4).array() * 0.75f + 1.25f; // in [0.5, 2]: log and sqrt defined
  Mat y(3, 4), dy = Mat::Random(3, 4), all = Mat::Zero(3, 4), only = Mat::Zero(3, 4);
  Unary<K, 4>::forward(in<4>(x), out<4>(y));
  Unary<K, 4>::backward(in<4>(x), in<4>(y), in<4>(dy), out<4>(all));
  Unary<K, 4>::backward(keptOr<reads.operands>(x), keptOr<reads.result>(y), in<4>(dy),
                        out<4>(only));
  EXPECT_EQ(all, only);
}

template <OpKind Op, BinaryKind K> void checkBinaryReadsOnly() {
  SCOPED_TRACE(opInfo(Op).name);
  static_assert(!backwardReads(Op).result, "binary backwards read no result");
  constexpr bool reads = backwardReads(Op).operands;
  Mat a = Mat::Random(3, 4).array() + 2.0f, b = Mat::Random(3, 4).array() + 2.0f;
  Mat dy = Mat::Random(3, 4);
  Mat allA = Mat::Zero(3, 4), allB = Mat::Zero(3, 4), onlyA = Mat::Zero(3, 4),
      onlyB = Mat::Zero(3, 4);
  Binary<K, 4, 4>::backward(in<4>(a), in<4>(b), in<4>(dy), out<4>(allA), out<4>(allB));
  Binary<K, 4, 4>::backward(keptOr<reads>(a), keptOr<reads>(b), in<4>(dy), out<4>(onlyA),
                            out<4>(onlyB));
  EXPECT_EQ(allA, onlyA);
  EXPECT_EQ(allB, onlyB);
}

/// The same row at every place of a batch gives, bit for bit, the result of
/// the row alone. 37 floats a row, so that rows start at every alignment and
/// some fall in the partial packet at the end, where Eigen's own evaluation
/// would switch to scalar code (a differing last bit once made batched
/// argmaxes differ from per-example ones: issue 31's seeds 11945 and 102670).
constexpr int kOddWidth = 37;
template <typename F> void expectSameAtEveryPlace(const char *what, F forward) {
  SCOPED_TRACE(what);
  Mat row = Mat::Random(1, kOddWidth).array() * 0.75f + 1.25f; // in [0.5, 2]
  Mat alone = forward(row), batch = forward(row.replicate(5, 1));
  for (int r = 0; r < 5; ++r)
    EXPECT_TRUE(batch.row(r) == alone.row(0)) << "row " << r;
}

template <UnaryKind K> Mat unaryOf(const Mat &x) {
  Mat y(x.rows(), kOddWidth);
  Unary<K, kOddWidth>::forward(in<kOddWidth>(x), out<kOddWidth>(y));
  return y;
}

template <typename Op> Mat rowOpOf(const Mat &x) {
  Mat y(x.rows(), kOddWidth);
  Op::forward(in<kOddWidth>(x), out<kOddWidth>(y));
  return y;
}

Mat sigmoidXentOf(const Mat &z) {
  Mat t = Mat::Constant(z.rows(), kOddWidth, 0.25f), y(z.rows(), 1);
  SigmoidXent<kOddWidth>::forward(in<kOddWidth>(z), in<kOddWidth>(t), out<1>(y));
  return y;
}

TEST(Primitives, ARowsValueDoesNotDependOnItsPlaceInTheBatch) {
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts)                                                     \
  expectSameAtEveryPlace(Name, unaryOf<UnaryKind::Kind>);
#include "passes/builtins/Ops.def"
  expectSameAtEveryPlace("softmax", rowOpOf<Softmax<kOddWidth>>);
  expectSameAtEveryPlace("log_softmax", rowOpOf<LogSoftmax<kOddWidth>>);
  expectSameAtEveryPlace("sigmoid_xent", sigmoidXentOf);
}

TEST(Primitives, LogSoftmax) {
  checkOp({{4},
           4,
           [](auto &x, Mat &y) { LogSoftmax<4>::forward(in<4>(x[0]), out<4>(y)); },
           [](auto &, const Mat &y, const Mat &dy, auto &dx) {
             LogSoftmax<4>::backward(in<4>(y), in<4>(dy), out<4>(dx[0]));
           }});
  Mat x = Mat::Random(3, 5), logs(3, 5), probabilities(3, 5);
  LogSoftmax<5>::forward(in<5>(x), out<5>(logs));
  Softmax<5>::forward(in<5>(x), out<5>(probabilities));
  EXPECT_TRUE(logs.array().exp().matrix().isApprox(probabilities, 1e-6f));
}

TEST(Primitives, BackwardsReadOnlyWhatTheOpTableSays) {
  checkUnaryReadsOnly<OpKind::Neg, UnaryKind::Neg>();
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) checkUnaryReadsOnly<OpKind::Kind, UnaryKind::Kind>();
#include "passes/builtins/Ops.def"
  checkBinaryReadsOnly<OpKind::Add, BinaryKind::Add>();
  checkBinaryReadsOnly<OpKind::Sub, BinaryKind::Sub>();
  checkBinaryReadsOnly<OpKind::Mul, BinaryKind::Mul>();
  checkBinaryReadsOnly<OpKind::Div, BinaryKind::Div>();
  checkBinaryReadsOnly<OpKind::Maximum, BinaryKind::Maximum>();
  checkBinaryReadsOnly<OpKind::Minimum, BinaryKind::Minimum>();
}

TEST(Primitives, SliceConcatDot) {
  checkOp({{6},
           2,
           [](auto &x, Mat &y) { Slice<6, 3, 5>::forward(in<6>(x[0]), out<2>(y)); },
           [](auto &, const Mat &, const Mat &dy, auto &dx) {
             Slice<6, 3, 5>::backward(in<2>(dy), out<6>(dx[0]));
           }});
  checkOp({{2, 3},
           5,
           [](auto &x, Mat &y) { Concat<2, 3>::forward(in<2>(x[0]), in<3>(x[1]), out<5>(y)); },
           [](auto &, const Mat &, const Mat &dy, auto &dx) {
             Concat<2, 3>::backward(in<5>(dy), out<2>(dx[0]), out<3>(dx[1]));
           }});
  checkOp({{4, 4},
           1,
           [](auto &x, Mat &y) { Dot<4>::forward(in<4>(x[0]), in<4>(x[1]), out<1>(y)); },
           [](auto &x, const Mat &, const Mat &dy, auto &dx) {
             Dot<4>::backward(in<4>(x[0]), in<4>(x[1]), in<1>(dy), out<4>(dx[0]), out<4>(dx[1]));
           }});
}

template <ReduceKind K> void checkReduce() {
  checkOp({{5},
           1,
           [](auto &x, Mat &y) { Reduce<K, 5>::forward(in<5>(x[0]), out<1>(y)); },
           [](auto &x, const Mat &, const Mat &dy, auto &dx) {
             Reduce<K, 5>::backward(in<5>(x[0]), in<1>(dy), out<5>(dx[0]));
           }},
          uint64_t(K) + 30);
}

TEST(Primitives, Reductions) {
  checkReduce<ReduceKind::Sum>();
  checkReduce<ReduceKind::Mean>();
  checkReduce<ReduceKind::Max>();
  checkReduce<ReduceKind::Min>();
}

TEST(Primitives, Softmax) {
  checkOp({{4},
           4,
           [](auto &x, Mat &y) { Softmax<4>::forward(in<4>(x[0]), out<4>(y)); },
           [](auto &, const Mat &y, const Mat &dy, auto &dx) {
             Softmax<4>::backward(in<4>(y), in<4>(dy), out<4>(dx[0]));
           }});
  Mat x(1, 3), y(1, 3);
  x << 0.0f, std::log(2.0f), std::log(5.0f);
  Softmax<3>::forward(in<3>(x), out<3>(y));
  EXPECT_NEAR(y(0, 0), 1.0f / 8, 1e-6);
  EXPECT_NEAR(y(0, 2), 5.0f / 8, 1e-6);
}

/// Every row sums to 1, at widths Eigen evaluates differently (fixed 2 and 5).
template <int W> void expectRowsSumToOne() {
  Mat x = Mat::Random(7, W) * 3, y(7, W);
  Softmax<W>::forward(in<W>(x), out<W>(y));
  for (int r = 0; r < 7; ++r)
    EXPECT_NEAR(y.row(r).sum(), 1.0f, 1e-6) << "W = " << W << ", row " << r;
}

TEST(Primitives, SoftmaxRowsSumToOne) {
  expectRowsSumToOne<2>();
  expectRowsSumToOne<5>();
  expectRowsSumToOne<64>();
}

TEST(Primitives, ArgmaxTakesTheFirstMaximum) {
  Mat x(2, 3), y(2, 1);
  x << 1, 5, 5, -1, -3, -2;
  Argmax<3>::forward(in<3>(x), out<1>(y));
  EXPECT_EQ(y(0, 0), 1.0f);
  EXPECT_EQ(y(1, 0), 0.0f);
}

TEST(Primitives, GatherTouchesOnlyTheRowsUsed) {
  ParamStore p;
  p.add("E", {5, 3}, {InitKind::Uniform, -1, 1}, /*sparseRows=*/true);
  p.initialize(6);
  std::vector<int32_t> rows = {4, 1, 4};
  checkOp({{},
           3,
           [&](auto &, Mat &y) { Gather<3>::forward(rows, p.at(0), out<3>(y)); },
           [&](auto &, const Mat &, const Mat &dy, auto &) {
             Gather<3>::backward(rows, p.at(0), in<3>(dy));
           },
           &p});
  std::vector<int32_t> touched = p.at(0).touchedRows;
  std::sort(touched.begin(), touched.end());
  EXPECT_EQ(touched, (std::vector<int32_t>{1, 4}));
}

TEST(Primitives, Losses) {
  std::vector<int32_t> labels = {2, 0, 3};
  checkOp({{4},
           1,
           [&](auto &x, Mat &y) { Xent<4>::forward(in<4>(x[0]), labels, out<1>(y)); },
           [&](auto &x, const Mat &, const Mat &dy, auto &dx) {
             Xent<4>::backward(in<4>(x[0]), labels, in<1>(dy), out<4>(dx[0]));
           }});
  checkOp({{3, 3},
           1,
           [](auto &x, Mat &y) { Mse<3>::forward(in<3>(x[0]), in<3>(x[1]), out<1>(y)); },
           [](auto &x, const Mat &, const Mat &dy, auto &dx) {
             Mse<3>::backward(in<3>(x[0]), in<3>(x[1]), in<1>(dy), out<3>(dx[0]), out<3>(dx[1]));
           }});
  checkOp({{2, 2},
           1,
           [](auto &x, Mat &y) { SigmoidXent<2>::forward(in<2>(x[0]), in<2>(x[1]), out<1>(y)); },
           [](auto &x, const Mat &, const Mat &dy, auto &dx) {
             SigmoidXent<2>::backward(in<2>(x[0]), in<2>(x[1]), in<1>(dy), out<2>(dx[0]),
                                      out<2>(dx[1]));
           }});
  Mat logits(1, 2), loss(1, 1);
  logits << 0.0f, std::log(3.0f);
  Xent<2>::forward(in<2>(logits), {1}, out<1>(loss));
  EXPECT_NEAR(loss(0, 0), -std::log(0.75f), 1e-6);
}

// A vocabulary-wide softmax (the width of a language model's, not a multiple
// of 16) at every offset from an aligned address: each row's loss and softmax
// are the same bits wherever the row sits in a batch, and agree with a
// double-precision softmax.
TEST(Primitives, SoftmaxXentDoesNotDependOnTheRowsAddress) {
  constexpr int kWidth = 6022, kLabel = 4321;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  std::vector<float> row(kWidth);
  for (float &v : row)
    v = dist(rng);
  std::vector<double> exps(kWidth);
  const double top = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (int k = 0; k < kWidth; ++k)
    sum += exps[size_t(k)] = std::exp(double(row[size_t(k)]) - top);
  const double loss = std::log(sum) + top - row[kLabel];
  std::vector<float> firstProbs(kWidth);
  const float first = softmaxXent(row.data(), kWidth, kLabel, firstProbs.data());
  EXPECT_NEAR(first, loss, 1e-5 * loss);
  for (int k = 0; k < kWidth; k += 97)
    EXPECT_NEAR(firstProbs[size_t(k)], exps[size_t(k)] / sum, 1e-6 * exps[size_t(k)] / sum + 1e-12);
  alignas(64) static float shifted[kWidth + 16];
  std::vector<float> probs(kWidth);
  for (int offset = 1; offset < 16; ++offset) {
    std::copy(row.begin(), row.end(), shifted + offset);
    EXPECT_EQ(softmaxXent(shifted + offset, kWidth, kLabel), first) << "offset " << offset;
    EXPECT_EQ(softmaxXent(shifted + offset, kWidth, kLabel, probs.data()), first);
    EXPECT_EQ(probs, firstProbs) << "offset " << offset;
  }
}

TEST(Primitives, DropoutMasksByInstanceKey) {
  ExecContext training{nullptr, true, 9}, inference{nullptr, false, 9};
  std::vector<uint64_t> keys = {11, 12, 13};
  checkOp({{8},
           8,
           [&](auto &x, Mat &y) {
             Dropout<8>::forward(in<8>(x[0]), 0.5f, 0, keys.data(), training, out<8>(y));
           },
           [&](auto &, const Mat &, const Mat &dy, auto &dx) {
             Dropout<8>::backward(0.5f, 0, keys.data(), training, in<8>(dy), out<8>(dx[0]));
           }});
  Mat x = Mat::Constant(3, 8, 1.0f), y(3, 8);
  Dropout<8>::forward(in<8>(x), 0.5f, 0, keys.data(), inference, out<8>(y));
  EXPECT_EQ(y, x) << "identity outside training";
}

TEST(Primitives, DropoutStreamsDrawDifferentMasks) {
  ExecContext training{nullptr, true, 9};
  std::vector<uint64_t> keys = {11, 12, 13};
  Mat x = Mat::Constant(3, 64, 1.0f), a(3, 64), b(3, 64), again(3, 64);
  Dropout<64>::forward(in<64>(x), 0.5f, 0, keys.data(), training, out<64>(a));
  Dropout<64>::forward(in<64>(x), 0.5f, 1, keys.data(), training, out<64>(b));
  Dropout<64>::forward(in<64>(x), 0.5f, 0, keys.data(), training, out<64>(again));
  EXPECT_EQ(a, again) << "a stream's mask is reproducible";
  EXPECT_NE(a, b) << "two streams, two masks";
}

TEST(Primitives, CompareGivesZeroOrOne) {
  Mat a(2, 1), b(2, 1), y(2, 1);
  a << 3, 1;
  b << 3, 2;
  Compare<CompareKind::Eq, 1, 1>::forward(in<1>(a), in<1>(b), out<1>(y));
  EXPECT_EQ(y(0, 0), 1.0f);
  EXPECT_EQ(y(1, 0), 0.0f);
  Compare<CompareKind::Lt, 1, 1>::forward(in<1>(a), in<1>(b), out<1>(y));
  EXPECT_EQ(y(1, 0), 1.0f);
}

TEST(Primitives, HostColumn) {
  int32_t host[] = {1, 10, 2, 20, 3, 30}; // two values per row
  EXPECT_EQ(hostColumn(host, 3, 2, 1), (std::vector<int32_t>{10, 20, 30}));
}

TEST(Primitives, BackwardAccumulates) {
  Mat x = Mat::Constant(2, 3, 1.0f), dy = Mat::Constant(2, 3, 1.0f), dx = Mat::Constant(2, 3, 5.0f);
  Unary<UnaryKind::Square, 3>::backward(in<3>(x), in<3>(x), in<3>(dy), out<3>(dx));
  EXPECT_EQ(dx(0, 0), 7.0f) << "5 already there + 2x";
}

// ---- along an axis: a row seen as [O, N, I]

template <ReduceKind K> void checkReduceAxis() {
  // [2, 3, 2] along the middle axis -> [2, 2]
  checkOp({{12},
           4,
           [](auto &x, Mat &y) { ReduceAxis<K, 2, 3, 2>::forward(in<12>(x[0]), out<4>(y)); },
           [](auto &x, const Mat &, const Mat &dy, auto &dx) {
             ReduceAxis<K, 2, 3, 2>::backward(in<12>(x[0]), in<4>(dy), out<12>(dx[0]));
           }},
          uint64_t(K) + 40);
}

TEST(Primitives, ReductionsAlongAnAxis) {
  checkReduceAxis<ReduceKind::Sum>();
  checkReduceAxis<ReduceKind::Mean>();
  checkReduceAxis<ReduceKind::Max>();
  checkReduceAxis<ReduceKind::Min>();
  Mat x(1, 6), y(1, 3); // [[1, 5, 2], [4, 0, 6]] summed down the columns
  x << 1, 5, 2, 4, 0, 6;
  ReduceAxis<ReduceKind::Sum, 1, 2, 3>::forward(in<6>(x), out<3>(y));
  EXPECT_EQ(y, (Mat(1, 3) << 5, 5, 8).finished());
  ReduceAxis<ReduceKind::Max, 1, 2, 3>::forward(in<6>(x), out<3>(y));
  EXPECT_EQ(y, (Mat(1, 3) << 4, 5, 6).finished());
  Mat a(1, 3);
  ArgmaxAxis<1, 2, 3>::forward(in<6>(x), out<3>(a));
  EXPECT_EQ(a, (Mat(1, 3) << 1, 0, 1).finished());
}

TEST(Primitives, SoftmaxesAlongAnAxis) {
  checkOp({{12},
           12,
           [](auto &x, Mat &y) { SoftmaxAxis<false, 2, 3, 2>::forward(in<12>(x[0]), out<12>(y)); },
           [](auto &, const Mat &y, const Mat &dy, auto &dx) {
             SoftmaxAxis<false, 2, 3, 2>::backward(in<12>(y), in<12>(dy), out<12>(dx[0]));
           }});
  checkOp({{12},
           12,
           [](auto &x, Mat &y) { SoftmaxAxis<true, 2, 3, 2>::forward(in<12>(x[0]), out<12>(y)); },
           [](auto &, const Mat &y, const Mat &dy, auto &dx) {
             SoftmaxAxis<true, 2, 3, 2>::backward(in<12>(y), in<12>(dy), out<12>(dx[0]));
           }});
  // Along the last axis with O = 1 and I = 1 it is the row's softmax.
  Mat x = Mat::Random(2, 4), a(2, 4), b(2, 4);
  SoftmaxAxis<false, 1, 4, 1>::forward(in<4>(x), out<4>(a));
  Softmax<4>::forward(in<4>(x), out<4>(b));
  EXPECT_TRUE(a.isApprox(b, 1e-6f));
}

TEST(Primitives, ShapesAlongAnAxis) {
  checkOp({{12},
           8,
           [](auto &x, Mat &y) { SliceAxis<2, 3, 2, 1, 3>::forward(in<12>(x[0]), out<8>(y)); },
           [](auto &, const Mat &, const Mat &dy, auto &dx) {
             SliceAxis<2, 3, 2, 1, 3>::backward(in<8>(dy), out<12>(dx[0]));
           }});
  checkOp({{6},
           6,
           [](auto &x, Mat &y) { MatrixTranspose<2, 3>::forward(in<6>(x[0]), out<6>(y)); },
           [](auto &, const Mat &, const Mat &dy, auto &dx) {
             MatrixTranspose<2, 3>::backward(in<6>(dy), out<6>(dx[0]));
           }});
  checkOp({{2, 3},
           6,
           [](auto &x, Mat &y) { Outer<2, 3>::forward(in<2>(x[0]), in<3>(x[1]), out<6>(y)); },
           [](auto &x, const Mat &, const Mat &dy, auto &dx) {
             Outer<2, 3>::backward(in<2>(x[0]), in<3>(x[1]), in<6>(dy), out<2>(dx[0]),
                                   out<3>(dx[1]));
           }});
  Mat m(1, 6), t(1, 6), cols(1, 2); // [[0, 1, 2], [3, 4, 5]]
  m << 0, 1, 2, 3, 4, 5;
  MatrixTranspose<2, 3>::forward(in<6>(m), out<6>(t));
  EXPECT_EQ(t, (Mat(1, 6) << 0, 3, 1, 4, 2, 5).finished());
  SliceAxis<2, 3, 1, 2, 3>::forward(in<6>(m), out<2>(cols)); // m[:, 2]
  EXPECT_EQ(cols, (Mat(1, 2) << 2, 5).finished());
  // concat([[0, 1], [2, 3]], [[9], [8]], axis: 1) = [[0, 1, 9], [2, 3, 8]]
  Mat a(1, 4), b(1, 2), y(1, 6);
  a << 0, 1, 2, 3;
  b << 9, 8;
  ConcatAxisPart<2, 2, 0, 3, 1>::forward(in<4>(a), out<6>(y));
  ConcatAxisPart<2, 1, 2, 3, 1>::forward(in<2>(b), out<6>(y));
  EXPECT_EQ(y, (Mat(1, 6) << 0, 1, 9, 2, 3, 8).finished());
}

// ---- the variadic segment kernel

/// Runs SegmentKernel<K, 2> over segments of `counts` members (rows of x).
template <ReduceKind K> Mat segmentForward(const Mat &x, const std::vector<int32_t> &counts) {
  SegmentKernel<K, 2> kernel("segment");
  Mat y(Eigen::Index(counts.size()), 2);
  const float *args[] = {x.data()};
  float *outs[] = {y.data()};
  kernel.forward(forwardCall(int(counts.size()), args, outs, {}, nullptr, counts.data()));
  return y;
}

template <ReduceKind K> void checkSegment() {
  std::vector<int32_t> counts = {2, 0, 3, 1};
  Mat x = Mat::Random(6, 2), weights = Mat::Random(4, 2);
  Mat y = segmentForward<K>(x, counts);
  Mat dx = Mat::Zero(6, 2);
  SegmentKernel<K, 2> kernel("segment");
  const float *args[] = {x.data()}, *outGrads[] = {weights.data()};
  float *outs[] = {y.data()}, *argGrads[] = {dx.data()};
  BackwardCall call;
  call.rows = 4;
  call.args = args;
  call.outs = outs;
  call.argCounts = counts.data();
  call.outGrads = outGrads;
  call.argGrads = argGrads;
  kernel.backward(call);
  auto objective = [&] { return double(segmentForward<K>(x, counts).cwiseProduct(weights).sum()); };
  for (Eigen::Index k = 0; k < x.size(); ++k)
    EXPECT_NEAR(dx.data()[k], centralDifference(x.data()[k], 1e-3, objective), 2e-2)
        << "element " << k;
  EXPECT_EQ(y.row(1), Mat::Zero(1, 2)) << "an empty segment gives zeros";
}

TEST(Primitives, SegmentKernelReducesEachInstancesArguments) {
  checkSegment<ReduceKind::Sum>();
  checkSegment<ReduceKind::Mean>();
  checkSegment<ReduceKind::Max>();
  Mat x(3, 2);
  x << 1, 2, 3, -4, 5, 0;
  EXPECT_EQ(segmentForward<ReduceKind::Sum>(x, {2, 1}), (Mat(2, 2) << 4, -2, 5, 0).finished());
  EXPECT_EQ(segmentForward<ReduceKind::Mean>(x, {2, 1}), (Mat(2, 2) << 2, -1, 5, 0).finished());
  EXPECT_EQ(segmentForward<ReduceKind::Max>(x, {2, 1}), (Mat(2, 2) << 3, 2, 5, 0).finished());
}

} // namespace
} // namespace foldc::rt::ops
