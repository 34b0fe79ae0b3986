// The batch plan verifier: plans no valid program produces are internal
// compiler errors naming the op (or step) and its kernel, located at the
// op's source; a well-formed plan passes.
#include "passes/batching/PlanVerifier.h"

#include <gtest/gtest.h>

#include <sstream>

namespace foldc {
namespace {

class PlanVerifierTest : public ::testing::Test {
protected:
  PlanVerifierTest() {
    file_ = sources_.addFile("m.fold", "model m(x: S) {\n  output tanh(x.a)[0:3];\n}\n");
  }

  SourceRange at(uint32_t line, uint32_t column) {
    return SourceRange(SourceLocation{file_, line, column}, SourceLocation{file_, line, column});
  }

  /// A kernel `m.0` reading one f32[4] argument, with op %0 = tanh of it.
  BatchPlan plan() {
    BatchPlan p;
    KernelPlan k;
    k.name = "m.0";
    k.range = at(2, 10);
    k.args = {types::f32({4})};
    k.argSources = {"%a0"};
    StepValue arg;
    arg.kind = StepValue::Kind::Handle;
    k.argValues = {arg};
    k.helper = true; // instantiated by no step: only the kernel is checked
    PlanOp tanh;
    tanh.kind = OpKind::Tanh;
    tanh.operands = {{PlanOperand::Kind::Argument, 0, 0}};
    tanh.type = types::f32({4});
    tanh.range = at(2, 10);
    k.ops.push_back(tanh);
    k.results.push_back({0, ResultRole::Value, -1});
    p.kernels.push_back(k);
    return p;
  }

  std::string verify(const BatchPlan &p, bool &ok) {
    std::ostringstream out;
    DiagnosticEngine diag(sources_, out);
    ok = verifyPlan(p, diag);
    return out.str();
  }

  SourceManager sources_;
  uint32_t file_ = 0;
};

TEST_F(PlanVerifierTest, AcceptsAWellFormedKernel) {
  bool ok = false;
  EXPECT_EQ(verify(plan(), ok), "");
  EXPECT_TRUE(ok);
}

TEST_F(PlanVerifierTest, SliceOutsideItsOperandIsAnInternalErrorAtTheOp) {
  BatchPlan p = plan();
  PlanOp slice;
  slice.kind = OpKind::Slice;
  slice.operands = {{PlanOperand::Kind::Op, 0, 0}};
  slice.attrs.lo = 2;
  slice.attrs.hi = 6;
  slice.type = types::f32({4});
  slice.range = at(2, 19);
  p.kernels[0].ops.push_back(slice);
  bool ok = true;
  std::string out = verify(p, ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("m.fold:2:19: error: internal compiler error: op %1 (slice) of kernel m.0 "
                     "takes [2, 6) of an axis of 4"),
            std::string::npos)
      << out;
}

TEST_F(PlanVerifierTest, OperandsMustComeFromEarlierOps) {
  BatchPlan p = plan();
  p.kernels[0].ops[0].operands = {{PlanOperand::Kind::Op, 0, 0}}; // reads itself
  bool ok = true;
  std::string out = verify(p, ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("op %0 (tanh) of kernel m.0 reads an operand that does not exist (or a "
                     "later op)"),
            std::string::npos)
      << out;
}

TEST_F(PlanVerifierTest, ParamsMustBeDeclaredAndListedByTheKernel) {
  BatchPlan p = plan();
  PlanOp linear;
  linear.kind = OpKind::Linear;
  linear.operands = {{PlanOperand::Kind::Op, 0, 0}};
  linear.attrs.param = 0;
  linear.type = types::f32({2});
  linear.range = at(2, 10);
  p.kernels[0].ops.push_back(linear);
  bool ok = true;
  EXPECT_NE(
      verify(p, ok).find("op %1 (linear) of kernel m.0 reads a parameter that is not declared"),
      std::string::npos);
  p.params.push_back({"W", {4, 2}, InitKind::Glorot, 0, 0, false});
  EXPECT_NE(verify(p, ok).find("reads a parameter its kernel does not list"), std::string::npos);
  p.kernels[0].params.insert(0);
  EXPECT_EQ(verify(p, ok), "");
  p.params[0].shape = {3, 2};
  EXPECT_NE(verify(p, ok).find("multiplies a width 4 by a parameter of another shape"),
            std::string::npos);
}

TEST_F(PlanVerifierTest, StepsMayReadOnlyResultsTheirKernelGivesOut) {
  BatchPlan p = plan();
  FunctionPlan f;
  f.name = "m";
  f.isModel = true;
  UnfoldStep ret;
  ret.kind = UnfoldStep::Kind::Return;
  ret.text = "return m.0%0";
  ret.range = at(2, 3);
  StepValue v;
  v.kind = StepValue::Kind::KernelResult;
  v.kernel = 0;
  v.op = 0;
  p.kernels[0].results.clear();
  ret.values = {v};
  f.steps.push_back(ret);
  p.functions.push_back(f);
  bool ok = true;
  std::string out = verify(p, ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("m.fold:2:3: error: internal compiler error: step 'return m.0%0' of m reads "
                     "op %0 that its kernel does not give out"),
            std::string::npos)
      << out;
}

} // namespace
} // namespace foldc
