// Checks a batch plan before any emitter reads it (see PlanVerifier.h).
#include "passes/batching/PlanVerifier.h"

#include <functional>
#include <set>
#include <sstream>

namespace foldc {

namespace {

bool isIntegral(const TypeRef &t) {
  return t->kind == TypeKind::Int || t->kind == TypeKind::Bool ||
         (t->kind == TypeKind::Tensor && t->element == ElementType::I32);
}

class Verifier {
public:
  Verifier(const BatchPlan &plan, DiagnosticEngine &diag) : plan_(plan), diag_(diag) {}

  bool run() {
    for (const KernelPlan &k : plan_.kernels)
      kernel(k);
    for (const FunctionPlan &f : plan_.functions)
      function(f);
    if (plan_.model >= 0 && (!plan_.exampleType || !plan_.outputType))
      fail(plan_.functions[size_t(plan_.model)].range, "the model has no example or output type");
    return ok_;
  }

private:
  // ------------------------------------------------------------ kernels
  void kernel(const KernelPlan &k) {
    kernel_ = &k;
    if (k.argValues.size() != k.args.size() && !k.helper)
      failKernel("has " + std::to_string(k.args.size()) + " arguments but " +
                 std::to_string(k.argValues.size()) + " argument values");
    for (const TypeRef &a : k.args)
      if (!a->isTensor())
        failKernel("has an argument of type " + toString(a));
    for (const HostInput &h : k.hostInputs)
      if (!h.expr && !k.helper)
        failKernel("reads host value '" + h.source + "' that unfolding cannot compute");
      else if (h.expr)
        hostExpr(*h.expr, nullptr, k.range);
    if (k.sameAs >= k.id)
      failKernel("is merged into a later kernel");
    for (size_t i = 0; i < k.ops.size(); ++i)
      op(k.ops[i], int(i));
    for (const KernelResult &r : k.results) {
      if (r.op < 0 || size_t(r.op) >= k.ops.size())
        failKernel("gives out op %" + std::to_string(r.op) + ", which it does not have");
      if (r.role == ResultRole::Metric &&
          (r.metric < 0 || size_t(r.metric) >= plan_.metrics.size()))
        failKernel("gives out a metric that is not declared");
    }
  }

  /// The width of an operand (1 for host numbers and constants), or -1.
  int64_t width(const PlanOperand &o, int at) {
    const KernelPlan &k = *kernel_;
    switch (o.kind) {
    case PlanOperand::Kind::Op:
      if (o.index < 0 || o.index >= at)
        return -1; // def-use: only earlier ops
      return widthOf(k.ops[size_t(o.index)].type);
    case PlanOperand::Kind::Argument:
      return o.index >= 0 && size_t(o.index) < k.args.size() ? widthOf(k.args[size_t(o.index)])
                                                             : -1;
    case PlanOperand::Kind::Host:
      return o.index >= 0 && size_t(o.index) < k.hostInputs.size()
                 ? k.hostInputs[size_t(o.index)].width
                 : -1;
    case PlanOperand::Kind::Constant:
      return 1;
    }
    return -1;
  }

  TypeRef typeOf(const PlanOperand &o) const {
    const KernelPlan &k = *kernel_;
    switch (o.kind) {
    case PlanOperand::Kind::Op:
      return k.ops[size_t(o.index)].type;
    case PlanOperand::Kind::Argument:
      return k.args[size_t(o.index)];
    case PlanOperand::Kind::Host:
      return k.hostInputs[size_t(o.index)].type;
    case PlanOperand::Kind::Constant:
      return types::f32();
    }
    return types::errorType();
  }

  /// Integer indices: a host int, a constant, or an i32 scalar tensor.
  bool isIndex(const PlanOperand &o) const {
    if (o.kind == PlanOperand::Kind::Constant)
      return o.constant == double(int64_t(o.constant));
    TypeRef t = typeOf(o);
    return isIntegral(t) && (t->kind != TypeKind::Tensor || t->shape.empty());
  }

  void op(const PlanOp &op, int at) {
    op_ = &op;
    opIndex_ = at;
    const OpInfo &info = opInfo(op.kind);
    if (!op.type || !op.type->isTensor())
      return failOp("gives a " + (op.type ? toString(op.type) : std::string("missing type")) +
                    ", not a tensor");
    std::vector<int64_t> w;
    for (const PlanOperand &o : op.operands) {
      w.push_back(width(o, at));
      if (w.back() < 0)
        return failOp("reads an operand that does not exist (or a later op)");
    }
    const std::vector<int64_t> *paramShape = nullptr;
    if (info.attr == OpAttr::Param) {
      if (op.attrs.param < 0 || size_t(op.attrs.param) >= plan_.params.size())
        return failOp("reads a parameter that is not declared");
      if (!kernel_->params.count(op.attrs.param))
        return failOp("reads a parameter its kernel does not list");
      paramShape = &plan_.params[size_t(op.attrs.param)].shape;
    }
    int64_t out = widthOf(op.type);
    auto arity = [&](size_t n) {
      if (op.operands.size() == n)
        return true;
      failOp("has " + std::to_string(op.operands.size()) + " operands, expected " +
             std::to_string(n));
      return false;
    };
    auto expect = [&](bool holds, const std::string &what) {
      if (!holds)
        failOp(what);
    };
    // Along which axis: [outer, n, inner] of the first operand.
    AxisSplit along;
    if ((info.attr == OpAttr::Axis || info.attr == OpAttr::Range) && !op.operands.empty()) {
      TypeRef first = typeOf(op.operands[0]);
      along = first && first->isTensor() ? axisSplit(first, op.attrs.axis) : AxisSplit{1, 0, 1};
      if (along.n == 0 || op.attrs.axis < -1)
        return failOp("works along axis " + std::to_string(op.attrs.axis) + ", which " +
                      (first ? toString(first) : std::string("its operand")) + " does not have");
    }
    switch (info.family) {
    case OpFamily::Unary:
    case OpFamily::Softmax:
    case OpFamily::LogSoftmax:
    case OpFamily::Reshape:
      if (arity(1))
        expect(w[0] == out,
               "changes the width " + std::to_string(w[0]) + " to " + std::to_string(out));
      break;
    case OpFamily::Binary:
    case OpFamily::Compare:
      if (arity(2))
        expect((w[0] == w[1] || w[0] == 1 || w[1] == 1) && out == std::max(w[0], w[1]),
               "combines widths " + std::to_string(w[0]) + " and " + std::to_string(w[1]) +
                   " into " + std::to_string(out));
      break;
    case OpFamily::Reduce:
    case OpFamily::Argmax:
      if (arity(1))
        expect(out * along.n == w[0], "reduces a width " + std::to_string(w[0]) + " along " +
                                          std::to_string(along.n) + " to " + std::to_string(out));
      break;
    case OpFamily::Transpose:
      if (arity(1)) {
        TypeRef x = typeOf(op.operands[0]);
        expect(x->shape.size() == 2 && op.type->shape.size() == 2 &&
                   x->shape[0] == op.type->shape[1] && x->shape[1] == op.type->shape[0],
               "transposes " + toString(x) + " into " + toString(op.type));
      }
      break;
    case OpFamily::Outer:
      if (arity(2)) {
        TypeRef a = typeOf(op.operands[0]), b = typeOf(op.operands[1]);
        expect(a->shape.size() == 1 && b->shape.size() == 1 && out == w[0] * w[1],
               "multiplies " + toString(a) + " and " + toString(b) + " into " + toString(op.type));
      }
      break;
    case OpFamily::TopK:
    case OpFamily::TopKIndices:
      if (arity(1))
        expect(op.attrs.lo == 0 && op.attrs.hi == out && out <= w[0],
               "picks " + std::to_string(out) + " of a width " + std::to_string(w[0]));
      break;
    case OpFamily::Gather:
      if (arity(1)) {
        expect(isIndex(op.operands[0]), "takes indices that are not integers");
        expect(paramShape->size() == 2 && (*paramShape)[1] == out, "gives rows of the wrong width");
      }
      break;
    case OpFamily::OneHot:
      if (arity(1))
        expect(isIndex(op.operands[0]), "takes indices that are not integers");
      break;
    case OpFamily::Linear:
      if (arity(1)) {
        bool columns = op.attrs.hi > 0; // x @ W[:, lo:hi]
        int64_t width = paramShape->size() == 2 ? (*paramShape)[1] : -1;
        expect(paramShape->size() == 2 && (*paramShape)[0] == w[0] &&
                   (columns ? op.attrs.lo >= 0 && op.attrs.hi <= width &&
                                  op.attrs.hi - op.attrs.lo == out
                            : width == out),
               "multiplies a width " + std::to_string(w[0]) + " by a parameter of another shape");
      }
      break;
    case OpFamily::BiasAdd:
      if (arity(1))
        expect(w[0] == out && widthOf(types::f32(*paramShape)) == out,
               "adds a parameter of another width");
      break;
    case OpFamily::Read:
      if (arity(0))
        expect(widthOf(types::f32(*paramShape)) == out, "reads a parameter of another width");
      break;
    case OpFamily::MatMul:
      if (arity(2)) {
        TypeRef a = typeOf(op.operands[0]), b = typeOf(op.operands[1]);
        bool matrixVector = a->isTensor() && a->shape.size() == 2 && b->isTensor() &&
                            b->shape.size() == 1 && op.type->shape == std::vector{a->shape[0]};
        expect(matrixVector ||
                   (a->isTensor() && b->isTensor() && !a->shape.empty() && b->shape.size() == 2 &&
                    a->shape.back() == b->shape[0] && op.type->shape.back() == b->shape[1]),
               "multiplies shapes that do not chain");
      }
      break;
    case OpFamily::Slice:
      if (arity(1))
        expect(op.attrs.lo >= 0 && op.attrs.lo < op.attrs.hi && op.attrs.hi <= along.n &&
                   along.outer * (op.attrs.hi - op.attrs.lo) * along.inner == out,
               "takes [" + std::to_string(op.attrs.lo) + ", " + std::to_string(op.attrs.hi) +
                   ") of an axis of " + std::to_string(along.n));
      break;
    case OpFamily::Concat: {
      int64_t total = 0;
      for (int64_t x : w)
        total += x;
      expect(!w.empty() && total == out, "joins widths that do not add up to its own");
      break;
    }
    case OpFamily::Dot:
    case OpFamily::Mse:
    case OpFamily::SigmoidXent:
      if (arity(2))
        expect(w[0] == w[1] && out == 1, "pairs widths " + std::to_string(w[0]) + " and " +
                                             std::to_string(w[1]) + " into a non-scalar");
      break;
    case OpFamily::Xent:
      if (arity(2)) {
        expect(op.operands[0].isTensor(), "takes logits that are not a tensor");
        expect(isIndex(op.operands[1]), "takes a label that is not an integer");
        expect(out == 1, "gives more than a scalar");
      }
      break;
    case OpFamily::Dropout:
      if (arity(1))
        expect(w[0] == out && op.attrs.rate >= 0 && op.attrs.rate < 1,
               "has a rate outside [0, 1) or changes the width");
      break;
    case OpFamily::Fill:
      arity(0);
      break;
    case OpFamily::Segment:
      if (arity(1))
        expect(w[0] == out && op.operands[0].kind == PlanOperand::Kind::Argument,
               "reduces arguments of another width, or not its arguments");
      break;
    case OpFamily::FromHost:
      if (arity(1)) {
        expect(!op.operands[0].isTensor(), "reads a tensor, not host numbers");
        expect(w[0] == out,
               "reads " + std::to_string(w[0]) + " numbers into a width " + std::to_string(out));
      }
      break;
    }
  }

  // ------------------------------------------------------------ unfolding
  void function(const FunctionPlan &f) {
    function_ = &f;
    std::set<int> defined(f.params.begin(), f.params.end());
    steps(f.steps, defined);
  }

  void steps(const std::vector<UnfoldStep> &list, std::set<int> defined) {
    for (const UnfoldStep &s : list)
      step(s, defined);
  }

  void step(const UnfoldStep &s, std::set<int> &defined) {
    step_ = &s;
    for (const StepValue &v : s.values)
      value(v, defined, s.range);
    switch (s.kind) {
    case UnfoldStep::Kind::Instance:
      if (s.kernel < 0 || size_t(s.kernel) >= plan_.kernels.size() ||
          plan_.kernels[size_t(s.kernel)].helper)
        failStep(s, "instantiates a kernel that is not in the plan");
      else
        for (const StepValue &v : plan_.kernels[size_t(s.kernel)].argValues)
          value(v, defined, s.range);
      break;
    case UnfoldStep::Kind::Call:
      if (s.function < 0 || size_t(s.function) >= plan_.functions.size() ||
          plan_.functions[size_t(s.function)].params.size() != s.values.size())
        failStep(s, "calls a function with the wrong number of arguments");
      break;
    case UnfoldStep::Kind::Combinator: {
      if (s.loopLocals.size() != loopLocalCount(s.combinator) || s.children.empty() ||
          s.children.back().kind != UnfoldStep::Kind::Yield)
        failStep(s, "is a loop without its element locals or a yielded value");
      std::set<int> inner = defined;
      inner.insert(s.loopLocals.begin(), s.loopLocals.end());
      steps(s.children, inner);
      break;
    }
    case UnfoldStep::Kind::Sequence: {
      if (s.helpers.size() != helperKernelCount(s.sequence))
        failStep(s, "has the wrong helper kernels");
      for (int h : s.helpers)
        if (h < 0 || size_t(h) >= plan_.kernels.size() || !plan_.kernels[size_t(h)].helper)
          failStep(s, "names a helper kernel that is not one");
      break;
    }
    case UnfoldStep::Kind::Segment: {
      const KernelPlan *k = s.kernel >= 0 && size_t(s.kernel) < plan_.kernels.size()
                                ? &plan_.kernels[size_t(s.kernel)]
                                : nullptr;
      if (!k || !k->helper || k->ops.size() != 1 || k->args.size() != 1 ||
          opInfo(k->ops[0].kind).family != OpFamily::Segment)
        failStep(s, "names a kernel that is not one segment op");
      if (s.values.size() != 3)
        failStep(s, "takes " + std::to_string(s.values.size()) + " values, not (values, ids, n)");
      break;
    }
    case UnfoldStep::Kind::Match:
    case UnfoldStep::Kind::If:
      for (const UnfoldStep &arm : s.children) {
        if (arm.kind != UnfoldStep::Kind::Arm) {
          failStep(s, "has a child that is not an arm");
          continue;
        }
        std::set<int> inner = defined;
        if (arm.binder >= 0)
          inner.insert(arm.binder);
        if (arm.arm == UnfoldStep::ArmKind::Variant && arm.variant < 0)
          failStep(arm, "is an arm of no variant");
        steps(arm.children, inner);
      }
      break;
    case UnfoldStep::Kind::Read:
      if (s.values.size() != 1 || !s.values[0].type || !s.values[0].type->isScalarTensor() ||
          !s.type || !s.type->isHostNumber())
        failStep(s, "reads something other than a computed scalar into a host number");
      break;
    case UnfoldStep::Kind::Role:
      if (s.role == ResultRole::Metric &&
          (s.metric < 0 || size_t(s.metric) >= plan_.metrics.size()))
        failStep(s, "gives out a metric that is not declared");
      break;
    case UnfoldStep::Kind::Yield:
    case UnfoldStep::Kind::Structural:
    case UnfoldStep::Kind::Arm:
    case UnfoldStep::Kind::Assign:
    case UnfoldStep::Kind::Return:
      break;
    }
    if (s.target >= 0) {
      if (size_t(s.target) >= function_->locals.size())
        failStep(s, "defines a local that does not exist");
      defined.insert(s.target);
    }
  }

  void handle(const Handle &h, const std::set<int> &defined, SourceRange at) {
    if (h.local < 0 || size_t(h.local) >= function_->locals.size() || !defined.count(h.local))
      return fail(at, "internal compiler error: " + where() + "reads local %" +
                          std::to_string(h.local) + " where it is not defined");
    TypeRef t = function_->locals[size_t(h.local)].type;
    for (int i : h.path) {
      if (t->kind != TypeKind::Tuple || i < 0 || size_t(i) >= t->elements.size())
        return fail(at, "internal compiler error: " + where() + "reads element " +
                            std::to_string(i) + " of a " + toString(t));
      t = t->elements[size_t(i)];
    }
  }

  void value(const StepValue &v, const std::set<int> &defined, SourceRange at) {
    switch (v.kind) {
    case StepValue::Kind::Handle:
      return handle(v.handle, defined, at);
    case StepValue::Kind::KernelResult:
      if (v.kernel < 0 || size_t(v.kernel) >= plan_.kernels.size() ||
          plan_.kernels[size_t(v.kernel)].valueResult(v.op) < 0)
        fail(at, "internal compiler error: " + where() + "reads op %" + std::to_string(v.op) +
                     " that its kernel does not give out");
      return;
    case StepValue::Kind::Host:
      if (!v.host)
        return fail(at, "internal compiler error: " + where() + "reads a missing host value");
      return hostExpr(*v.host, &defined, at);
    case StepValue::Kind::Tuple:
      for (const StepValue &e : v.elements)
        value(e, defined, at);
      return;
    }
  }

  /// `defined`: the locals in scope, or null inside a kernel's host inputs
  /// (checked where the kernel is instantiated).
  void hostExpr(const HostExpr &e, const std::set<int> *defined, SourceRange at) {
    for (const HostExprRef &o : e.operands)
      if (!o)
        return fail(at, "internal compiler error: " + where() +
                            "computes a host value from something unfolding cannot hold");
      else
        hostExpr(*o, defined, at);
    if (e.kind == HostExpr::Kind::Local && defined)
      handle(e.handle, *defined, at);
  }

  // ------------------------------------------------------------ reporting
  std::string where() const {
    if (step_)
      return "step '" + step_->text + "' of " + function_->name + " ";
    return "";
  }

  void fail(SourceRange at, const std::string &message) {
    ok_ = false;
    diag_.error(at) << message;
  }

  void failKernel(const std::string &what) {
    fail(kernel_->range, "internal compiler error: kernel " + kernel_->name + " " + what);
  }

  void failOp(const std::string &what) {
    fail(op_->range, "internal compiler error: op %" + std::to_string(opIndex_) + " (" +
                         std::string(opInfo(op_->kind).name) + ") of kernel " + kernel_->name +
                         " " + what);
  }

  void failStep(const UnfoldStep &s, const std::string &what) {
    fail(s.range,
         "internal compiler error: step '" + s.text + "' of " + function_->name + " " + what);
  }

  const BatchPlan &plan_;
  DiagnosticEngine &diag_;
  bool ok_ = true;
  const KernelPlan *kernel_ = nullptr;
  const PlanOp *op_ = nullptr;
  int opIndex_ = 0;
  const FunctionPlan *function_ = nullptr;
  const UnfoldStep *step_ = nullptr;
};

} // namespace

bool verifyPlan(const BatchPlan &plan, DiagnosticEngine &diag) {
  return Verifier(plan, diag).run();
}

} // namespace foldc
