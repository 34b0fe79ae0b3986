// Kernel classes from kernel plans, over runtime/engine/Primitives.h.
#include "codegen/KernelCodegen.h"

#include "codegen/Naming.h"
#include "passes/builtins/Builtins.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace foldc {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// A value a backward formula does not read (Primitives.h).
const std::string kNotKept = "NotKept{}";

/// A constant as a C++ float expression, exact to float precision.
std::string floatLiteral(double v) {
  std::ostringstream out;
  out.precision(9);
  out << "float(" << v << ")";
  return out.str();
}

/// The primitive of runtime/engine/Primitives.h computing ops of `family` (Unary,
/// Binary, Compare and Reduce take their kind as a template argument).
std::string primitive(const OpInfo &info) {
  switch (info.family) {
  case OpFamily::Unary:
    return "Unary<UnaryKind::" + std::string(info.kindName);
  case OpFamily::Binary:
    return "Binary<BinaryKind::" + std::string(info.kindName);
  case OpFamily::Compare:
    return "Compare<CompareKind::" + std::string(info.kindName);
  case OpFamily::Reduce:
    return "Reduce<ReduceKind::" + std::string(info.kindName);
  case OpFamily::Transpose: // Gemm.h's Transpose names an argument of gemm
    return "MatrixTranspose<";
  case OpFamily::Gather:
  case OpFamily::Linear:
  case OpFamily::BiasAdd:
  case OpFamily::Read:
  case OpFamily::MatMul:
  case OpFamily::Slice:
  case OpFamily::Concat:
  case OpFamily::Outer:
  case OpFamily::Reshape:
  case OpFamily::Dot:
  case OpFamily::Softmax:
  case OpFamily::LogSoftmax:
  case OpFamily::Argmax:
  case OpFamily::TopK:
  case OpFamily::TopKIndices:
  case OpFamily::OneHot:
  case OpFamily::Xent:
  case OpFamily::Mse:
  case OpFamily::SigmoidXent:
  case OpFamily::Dropout:
  case OpFamily::Segment:
  case OpFamily::Fill:
  case OpFamily::FromHost:
    return std::string(info.kindName) + "<";
  }
  return std::string(info.kindName) + "<";
}

class KernelEmitter {
public:
  KernelEmitter(const BatchPlan &plan, const KernelPlan &k, Emitter &s)
      : plan_(plan), k_(k), s_(s) {}

  void emit() {
    if (opInfo(k_.ops[0].kind).family == OpFamily::Segment)
      return emitSegment();
    prepare();
    kept_ = readByBackward();
    std::string cls = CppNames::kernelClass(k_);
    {
      auto c = s_.scope("class " + cls + " final : public foldc::rt::Kernel {", "};");
      s_.line("public:");
      constructor(cls);
      forward();
      backward();
      s_.line("private:");
      compute();
      for (int p : k_.params)
        s_.line("int " + CppNames::paramMember(p) + ";");
    }
    s_.line();
  }

private:
  /// Host columns, slice views and biases added in place; every value kept
  /// until readByBackward says which the backward reads.
  void prepare() {
    layOutHost();
    findSliceViews();
    findBiasesInPlace();
    kept_.assign(k_.ops.size(), true);
    reads_.assign(k_.ops.size(), false);
  }

  /// Per op, whether the backward pass reads its value: found by emitting
  /// the backward once into a discarded emitter and noting what it reads.
  /// Training keeps only those values (Values); the others are scratch,
  /// dropped after the forward call (an LSTM cell keeps its gate
  /// activations, not the pre-activations or the sums between).
  std::vector<bool> readByBackward() const {
    Emitter discarded;
    KernelEmitter dryRun(plan_, k_, discarded);
    dryRun.prepare();
    dryRun.backward();
    return dryRun.reads_;
  }

  /// A segment kernel is the runtime's variadic SegmentKernel at this width.
  void emitSegment() {
    std::string cls = CppNames::kernelClass(k_);
    OpKind op = k_.ops[0].kind;
    std::string kind = op == OpKind::SegmentMean  ? "Mean"
                       : op == OpKind::SegmentMax ? "Max"
                                                  : "Sum";
    std::string base = "foldc::rt::SegmentKernel<foldc::rt::ops::ReduceKind::" + kind + ", " +
                       str(widthOf(k_.ops[0].type)) + ">";
    auto c = s_.scope("class " + cls + " final : public " + base + " {", "};");
    s_.line("public:");
    s_.line("/// " + k_.name + ": source line " + str(k_.range.begin.line) + ".");
    s_.line("explicit " + cls + "(const foldc::rt::ParamStore & /*params*/) : " + base + "(\"" +
            k_.name + "\") {}");
  }

  void layOutHost() {
    slots_ = hostLayout(k_);
    ints_ = floats_ = 0;
    for (const HostSlot &slot : slots_)
      (slot.isInt ? ints_ : floats_) += slot.count;
  }

  bool usesParams() const { return !k_.params.empty(); }

  /// A slice of a tensor read only by element-wise ops (Unary, Binary) is
  /// not copied: they read the source's columns in place, and their
  /// gradients add into the source gradient's columns: no copy of an
  /// LSTM's gates out of its GEMM output, no zero-filled gradient for each
  /// (bench/README.md, "Slices read in place"). Results stay materialised.
  void findSliceViews() {
    view_.assign(k_.ops.size(), false);
    for (size_t i = 0; i < k_.ops.size(); ++i)
      view_[i] = opInfo(k_.ops[i].kind).family == OpFamily::Slice &&
                 k_.ops[i].operands[0].isTensor() && along(k_.ops[i]).isRow();
    for (const KernelResult &r : k_.results)
      view_[size_t(r.op)] = false;
    for (const PlanOp &op : k_.ops) {
      OpFamily f = opInfo(op.kind).family;
      if (f == OpFamily::Unary || f == OpFamily::Binary)
        continue;
      for (const PlanOperand &o : op.operands)
        if (o.kind == PlanOperand::Kind::Op)
          view_[size_t(o.index)] = false;
    }
  }

  /// A bias added to a value nothing else reads (a linear layer's GEMM
  /// output) is added in place, and that value's gradient is the sum's:
  /// no second batch matrix, no copy of the gradient.
  void findBiasesInPlace() {
    std::vector<int> readers(k_.ops.size(), 0);
    for (const PlanOp &op : k_.ops)
      for (const PlanOperand &o : op.operands)
        if (o.kind == PlanOperand::Kind::Op)
          ++readers[size_t(o.index)];
    for (const KernelResult &r : k_.results)
      ++readers[size_t(r.op)];
    biasInPlace_.assign(k_.ops.size(), -1);
    for (size_t i = 0; i < k_.ops.size(); ++i) {
      const PlanOperand &x = k_.ops[i].operands.empty() ? PlanOperand{} : k_.ops[i].operands[0];
      if (opInfo(k_.ops[i].kind).family == OpFamily::BiasAdd && x.kind == PlanOperand::Kind::Op &&
          readers[size_t(x.index)] == 1 && !view_[size_t(x.index)])
        biasInPlace_[size_t(x.index)] = int(i);
    }
  }

  /// Whether op `i` is a BiasAdd adding to its operand in place.
  bool addsInPlace(size_t i) const {
    const PlanOp &op = k_.ops[i];
    return opInfo(op.kind).family == OpFamily::BiasAdd &&
           biasInPlace_[size_t(op.operands[0].index)] == int(i);
  }

  bool isView(const PlanOperand &o) const {
    return o.kind == PlanOperand::Kind::Op && view_[size_t(o.index)];
  }

  /// `source.middleCols<width>(lo)`: the columns a slice view reads, of the
  /// value (`gradient` false) or of the gradient.
  std::string columnsOf(int op, bool gradient) const {
    const PlanOp &slice = k_.ops[size_t(op)];
    const PlanOperand &source = slice.operands[0];
    std::string whole = gradient ? gradOf(source) : in(source);
    return whole + ".middleCols<" + str(widthOf(slice.type)) + ">(" + str(slice.attrs.lo) + ")";
  }

  void constructor(const std::string &cls) {
    std::string args = commaSeparated(k_.args, [](const TypeRef &a) { return str(widthOf(a)); });
    std::string outs = commaSeparated(k_.results, [&](const KernelResult &result) {
      return str(widthOf(k_.ops[size_t(result.op)].type));
    });
    std::string init = "    : Kernel({\"" + k_.name + "\", {" + args + "}, {" + outs + "}, " +
                       str(ints_) + ", " + str(floats_) + ", " + str(int64_t(k_.flops())) + "})";
    for (int p : k_.params)
      init += ",\n      " + CppNames::paramMember(p) + "(params.find(\"" +
              plan_.params[size_t(p)].key + "\"))";
    s_.line("/// " + k_.name + ": source line " + str(k_.range.begin.line) + ".");
    s_.line("explicit " + cls + "(const foldc::rt::ParamStore &" +
            (usesParams() ? "params" : "/*params*/") + ")");
    s_.line(init + " {}");
  }

  /// Registers: one batch matrix per op, and the instances' host values
  /// (`h` ints, `hf` as floats). In training the executor keeps `v` for the
  /// backward pass; otherwise backward recomputes it.
  void compute() {
    {
      auto st = s_.scope("struct Values : foldc::rt::SavedValues {", "};");
      declareValues(true);
      for (size_t h = 0; h < slots_.size(); ++h) {
        if (slots_[h].isInt)
          s_.line("std::vector<int32_t> h" + str(int64_t(h)) + ";");
        s_.line("foldc::rt::RowsMatrix<" + str(slots_[h].count) + "> hf" + str(int64_t(h)) + ";");
      }
    }
    {
      auto st = s_.scope("struct Scratch {", "};");
      declareValues(false);
    }
    // A kernel whose every op is a view and which has no result (a dead
    // slice: fuzz seed 60164) uses neither the rows nor the values.
    auto fn = s_.scope("void compute(const foldc::rt::ForwardCall &c, [[maybe_unused]] Values &v, "
                       "[[maybe_unused]] Scratch &t) const {");
    s_.line("using namespace foldc::rt::ops;");
    s_.line("[[maybe_unused]] const int rows = c.rows;");
    if (usesParams())
      s_.line("foldc::rt::ParamStore &params = *c.ctx->params;");
    hostColumns();
    for (size_t i = 0; i < k_.ops.size(); ++i) {
      if (view_[i])
        continue;
      if (addsInPlace(i))
        s_.line(valueName(int(i)) + " = std::move(" + valueName(k_.ops[i].operands[0].index) +
                ");");
      else
        s_.line(valueName(int(i)) + ".resize(rows, " + str(widthOf(k_.ops[i].type)) + ");");
      forwardOp(k_.ops[i], int(i));
    }
  }

  /// The batch matrices of the ops whose values the backward reads
  /// (`kept`), or of the others.
  void declareValues(bool kept) {
    for (size_t i = 0; i < k_.ops.size(); ++i)
      if (!view_[i] && kept_[i] == kept)
        s_.line("foldc::rt::RowsMatrix<" + str(widthOf(k_.ops[i].type)) + "> v" + str(int64_t(i)) +
                ";");
  }

  /// Where compute leaves op `i`'s value: `v.vI` if kept, else `t.vI`.
  std::string valueName(int i) const { return (kept_[size_t(i)] ? "v.v" : "t.v") + str(i); }

  /// Op `i`'s value as a read-only batch view, noted as read.
  std::string valueView(int i) const {
    reads_[size_t(i)] = true;
    return view("In", valueName(i) + ".data()", widthOf(k_.ops[size_t(i)].type));
  }

  void hostColumns() {
    for (size_t h = 0; h < slots_.size(); ++h) {
      const HostSlot &slot = slots_[h];
      std::string n = str(int64_t(h));
      s_.line("v.hf" + n + ".resize(rows, " + str(slot.count) + ");");
      if (slot.isInt) {
        s_.line("v.h" + n + " = hostColumn(c.hostInts, rows, " + str(ints_) + ", " +
                str(slot.slot) + ");");
        s_.line("for (int r = 0; r < rows; ++r) v.hf" + n + "(r, 0) = float(v.h" + n +
                "[size_t(r)]);");
      } else {
        s_.line("for (int r = 0; r < rows; ++r)");
        s_.line("  for (int k = 0; k < " + str(slot.count) + "; ++k) v.hf" + n +
                "(r, k) = c.hostFloats[size_t(r) * " + str(floats_) + " + " + str(slot.slot) +
                " + k];");
      }
    }
  }

  int64_t widthOfOperand(const PlanOperand &o) const {
    switch (o.kind) {
    case PlanOperand::Kind::Op:
      return widthOf(k_.ops[size_t(o.index)].type);
    case PlanOperand::Kind::Argument:
      return widthOf(k_.args[size_t(o.index)]);
    case PlanOperand::Kind::Host:
      return slots_[size_t(o.index)].count;
    case PlanOperand::Kind::Constant:
      return 1;
    }
    return 1;
  }

  /// The tensor type of an operand (host numbers and constants: their floats
  /// as a vector, or a scalar).
  TypeRef typeOfOperand(const PlanOperand &o) const {
    switch (o.kind) {
    case PlanOperand::Kind::Op:
      return k_.ops[size_t(o.index)].type;
    case PlanOperand::Kind::Argument:
      return k_.args[size_t(o.index)];
    case PlanOperand::Kind::Host:
    case PlanOperand::Kind::Constant:
      break;
    }
    int64_t w = widthOfOperand(o);
    return w == 1 ? types::f32() : types::f32({w});
  }

  /// `In<W>(data, rows, W)` or `Out<W>(...)`: a batch view of W floats a row.
  static std::string view(const char *kind, const std::string &data, int64_t width) {
    std::string w = str(width);
    return std::string(kind) + "<" + w + ">(" + data + ", rows, " + w + ")";
  }

  /// The operand as a read-only batch view.
  std::string in(const PlanOperand &o) const {
    if (isView(o))
      return columnsOf(o.index, false);
    int64_t w = widthOfOperand(o);
    switch (o.kind) {
    case PlanOperand::Kind::Op:
      return valueView(o.index);
    case PlanOperand::Kind::Argument:
      return view("In", "c.args[" + str(o.index) + "]", w);
    case PlanOperand::Kind::Host:
      return view("In", "v.hf" + str(o.index) + ".data()", w);
    case PlanOperand::Kind::Constant:
      return view("In",
                  "foldc::rt::RowsMatrix<1>::Constant(rows, 1, " + floatLiteral(o.constant) +
                      ").eval().data()",
                  1);
    }
    return "";
  }

  /// The operand as integer indices, one a row: host ints, a constant, or
  /// an i32 tensor.
  std::string indices(const PlanOperand &o) const {
    switch (o.kind) {
    case PlanOperand::Kind::Host:
      return "v.h" + str(o.index);
    case PlanOperand::Kind::Constant:
      return "std::vector<int32_t>(size_t(rows), int32_t(" + str(int64_t(o.constant)) + "))";
    case PlanOperand::Kind::Op:
    case PlanOperand::Kind::Argument:
      return "indices(" + in(o) + ")";
    }
    return "indices(" + in(o) + ")";
  }

  std::string outOf(int i) const {
    return view("Out", valueName(i) + ".data()", widthOf(k_.ops[size_t(i)].type));
  }

  std::string param(const PlanOp &op) const {
    return "params.at(" + CppNames::paramMember(op.attrs.param) + ")";
  }

  /// `Primitive<KIND, w0, w1, ...>::`: the primitive of `op` at these widths.
  std::string call(const PlanOp &op, const std::vector<int64_t> &widths) const {
    std::string p = primitive(opInfo(op.kind));
    bool kind = p.back() != '<';
    return p + (kind ? ", " : "") + commaSeparated(widths, str) + ">::";
  }

  /// The first operand of `op` along the op's axis.
  AxisSplit along(const PlanOp &op) const {
    return axisSplit(typeOfOperand(op.operands[0]), op.attrs.axis);
  }

  /// `Primitive<Kind, O, N, I, extra...>::` of AxisPrimitives.h for an op
  /// along an axis that is not a plain row.
  std::string axisCall(const std::string &primitive, const PlanOp &op,
                       std::vector<int64_t> extra = {}) const {
    AxisSplit a = along(op);
    std::vector<int64_t> sizes = {a.outer, a.n, a.inner};
    sizes.insert(sizes.end(), extra.begin(), extra.end());
    return primitive + commaSeparated(sizes, str) + ">::";
  }

  /// `Primitive<...>::` of an op that works along an axis (softmaxes,
  /// reductions, argmax, slices): Primitives.h's row form with `rowSizes`
  /// when the axis is a plain row, else the AxisPrimitives.h form.
  std::string callAlong(const PlanOp &op, const std::vector<int64_t> &rowSizes) const {
    if (along(op).isRow())
      return call(op, rowSizes);
    switch (opInfo(op.kind).family) {
    case OpFamily::Softmax:
      return axisCall("SoftmaxAxis<false, ", op);
    case OpFamily::LogSoftmax:
      return axisCall("SoftmaxAxis<true, ", op);
    case OpFamily::Reduce:
      return axisCall("ReduceAxis<ReduceKind::" + std::string(opInfo(op.kind).kindName) + ", ", op);
    case OpFamily::Argmax:
      return axisCall("ArgmaxAxis<", op);
    case OpFamily::Slice:
      return axisCall("SliceAxis<", op, {op.attrs.lo, op.attrs.hi});
    case OpFamily::Unary:
    case OpFamily::Binary:
    case OpFamily::Compare:
    case OpFamily::Gather:
    case OpFamily::Linear:
    case OpFamily::BiasAdd:
    case OpFamily::Read:
    case OpFamily::MatMul:
    case OpFamily::Concat:
    case OpFamily::Transpose:
    case OpFamily::Outer:
    case OpFamily::Reshape:
    case OpFamily::Dot:
    case OpFamily::TopK:
    case OpFamily::TopKIndices:
    case OpFamily::OneHot:
    case OpFamily::Xent:
    case OpFamily::Mse:
    case OpFamily::SigmoidXent:
    case OpFamily::Dropout:
    case OpFamily::Segment:
    case OpFamily::Fill:
    case OpFamily::FromHost:
      return call(op, rowSizes);
    }
    return call(op, rowSizes);
  }

  /// Concatenation along an axis with dimensions before it: each operand's
  /// blocks placed at its offset, in either direction.
  void concatAlongAxis(const PlanOp &op, int i, bool backward) {
    AxisSplit whole = axisSplit(op.type, op.attrs.axis);
    int64_t offset = 0;
    for (size_t j = 0; j < op.operands.size(); ++j) {
      int64_t n = axisSplit(typeOfOperand(op.operands[j]), op.attrs.axis).n;
      std::string part =
          "ConcatAxisPart<" +
          commaSeparated(std::vector<int64_t>{whole.outer, n, offset, whole.n, whole.inner}, str) +
          ">::";
      if (!backward)
        s_.line(part + "forward(" + in(op.operands[j]) + ", " + outOf(i) + ");");
      else if (op.operands[j].isTensor())
        s_.line(part + "backward(" + view("In", gradName(i) + ".data()", widthOf(op.type)) + ", " +
                gradOf(op.operands[j]) + ");");
      offset += n;
    }
  }

  /// Linear<I, O> of the whole parameter, Linear<I, O, LO, COLS> of its
  /// columns [LO, LO + O) out of COLS.
  std::vector<int64_t> linearSizes(const PlanOp &op, int64_t in, int64_t out) const {
    if (op.attrs.hi <= 0)
      return {in, out};
    return {in, out, op.attrs.lo, plan_.params[size_t(op.attrs.param)].shape[1]};
  }

  std::vector<int64_t> operandWidths(const PlanOp &op) const {
    std::vector<int64_t> w;
    for (const PlanOperand &o : op.operands)
      w.push_back(widthOfOperand(o));
    return w;
  }

  /// MatMul's template arguments: [M, N] @ [N, P]; a vector on the left is
  /// [1, N], a vector on the right [N, 1] (`M @ x`).
  std::vector<int64_t> matmulSizes(const PlanOp &op) const {
    TypeRef a = typeOfOperand(op.operands[0]), b = typeOfOperand(op.operands[1]);
    int64_t n = a->shape.back();
    int64_t p = b->shape.size() == 1 ? 1 : b->shape.back();
    return {widthOf(a) / n, n, p};
  }

  void forwardOp(const PlanOp &op, int i) {
    const OpInfo &info = opInfo(op.kind);
    int64_t W = widthOf(op.type);
    std::string out = outOf(i);
    const auto &o = op.operands;
    std::vector<int64_t> w = operandWidths(op);
    switch (info.family) {
    case OpFamily::Softmax:
    case OpFamily::LogSoftmax:
    case OpFamily::Unary:
    case OpFamily::Reshape:
      s_.line(callAlong(op, {W}) + "forward(" + in(o[0]) + ", " + out + ");");
      return;
    case OpFamily::Binary:
    case OpFamily::Compare:
      s_.line(call(op, w) + "forward(" + in(o[0]) + ", " + in(o[1]) + ", " + out + ");");
      return;
    case OpFamily::Reduce:
    case OpFamily::Argmax:
      s_.line(callAlong(op, w) + "forward(" + in(o[0]) + ", " + out + ");");
      return;
    case OpFamily::Transpose:
      s_.line(call(op, typeOfOperand(o[0])->shape) + "forward(" + in(o[0]) + ", " + out + ");");
      return;
    case OpFamily::Outer:
      s_.line(call(op, w) + "forward(" + in(o[0]) + ", " + in(o[1]) + ", " + out + ");");
      return;
    case OpFamily::TopK:
    case OpFamily::TopKIndices:
      s_.line(call(op, {w[0], W}) + "forward(" + in(o[0]) + ", " + out + ");");
      return;
    case OpFamily::Gather:
      s_.line(call(op, {W}) + "forward(" + indices(o[0]) + ", " + param(op) + ", " + out + ");");
      return;
    case OpFamily::Linear:
      s_.line(call(op, linearSizes(op, w[0], W)) + "forward(" + in(o[0]) + ", " + param(op) + ", " +
              out + ");");
      return;
    case OpFamily::BiasAdd: {
      std::string x = addsInPlace(size_t(i)) ? valueView(i) : in(o[0]);
      s_.line(call(op, {W}) + "forward(" + x + ", " + param(op) + ", " + out + ");");
      return;
    }
    case OpFamily::Read:
      s_.line(call(op, {W}) + "forward(" + param(op) + ", " + out + ");");
      return;
    case OpFamily::MatMul:
      s_.line(call(op, matmulSizes(op)) + "forward(" + in(o[0]) + ", " + in(o[1]) + ", " + out +
              ");");
      return;
    case OpFamily::Slice:
      s_.line(callAlong(op, {w[0], op.attrs.lo, op.attrs.hi}) + "forward(" + in(o[0]) + ", " + out +
              ");");
      return;
    case OpFamily::Concat: {
      if (axisSplit(op.type, op.attrs.axis).outer > 1) // operands interleave
        return concatAlongAxis(op, i, false);
      int64_t offset = 0;
      for (size_t j = 0; j < o.size(); ++j) {
        s_.line(valueName(i) + ".middleCols(" + str(offset) + ", " + str(w[j]) + ") = " + in(o[j]) +
                ";");
        offset += w[j];
      }
      return;
    }
    case OpFamily::Dot:
    case OpFamily::Mse:
    case OpFamily::SigmoidXent:
      s_.line(call(op, {w[0]}) + "forward(" + in(o[0]) + ", " + in(o[1]) + ", " + out + ");");
      return;
    case OpFamily::OneHot:
      s_.line(call(op, {W}) + "forward(" + indices(o[0]) + ", " + out + ");");
      return;
    case OpFamily::Xent:
      s_.line(call(op, {w[0]}) + "forward(" + in(o[0]) + ", " + indices(o[1]) + ", " + out + ");");
      return;
    case OpFamily::Dropout:
      s_.line(call(op, {W}) + "forward(" + in(o[0]) + ", " + floatLiteral(op.attrs.rate) + ", " +
              str(i) + ", c.instanceKeys, *c.ctx, " + out + ");");
      return;
    case OpFamily::Segment:
      return; // a SegmentKernel (emitSegment)
    case OpFamily::Fill:
      s_.line(valueName(i) + ".setConstant(" + (op.kind == OpKind::Ones ? "1.0f" : "0.0f") + ");");
      return;
    case OpFamily::FromHost:
      s_.line(valueName(i) + " = " + in(o[0]) + ";");
      return;
    }
  }

  void forward() {
    auto fn = s_.scope("void forward(const foldc::rt::ForwardCall &c) const override {");
    s_.line("Values local;");
    s_.line("Values &v = foldc::rt::valuesToKeep(c, local);");
    s_.line("Scratch t;");
    s_.line("compute(c, v, t);");
    for (size_t j = 0; j < k_.results.size(); ++j) {
      int value = k_.results[j].op;
      std::string w = str(widthOf(k_.ops[size_t(value)].type));
      s_.line("foldc::rt::Rows<" + w + ">(c.outs[" + str(int64_t(j)) + "], c.rows, " + w +
              ") = " + valueName(value) + ";");
    }
  }

  /// Whether a gradient reaches op `i` (from a result or a later op that lets it through).
  std::vector<bool> gradientFlow() const {
    std::vector<bool> flows(k_.ops.size(), false);
    for (const KernelResult &r : k_.results)
      flows[size_t(r.op)] = true;
    for (size_t i = k_.ops.size(); i-- > 0;) {
      if (!flows[i] || hasNoGradient(k_.ops[i].kind))
        continue;
      for (const PlanOperand &o : k_.ops[i].operands)
        if (o.kind == PlanOperand::Kind::Op)
          flows[size_t(o.index)] = true;
    }
    return flows;
  }

  /// The gradient view of a tensor operand; null for host values and constants.
  std::string gradOf(const PlanOperand &o) const {
    if (isView(o))
      return columnsOf(o.index, true);
    int64_t w = widthOfOperand(o);
    switch (o.kind) {
    case PlanOperand::Kind::Op:
      return view("Out", gradName(o.index) + ".data()", w);
    case PlanOperand::Kind::Argument:
      return view("Out", "c.argGrads[" + str(o.index) + "]", w);
    case PlanOperand::Kind::Host:
    case PlanOperand::Kind::Constant:
      return view("Out", "discard" + str(w) + ".data()", w);
    }
    return view("Out", "discard" + str(w) + ".data()", w);
  }

  /// The gradient matrix of op `i`: its own, or that of the bias added to
  /// it in place.
  std::string gradName(int i) const {
    int bias = biasInPlace_[size_t(i)];
    return "g" + str(bias >= 0 ? bias : i);
  }

  /// The gradient view operand `j` of op `i` writes: FirstWrite(view) when
  /// that op writes the gradient matrix first (findFirstWrites).
  std::string gradTarget(int i, size_t j) const {
    std::string target = gradOf(k_.ops[size_t(i)].operands[j]);
    return firstWrite_[size_t(i)][j] ? "FirstWrite(" + target + ")" : target;
  }

  /// Where a gradient of operand `o` goes: columns [lo, hi) of the gradient
  /// matrix `g<matrix>` (a slice view's, of its source's), or matrix -1 for
  /// an argument, host value or constant.
  struct GradientColumns {
    int matrix = -1;
    int64_t lo = 0, hi = 0;
    bool overlaps(const GradientColumns &other) const {
      return matrix == other.matrix && lo < other.hi && other.lo < hi;
    }
  };
  GradientColumns gradientColumnsOf(const PlanOperand &o) const {
    if (o.kind != PlanOperand::Kind::Op)
      return {};
    const PlanOp &op = k_.ops[size_t(o.index)];
    if (view_[size_t(o.index)]) {
      GradientColumns source = gradientColumnsOf(op.operands[0]);
      int64_t lo = source.lo + op.attrs.lo;
      return {source.matrix, lo, lo + widthOf(op.type)};
    }
    int bias = biasInPlace_[size_t(o.index)];
    return {bias >= 0 ? bias : o.index, 0, widthOf(op.type)};
  }

  /// Whether op `i`'s backward writes every element of operand `j`'s
  /// gradient (with FirstWrite, assigns it): element-wise ops and the
  /// input of a linear layer, but not a stop_gradient.
  bool writesWholeGradient(const PlanOp &op, size_t j) const {
    switch (opInfo(op.kind).family) {
    case OpFamily::Unary:
      return op.kind != OpKind::StopGradient;
    case OpFamily::Binary:
      return true;
    case OpFamily::Linear:
      return j == 0;
    default:
      return false;
    }
  }

  /// Which columns of the gradient matrices are first written, in the
  /// backward's order, by an op that writes all of them: that op assigns
  /// (firstWrite_, and assignsResult_ for a result's incoming gradient), and
  /// a matrix whose every column is so assigned is not zero-filled
  /// (zeroFilled_). An LSTM cell's gate gradients, each a slice of one
  /// matrix, are assigned by their activations' backwards.
  void findFirstWrites(const std::vector<bool> &flows) {
    std::vector<std::vector<bool>> written(k_.ops.size()), assigned(k_.ops.size());
    for (size_t m = 0; m < k_.ops.size(); ++m) {
      written[m].assign(size_t(widthOf(k_.ops[m].type)), false);
      assigned[m] = written[m];
    }
    // Marks the columns written; true when none was before (they are assigned).
    writes_.assign(k_.ops.size(), 0);
    auto write = [&](const GradientColumns &to, bool assigns) {
      ++writes_[size_t(to.matrix)];
      auto &columns = written[size_t(to.matrix)];
      bool first =
          std::none_of(columns.begin() + to.lo, columns.begin() + to.hi, [](bool w) { return w; });
      std::fill(columns.begin() + to.lo, columns.begin() + to.hi, true);
      if (first && assigns)
        std::fill(assigned[size_t(to.matrix)].begin() + to.lo,
                  assigned[size_t(to.matrix)].begin() + to.hi, true);
      return first && assigns;
    };
    assignsResult_.assign(k_.results.size(), false);
    for (size_t j = 0; j < k_.results.size(); ++j)
      assignsResult_[j] = write(gradientColumnsOf({PlanOperand::Kind::Op, k_.results[j].op}), true);
    firstWrite_.assign(k_.ops.size(), {});
    for (size_t i = k_.ops.size(); i-- > 0;) {
      const PlanOp &op = k_.ops[i];
      firstWrite_[i].assign(op.operands.size(), false);
      if (!flows[i] || view_[i] || hasNoGradient(op.kind))
        continue;
      std::vector<GradientColumns> targets;
      for (const PlanOperand &o : op.operands)
        targets.push_back(gradientColumnsOf(o));
      for (size_t j = 0; j < targets.size(); ++j) {
        if (targets[j].matrix < 0)
          continue;
        bool alone = std::count_if(targets.begin(), targets.end(), [&](const GradientColumns &t) {
                       return t.overlaps(targets[j]);
                     }) == 1;
        firstWrite_[i][j] = write(targets[j], alone && writesWholeGradient(op, j));
      }
    }
    zeroFilled_.assign(k_.ops.size(), true);
    for (size_t m = 0; m < k_.ops.size(); ++m)
      zeroFilled_[m] =
          std::find(assigned[m].begin(), assigned[m].end(), false) != assigned[m].end();
  }

  /// Linear layers whose output gradient is computed in the weight's
  /// deferred product (ops::placedDy): a product with the whole weight, the
  /// only one with that weight in the kernel (its dy rows are placed when
  /// the backward starts, and its x rows must follow before any other's).
  void findPlacedDy(const std::vector<bool> &flows) {
    placedDy_.assign(k_.ops.size(), false);
    auto linearOn = [&](int param) {
      return std::count_if(k_.ops.begin(), k_.ops.end(), [&](const PlanOp &op) {
        return opInfo(op.kind).family == OpFamily::Linear && op.attrs.param == param;
      });
    };
    for (size_t i = 0; i < k_.ops.size(); ++i) {
      const PlanOp &op = k_.ops[i];
      placedDy_[i] = flows[i] && opInfo(op.kind).family == OpFamily::Linear && op.attrs.hi <= 0 &&
                     linearOn(op.attrs.param) == 1;
    }
  }

  /// The result whose incoming gradient is all that gradient matrix `m`
  /// receives (then `g<m>` is a view of it), or -1.
  int onlyResultInto(size_t m) const {
    for (size_t j = 0; j < k_.results.size(); ++j)
      if (size_t(k_.results[j].op) == m && writes_[m] == 1)
        return int(j);
    return -1;
  }

  /// Declares the gradient matrix `g<i>` (W wide): a view of the incoming
  /// gradient of a result that nothing else writes to, or zero-filled
  /// unless its first write assigns it; a linear layer's output gradient
  /// is placed.
  void declareGradient(size_t i, const std::vector<int> &placedBy) {
    std::string w = str(widthOf(k_.ops[i].type));
    std::string name = "g" + str(int64_t(i));
    if (int result = onlyResultInto(i); result >= 0 && placedBy[i] < 0) {
      s_.line("foldc::rt::ConstRows<" + w + "> " + name + "(c.outGrads[" + str(int64_t(result)) +
              "], rows, " + w + ");");
      return;
    }
    if (placedBy[i] >= 0) {
      s_.line("foldc::rt::RowsMatrix<" + w + "> " + name + "Own;");
      s_.line("foldc::rt::Rows<" + w + "> " + name + " = placedDy<" + w + ">(" +
              param(k_.ops[size_t(placedBy[i])]) + ", rows, " + name + "Own);");
      if (zeroFilled_[i])
        s_.line(name + ".setZero();");
      return;
    }
    s_.line("foldc::rt::RowsMatrix<" + w + "> " + name +
            (zeroFilled_[i] ? " = foldc::rt::RowsMatrix<" + w + ">::Zero(rows, " + w + ");"
                            : "(rows, " + w + ");"));
  }

  void backwardOp(const PlanOp &op, int i) {
    const OpInfo &info = opInfo(op.kind);
    const auto &o = op.operands;
    int64_t W = widthOf(op.type);
    std::string dy = view("In", gradName(i) + ".data()", W);
    std::vector<int64_t> w = operandWidths(op);
    BackwardReads reads = backwardReads(op.kind);
    auto operand = [&](const PlanOperand &x) { return reads.operands ? in(x) : kNotKept; };
    switch (info.family) {
    case OpFamily::Unary: {
      std::string y = reads.result ? valueView(i) : kNotKept;
      s_.line(call(op, {W}) + "backward(" + operand(o[0]) + ", " + y + ", " + dy + ", " +
              gradTarget(i, 0) + ");");
      return;
    }
    case OpFamily::Softmax:
    case OpFamily::LogSoftmax:
      s_.line(callAlong(op, {W}) + "backward(" + valueView(i) + ", " + dy + ", " + gradOf(o[0]) +
              ");");
      return;
    case OpFamily::Reshape:
      s_.line(call(op, {W}) + "backward(" + dy + ", " + gradOf(o[0]) + ");");
      return;
    case OpFamily::Transpose:
      s_.line(call(op, typeOfOperand(o[0])->shape) + "backward(" + dy + ", " + gradOf(o[0]) + ");");
      return;
    case OpFamily::Outer:
      s_.line(call(op, w) + "backward(" + in(o[0]) + ", " + in(o[1]) + ", " + dy + ", " +
              gradOf(o[0]) + ", " + gradOf(o[1]) + ");");
      return;
    case OpFamily::Binary:
      s_.line(call(op, w) + "backward(" + operand(o[0]) + ", " + operand(o[1]) + ", " + dy + ", " +
              gradTarget(i, 0) + ", " + gradTarget(i, 1) + ");");
      return;
    case OpFamily::Reduce:
      s_.line(callAlong(op, w) + "backward(" + in(o[0]) + ", " + dy + ", " + gradOf(o[0]) + ");");
      return;
    case OpFamily::Gather:
      s_.line(call(op, {W}) + "backward(" + indices(o[0]) + ", " + param(op) + ", " + dy + ");");
      return;
    case OpFamily::Linear: {
      // x's rows outlive the call when the kernel keeps them (kept values).
      bool xKept = o[0].kind == PlanOperand::Kind::Op && !isView(o[0]) && kept_[size_t(o[0].index)];
      std::string keptArgument = xKept ? "kept != nullptr" : "false";
      if (placedDy_[size_t(i)])
        s_.line(call(op, linearSizes(op, w[0], W)) + "backwardPlaced(" + in(o[0]) + ", " +
                param(op) + ", " + dy + ", " + gradTarget(i, 0) + ", " + keptArgument + ");");
      else
        s_.line(call(op, linearSizes(op, w[0], W)) + "backward(" + in(o[0]) + ", " + param(op) +
                ", " + dy + ", " + gradTarget(i, 0) + (xKept ? ", " + keptArgument : "") + ");");
      return;
    }
    case OpFamily::BiasAdd:
      if (addsInPlace(size_t(i)))
        s_.line(call(op, {W}) + "backwardBias(" + param(op) + ", " + dy + ");");
      else
        s_.line(call(op, {W}) + "backward(" + param(op) + ", " + dy + ", " + gradOf(o[0]) + ");");
      return;
    case OpFamily::Read:
      s_.line(call(op, {W}) + "backward(" + param(op) + ", " + dy + ");");
      return;
    case OpFamily::MatMul:
      s_.line(call(op, matmulSizes(op)) + "backward(" + in(o[0]) + ", " + in(o[1]) + ", " + dy +
              ", " + gradOf(o[0]) + ", " + gradOf(o[1]) + ");");
      return;
    case OpFamily::Slice:
      s_.line(callAlong(op, {w[0], op.attrs.lo, op.attrs.hi}) + "backward(" + dy + ", " +
              gradOf(o[0]) + ");");
      return;
    case OpFamily::Concat: {
      if (axisSplit(op.type, op.attrs.axis).outer > 1) // operands interleave
        return concatAlongAxis(op, i, true);
      int64_t offset = 0;
      for (size_t j = 0; j < o.size(); ++j) {
        if (o[j].isTensor())
          s_.line(gradOf(o[j]) + " += g" + str(i) + ".middleCols(" + str(offset) + ", " +
                  str(w[j]) + ");");
        offset += w[j];
      }
      return;
    }
    case OpFamily::Dot:
    case OpFamily::Mse:
    case OpFamily::SigmoidXent:
      s_.line(call(op, {w[0]}) + "backward(" + in(o[0]) + ", " + in(o[1]) + ", " + dy + ", " +
              gradOf(o[0]) + ", " + gradOf(o[1]) + ");");
      return;
    case OpFamily::Xent:
      s_.line(call(op, {w[0]}) + "backward(" + in(o[0]) + ", " + indices(o[1]) + ", " + dy + ", " +
              gradOf(o[0]) + ");");
      return;
    case OpFamily::Dropout:
      s_.line(call(op, {W}) + "backward(" + floatLiteral(op.attrs.rate) + ", " + str(i) +
              ", c.instanceKeys, *c.ctx, " + dy + ", " + gradOf(o[0]) + ");");
      return;
    case OpFamily::TopK:
      s_.line(call(op, {w[0], W}) + "backward(" + in(o[0]) + ", " + dy + ", " + gradOf(o[0]) +
              ");");
      return;
    case OpFamily::Compare: // hasNoGradient's families (Ops.def): backward() skips their ops
    case OpFamily::Argmax:
    case OpFamily::TopKIndices:
    case OpFamily::OneHot:
    case OpFamily::Fill:
    case OpFamily::FromHost:
    case OpFamily::Segment: // a SegmentKernel's own backward (emitSegment)
      return;
    }
  }

  /// Widths of the scratch gradients of host and constant operands that
  /// gradient-taking ops write to (and nobody reads).
  std::set<int64_t> discardWidths(const std::vector<bool> &flows) const {
    std::set<int64_t> widths;
    for (size_t i = 0; i < k_.ops.size(); ++i) {
      const PlanOp &op = k_.ops[i];
      OpFamily f = opInfo(op.kind).family;
      if (!flows[i] || hasNoGradient(op.kind) || f == OpFamily::Concat || f == OpFamily::Gather ||
          f == OpFamily::Xent || f == OpFamily::Read)
        continue;
      for (const PlanOperand &o : op.operands)
        if (!o.isTensor())
          widths.insert(widthOfOperand(o));
    }
    return widths;
  }

  void backward() {
    std::vector<bool> flows = gradientFlow();
    if (std::find(flows.begin(), flows.end(), true) == flows.end()) {
      s_.line(
          "void backward(const foldc::rt::BackwardCall &) const override {} // no gradient flows");
      return;
    }
    auto fn = s_.scope("void backward(const foldc::rt::BackwardCall &c) const override {");
    s_.line("using namespace foldc::rt::ops;");
    s_.line("const int rows = c.rows;");
    bool readsParams = false; // only ops a gradient reaches run backward
    for (size_t i = 0; i < k_.ops.size(); ++i)
      readsParams |= flows[i] && opInfo(k_.ops[i].kind).attr == OpAttr::Param;
    if (readsParams)
      s_.line("foldc::rt::ParamStore &params = *c.ctx->params;");
    s_.line("Values recomputed;");
    s_.line("Scratch scratch;");
    s_.line("const Values *kept = foldc::rt::keptValues<Values>(c);");
    s_.line("if (!kept)");
    s_.line("  compute(c, recomputed, scratch);");
    s_.line("[[maybe_unused]] const Values &v = kept ? *kept : recomputed;");
    for (int64_t w : discardWidths(flows))
      s_.line("foldc::rt::RowsMatrix<" + str(w) + "> discard" + str(w) +
              " = foldc::rt::RowsMatrix<" + str(w) + ">::Zero(rows, " + str(w) + ");");
    findFirstWrites(flows);
    findPlacedDy(flows);
    std::vector<int> placedBy(k_.ops.size(), -1); // per gradient matrix: its linear layer
    for (size_t i = 0; i < k_.ops.size(); ++i)
      if (placedDy_[i])
        placedBy[size_t(gradientColumnsOf({PlanOperand::Kind::Op, int(i)}).matrix)] = int(i);
    for (size_t i = 0; i < k_.ops.size(); ++i)
      if (flows[i] && !view_[i] && biasInPlace_[i] < 0)
        declareGradient(i, placedBy);
    for (size_t j = 0; j < k_.results.size(); ++j) {
      int value = k_.results[j].op;
      if (onlyResultInto(size_t(value)) == int(j) && placedBy[size_t(value)] < 0)
        continue; // g<value> is a view of it
      std::string w = str(widthOf(k_.ops[size_t(value)].type));
      s_.line("g" + str(value) + (assignsResult_[j] ? " = " : " += ") + "foldc::rt::ConstRows<" +
              w + ">(c.outGrads[" + str(int64_t(j)) + "], rows, " + w + ");");
    }
    for (size_t i = k_.ops.size(); i-- > 0;)
      if (flows[i] && !view_[i] && !hasNoGradient(k_.ops[i].kind))
        backwardOp(k_.ops[i], int(i));
  }

  const BatchPlan &plan_;
  const KernelPlan &k_;
  Emitter &s_;
  std::vector<HostSlot> slots_;
  int ints_ = 0, floats_ = 0;
  std::vector<bool> view_;                    ///< per op: a slice read in place (findSliceViews)
  std::vector<int> biasInPlace_;              ///< per op: the BiasAdd adding to it in place, or -1
  std::vector<bool> kept_;                    ///< per op: its value is kept for the backward pass
  std::vector<std::vector<bool>> firstWrite_; ///< per op and operand: assigns its gradient
  std::vector<bool> assignsResult_; ///< per result: its incoming gradient is the first write
  std::vector<bool> zeroFilled_;    ///< per gradient matrix: zeroed before the first write
  std::vector<int> writes_;         ///< per gradient matrix: the writes it receives
  std::vector<bool> placedDy_;      ///< per op: a linear layer whose dy is placed (placedDy)
  mutable std::vector<bool> reads_; ///< per op: the code emitted so far reads its value
};

void emitParams(const BatchPlan &plan, Emitter &s) {
  auto fn = s.scope(std::string("void declareParams(foldc::rt::ParamStore &") +
                    (plan.params.empty() ? "/*params*/" : "params") + ") {");
  auto number = [](double v) {
    std::ostringstream out;
    out.precision(9);
    out << v;
    return out.str();
  };
  for (const PlanParam &p : plan.params) {
    std::string init = "foldc::rt::InitKind::" + std::string(initKindInfo(p.init.kind).runtime);
    if (initKindInfo(p.init.kind).arity > 0)
      init += ", " + number(p.init.args[0]) + ", " + number(p.init.args[1]);
    std::string training;
    if (!p.trainable || p.learningRateScale != 1)
      training = std::string(p.sparseRows ? "" : ", /*sparseRows=*/false") + ", /*training=*/{" +
                 (p.trainable ? "true" : "false") + ", " + number(p.learningRateScale) + "}";
    s.line("params.add(\"" + p.key + "\", " + shapeList(p.shape) + ", {" + init + "}" +
           (p.sparseRows ? ", /*sparseRows=*/true" : "") + training + ");");
  }
}

} // namespace

std::string shapeList(const std::vector<int64_t> &shape) {
  return "{" + commaSeparated(shape, str) + "}";
}

std::vector<HostSlot> hostLayout(const KernelPlan &kernel) {
  std::vector<HostSlot> slots;
  int ints = 0, floats = 0;
  for (const HostInput &h : kernel.hostInputs) {
    bool isInt = h.isInt();
    slots.push_back({isInt, isInt ? ints : floats, h.width});
    (isInt ? ints : floats) += h.width;
  }
  return slots;
}

std::vector<int> emitKernels(const BatchPlan &plan, Emitter &header, Emitter &source) {
  header.line("/// Declares every parameter of the model with its initialiser.");
  header.line("void declareParams(foldc::rt::ParamStore &params);");
  header.line("/// One object per kernel of the batch plan (`--emit=plan`), by kernel name.");
  header.line("std::vector<std::unique_ptr<foldc::rt::Kernel>> makeKernels("
              "const foldc::rt::ParamStore &params);");
  emitParams(plan, source);
  source.line();
  std::vector<const KernelPlan *> generated;
  std::vector<int> index(plan.kernels.size(), -1);
  for (const KernelPlan &k : plan.kernels) {
    if (k.sameAs >= 0) {
      index[size_t(k.id)] = index[size_t(k.sameAs)];
      continue;
    }
    KernelEmitter(plan, k, source).emit();
    index[size_t(k.id)] = int(generated.size());
    generated.push_back(&k);
  }
  auto fn = source.scope(std::string("std::vector<std::unique_ptr<foldc::rt::Kernel>> makeKernels("
                                     "const foldc::rt::ParamStore &") +
                         (generated.empty() ? "/*params*/" : "params") + ") {");
  source.line("std::vector<std::unique_ptr<foldc::rt::Kernel>> kernels;");
  for (const KernelPlan *k : generated)
    source.line("kernels.push_back(std::make_unique<" + CppNames::kernelClass(*k) + ">(params));");
  source.line("return kernels;");
  return index;
}

} // namespace foldc
