// Kernel classes from kernel plans, over runtime/Primitives.h.
#include "codegen/KernelCodegen.h"

#include <cctype>
#include <set>

namespace foldc {

namespace {

int64_t widthOf(const TypeRef &t) {
  int64_t n = 1;
  for (int64_t d : t->shape)
    n *= d;
  return n;
}

std::string str(int64_t v) { return std::to_string(v); }

const char *initKind(InitKind k) {
  switch (k) {
  case InitKind::Zeros: return "Zeros";
  case InitKind::Ones: return "Ones";
  case InitKind::Uniform: return "Uniform";
  case InitKind::Normal: return "Normal";
  case InitKind::Glorot: return "Glorot";
  case InitKind::Constant: return "Constant";
  }
  return "Zeros";
}

class KernelEmitter {
public:
  KernelEmitter(const KernelPlan &k, Emitter &s) : k_(k), s_(s) {}

  /// Emits the class; returns false (emitting nothing) for an operation the
  /// generator does not handle yet.
  bool emit() {
    for (const PlanOp &op : k_.ops)
      if (!supported(op.name))
        return false;
    layOutHost();
    std::string cls = className(k_);
    {
      auto c = s_.scope("class " + cls + " final : public foldc::rt::Kernel {", "};");
      s_.line("public:");
      constructor(cls);
      forward();
      backward();
      s_.line("private:");
      compute();
      for (const std::string &p : k_.params)
        s_.line("int " + paramMember(p) + ";");
    }
    s_.line();
    return true;
  }

  static std::string className(const KernelPlan &k) { return "Kernel_" + identifier(k.name); }

private:
  static bool supported(const std::string &name) {
    static const std::set<std::string> ops = {
        "gather", "linear", "bias_add", "tanh", "sigmoid", "relu", "elu", "softplus", "exp",
        "log", "abs", "sqrt", "square", "neg", "add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt",
        "le", "gt", "ge", "slice", "index", "concat", "dot", "sum", "mean", "max", "min",
        "softmax", "argmax", "xent", "mse", "sigmoid_xent", "dropout", "zeros", "ones",
        "vector", "tensor"};
    return ops.count(name) != 0;
  }

  static std::string paramMember(const std::string &p) { return "p_" + identifier(p) + "_"; }

  void layOutHost() {
    slots_ = hostLayout(k_);
    ints_ = floats_ = 0;
    for (const HostSlot &slot : slots_)
      (slot.isInt ? ints_ : floats_) += slot.count;
  }

  void constructor(const std::string &cls) {
    std::string args = commaSeparated(k_.args, [](const TypeRef &a) { return str(widthOf(a)); });
    std::string outs = commaSeparated(k_.results, [&](const auto &result) {
      return str(widthOf(k_.ops[size_t(result.first)].type));
    });
    std::string init = "    : Kernel({\"" + k_.name + "\", {" + args + "}, {" + outs + "}, " +
                       str(ints_) + ", " + str(floats_) + ", " + str(int64_t(k_.flops())) + "})";
    for (const std::string &p : k_.params)
      init += ",\n      " + paramMember(p) + "(params.find(\"" + p + "\"))";
    s_.line("/// " + k_.name + ": source line " + str(k_.range.begin.line) + ".");
    s_.line("explicit " + cls + "(const foldc::rt::ParamStore &" +
            (k_.params.empty() ? "/*params*/" : "params") + ")");
    s_.line(init + " {}");
  }

  /// Registers: one batch matrix per op, and the instances' host values
  /// (`h` ints, `hf` as floats); `v` holds them for the backward pass.
  void compute() {
    {
      auto st = s_.scope("struct Values {", "};");
      for (size_t i = 0; i < k_.ops.size(); ++i)
        s_.line("foldc::rt::RowsMatrix<" + str(widthOf(k_.ops[i].type)) + "> v" + str(int64_t(i)) +
                ";");
      for (size_t h = 0; h < slots_.size(); ++h) {
        if (slots_[h].isInt)
          s_.line("std::vector<int32_t> h" + str(int64_t(h)) + ";");
        s_.line("foldc::rt::RowsMatrix<" + str(slots_[h].count) + "> hf" + str(int64_t(h)) + ";");
      }
    }
    auto fn = s_.scope("void compute(const foldc::rt::ForwardCall &c, Values &v) const {");
    s_.line("using namespace foldc::rt::ops;");
    s_.line("const int rows = c.rows;");
    s_.line("foldc::rt::ParamStore &params = *c.ctx->params;");
    s_.line("(void)params;");
    hostColumns();
    for (size_t i = 0; i < k_.ops.size(); ++i) {
      s_.line("v.v" + str(int64_t(i)) + ".resize(rows, " + str(widthOf(k_.ops[i].type)) + ");");
      forwardOp(k_.ops[i], int(i));
    }
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
    case PlanOperand::Kind::Op: return widthOf(k_.ops[size_t(o.index)].type);
    case PlanOperand::Kind::Argument: return widthOf(k_.args[size_t(o.index)]);
    case PlanOperand::Kind::Host: return slots_[size_t(o.index)].count;
    case PlanOperand::Kind::Constant: return 1;
    }
    return 1;
  }

  /// `In<W>(data, rows, W)` or `Out<W>(...)`: a batch view of W floats a row.
  static std::string view(const char *kind, const std::string &data, int64_t width) {
    std::string w = str(width);
    return std::string(kind) + "<" + w + ">(" + data + ", rows, " + w + ")";
  }

  /// The operand as a read-only batch view.
  std::string in(const PlanOperand &o) const {
    int64_t w = widthOfOperand(o);
    switch (o.kind) {
    case PlanOperand::Kind::Op: return view("In", "v.v" + str(o.index) + ".data()", w);
    case PlanOperand::Kind::Argument: return view("In", "c.args[" + str(o.index) + "]", w);
    case PlanOperand::Kind::Host: return view("In", "v.hf" + str(o.index) + ".data()", w);
    case PlanOperand::Kind::Constant:
      return view("In",
                  "foldc::rt::RowsMatrix<1>::Constant(rows, 1, float(" + o.constant +
                      ")).eval().data()",
                  1);
    }
    return "";
  }

  std::string outOf(int i) const {
    return view("Out", "v.v" + str(int64_t(i)) + ".data()", widthOf(k_.ops[size_t(i)].type));
  }

  static bool isBinary(const std::string &n) {
    return n == "add" || n == "sub" || n == "mul" || n == "div" || n == "maximum" ||
           n == "minimum";
  }
  static std::string binaryKind(const std::string &n) {
    return n == "add" ? "Add" : n == "sub" ? "Sub" : n == "mul" ? "Mul" : n == "div" ? "Div"
           : n == "maximum" ? "Maximum" : "Minimum";
  }
  static std::string compareKind(const std::string &n) {
    return n == "eq" ? "Eq" : n == "ne" ? "Ne" : n == "lt" ? "Lt" : n == "le" ? "Le" : n == "gt" ? "Gt" : "Ge";
  }
  static std::string unaryKind(const std::string &n) {
    static const std::pair<const char *, const char *> names[] = {
        {"tanh", "Tanh"}, {"sigmoid", "Sigmoid"}, {"relu", "ReLU"}, {"elu", "Elu"},
        {"softplus", "Softplus"}, {"exp", "Exp"}, {"log", "Log"}, {"abs", "Abs"},
        {"sqrt", "Sqrt"}, {"square", "Square"}, {"neg", "Neg"}};
    for (auto [a, b] : names)
      if (n == a)
        return b;
    return "";
  }
  static std::string reduceKind(const std::string &n) {
    return n == "sum" ? "Sum" : n == "mean" ? "Mean" : n == "max" ? "Max" : "Min";
  }

  std::string param(const PlanOp &op) const {
    return "params.at(" + paramMember(op.attribute) + ")";
  }

  /// The slice bounds `lo:hi` (or the index `i`) of a slice or index op.
  std::pair<std::string, std::string> bounds(const PlanOp &op) const {
    size_t colon = op.attribute.find(':');
    if (colon == std::string::npos)
      return {op.attribute, str(std::stoll(op.attribute) + 1)};
    return {op.attribute.substr(0, colon), op.attribute.substr(colon + 1)};
  }

  const PlanOperand *hostOperand(const PlanOp &op) const {
    for (const PlanOperand &o : op.operands)
      if (o.kind == PlanOperand::Kind::Host)
        return &o;
    return nullptr;
  }

  void forwardOp(const PlanOp &op, int i) {
    const std::string &n = op.name;
    std::string W = str(widthOf(op.type)), out = outOf(i);
    const auto &o = op.operands;
    auto w = [&](size_t j) { return str(widthOfOperand(o[j])); };
    if (n == "gather")
      s_.line("Gather<" + W + ">::forward(v.h" + str(hostOperand(op)->index) + ", " + param(op) +
              ", " + out + ");");
    else if (n == "linear")
      s_.line("Linear<" + w(0) + ", " + W + ">::forward(" + in(o[0]) + ", " + param(op) + ", " +
              out + ");");
    else if (n == "bias_add")
      s_.line("BiasAdd<" + W + ">::forward(" + in(o[0]) + ", " + param(op) + ", " + out + ");");
    else if (!unaryKind(n).empty())
      s_.line("Unary<UnaryKind::" + unaryKind(n) + ", " + W + ">::forward(" + in(o[0]) + ", " +
              out + ");");
    else if (isBinary(n))
      s_.line("Binary<BinaryKind::" + binaryKind(n) + ", " + w(0) + ", " + w(1) + ">::forward(" +
              in(o[0]) + ", " + in(o[1]) + ", " + out + ");");
    else if (n == "eq" || n == "ne" || n == "lt" || n == "le" || n == "gt" || n == "ge")
      s_.line("Compare<CompareKind::" + compareKind(n) + ", " + w(0) + ", " + w(1) +
              ">::forward(" + in(o[0]) + ", " + in(o[1]) + ", " + out + ");");
    else if (n == "slice" || n == "index") {
      auto [lo, hi] = bounds(op);
      s_.line("Slice<" + w(0) + ", " + lo + ", " + hi + ">::forward(" + in(o[0]) + ", " + out +
              ");");
    } else if (n == "concat") {
      int64_t offset = 0;
      for (size_t j = 0; j < o.size(); ++j) {
        s_.line("v.v" + str(i) + ".middleCols(" + str(offset) + ", " + w(j) + ") = " + in(o[j]) +
                ";");
        offset += widthOfOperand(o[j]);
      }
    } else if (n == "dot")
      s_.line("Dot<" + w(0) + ">::forward(" + in(o[0]) + ", " + in(o[1]) + ", " + out + ");");
    else if (n == "sum" || n == "mean" || n == "max" || n == "min")
      s_.line("Reduce<ReduceKind::" + reduceKind(n) + ", " + w(0) + ">::forward(" + in(o[0]) +
              ", " + out + ");");
    else if (n == "softmax")
      s_.line("Softmax<" + W + ">::forward(" + in(o[0]) + ", " + out + ");");
    else if (n == "argmax")
      s_.line("Argmax<" + w(0) + ">::forward(" + in(o[0]) + ", " + out + ");");
    else if (n == "xent")
      s_.line("Xent<" + w(0) + ">::forward(" + in(o[0]) + ", v.h" + str(o[1].index) + ", " + out +
              ");");
    else if (n == "mse" || n == "sigmoid_xent")
      s_.line(std::string(n == "mse" ? "Mse" : "SigmoidXent") + "<" + w(0) + ">::forward(" +
              in(o[0]) + ", " + in(o[1]) + ", " + out + ");");
    else if (n == "dropout")
      s_.line("Dropout<" + W + ">::forward(" + in(o[0]) + ", float(" + o[1].constant + "), " +
              str(i) + ", c.instanceKeys, *c.ctx, " + out + ");");
    else if (n == "zeros" || n == "ones")
      s_.line("v.v" + str(i) + ".setConstant(" + (n == "ones" ? "1.0f" : "0.0f") + ");");
    else if (n == "vector" || n == "tensor")
      s_.line("v.v" + str(i) + " = " + in(*hostOperand(op)) + ";");
  }

  void forward() {
    auto fn = s_.scope("void forward(const foldc::rt::ForwardCall &c) const override {");
    s_.line("Values v;");
    s_.line("compute(c, v);");
    for (size_t j = 0; j < k_.results.size(); ++j) {
      int value = k_.results[j].first;
      std::string w = str(widthOf(k_.ops[size_t(value)].type));
      s_.line("foldc::rt::Rows<" + w + ">(c.outs[" + str(int64_t(j)) + "], c.rows, " + w +
              ") = v.v" + str(value) + ";");
    }
  }

  /// The gradient view of a tensor operand (host values and constants get a scratch).
  std::string gradOf(const PlanOperand &o) const {
    int64_t w = widthOfOperand(o);
    switch (o.kind) {
    case PlanOperand::Kind::Op: return view("Out", "g" + str(o.index) + ".data()", w);
    case PlanOperand::Kind::Argument: return view("Out", "c.argGrads[" + str(o.index) + "]", w);
    default:
      return view("Out", "foldc::rt::RowsMatrix<" + str(w) + ">(rows, " + str(w) + ").data()", w);
    }
  }

  void backwardOp(const PlanOp &op, int i) {
    const std::string &n = op.name;
    const auto &o = op.operands;
    std::string W = str(widthOf(op.type));
    std::string dy = view("In", "g" + str(i) + ".data()", widthOf(op.type));
    std::string y = view("In", "v.v" + str(i) + ".data()", widthOf(op.type));
    auto w = [&](size_t j) { return str(widthOfOperand(o[j])); };
    if (n == "gather")
      s_.line("Gather<" + W + ">::backward(v.h" + str(hostOperand(op)->index) + ", " + param(op) +
              ", " + dy + ");");
    else if (n == "linear")
      s_.line("Linear<" + w(0) + ", " + W + ">::backward(" + in(o[0]) + ", " + param(op) + ", " +
              dy + ", " + gradOf(o[0]) + ");");
    else if (n == "bias_add")
      s_.line("BiasAdd<" + W + ">::backward(" + param(op) + ", " + dy + ", " + gradOf(o[0]) + ");");
    else if (!unaryKind(n).empty())
      s_.line("Unary<UnaryKind::" + unaryKind(n) + ", " + W + ">::backward(" + in(o[0]) + ", " +
              y + ", " + dy + ", " + gradOf(o[0]) + ");");
    else if (isBinary(n))
      s_.line("Binary<BinaryKind::" + binaryKind(n) + ", " + w(0) + ", " + w(1) + ">::backward(" +
              in(o[0]) + ", " + in(o[1]) + ", " + dy + ", " + gradOf(o[0]) + ", " + gradOf(o[1]) +
              ");");
    else if (n == "slice" || n == "index") {
      auto [lo, hi] = bounds(op);
      s_.line("Slice<" + w(0) + ", " + lo + ", " + hi + ">::backward(" + dy + ", " + gradOf(o[0]) +
              ");");
    } else if (n == "concat") {
      int64_t offset = 0;
      for (size_t j = 0; j < o.size(); ++j) {
        if (o[j].isTensor())
          s_.line(gradOf(o[j]) + " += g" + str(i) + ".middleCols(" + str(offset) + ", " + w(j) +
                  ");");
        offset += widthOfOperand(o[j]);
      }
    } else if (n == "dot")
      s_.line("Dot<" + w(0) + ">::backward(" + in(o[0]) + ", " + in(o[1]) + ", " + dy + ", " +
              gradOf(o[0]) + ", " + gradOf(o[1]) + ");");
    else if (n == "sum" || n == "mean" || n == "max" || n == "min")
      s_.line("Reduce<ReduceKind::" + reduceKind(n) + ", " + w(0) + ">::backward(" + in(o[0]) +
              ", " + dy + ", " + gradOf(o[0]) + ");");
    else if (n == "softmax")
      s_.line("Softmax<" + W + ">::backward(" + y + ", " + dy + ", " + gradOf(o[0]) + ");");
    else if (n == "xent")
      s_.line("Xent<" + w(0) + ">::backward(" + in(o[0]) + ", v.h" + str(o[1].index) + ", " + dy +
              ", " + gradOf(o[0]) + ");");
    else if (n == "mse" || n == "sigmoid_xent")
      s_.line(std::string(n == "mse" ? "Mse" : "SigmoidXent") + "<" + w(0) + ">::backward(" +
              in(o[0]) + ", " + in(o[1]) + ", " + dy + ", " + gradOf(o[0]) + ", " + gradOf(o[1]) +
              ");");
    else if (n == "dropout")
      s_.line("Dropout<" + W + ">::backward(float(" + o[1].constant + "), " + str(i) +
              ", c.instanceKeys, *c.ctx, " + dy + ", " + gradOf(o[0]) + ");");
    // argmax, comparisons, zeros, ones, vector, tensor: no gradient flows.
  }

  void backward() {
    auto fn = s_.scope("void backward(const foldc::rt::BackwardCall &c) const override {");
    s_.line("using namespace foldc::rt::ops;");
    s_.line("const int rows = c.rows;");
    s_.line("foldc::rt::ParamStore &params = *c.ctx->params;");
    s_.line("(void)params;");
    s_.line("Values v;");
    s_.line("compute(c, v); // recomputed: kernels keep nothing between passes");
    for (size_t i = 0; i < k_.ops.size(); ++i) {
      std::string w = str(widthOf(k_.ops[i].type));
      s_.line("foldc::rt::RowsMatrix<" + w + "> g" + str(int64_t(i)) +
              " = foldc::rt::RowsMatrix<" + w + ">::Zero(rows, " + w + ");");
    }
    for (size_t j = 0; j < k_.results.size(); ++j) {
      int value = k_.results[j].first;
      std::string w = str(widthOf(k_.ops[size_t(value)].type));
      s_.line("g" + str(value) + " += foldc::rt::ConstRows<" + w + ">(c.outGrads[" +
              str(int64_t(j)) + "], rows, " + w + ");");
    }
    for (size_t i = k_.ops.size(); i-- > 0;)
      backwardOp(k_.ops[i], int(i));
  }

  const KernelPlan &k_;
  Emitter &s_;
  std::vector<HostSlot> slots_;
  int ints_ = 0, floats_ = 0;
};

/// True when the program declares parameters (params or layers).
bool hasParams(const TypedProgram &program) {
  return !program.params.empty() || !program.layers.empty();
}

void emitParams(const TypedProgram &program, Emitter &s) {
  auto fn = s.scope(std::string("void declareParams(foldc::rt::ParamStore &") +
                    (hasParams(program) ? "params" : "/*params*/") + ") {");
  auto declare = [&](const std::string &name, const ParamInfo &info) {
    s.line("params.add(\"" + name + "\", " + shapeList(info.type->shape) +
           ", {foldc::rt::InitKind::" + initKind(info.init) + ", " + std::to_string(info.a) + ", " +
           std::to_string(info.b) + "});");
  };
  for (const DeclPtr &d : program.module->decls) {
    if (auto *p = dyn_cast<GlobalParamDecl>(d.get())) {
      declare(p->name, program.params.at(&p->param));
    } else if (auto *fn = dyn_cast<FunctionDecl>(d.get())) {
      for (const StmtPtr &st : fn->body)
        if (auto *ps = dyn_cast<ParamStmt>(st.get()))
          declare(fn->name + "." + ps->param.name, program.params.at(&ps->param));
    } else if (auto *l = dyn_cast<LayerDecl>(d.get())) {
      auto it = program.layers.find(l);
      if (it == program.layers.end())
        continue;
      for (const LayerInfo::Param &p : it->second.params) {
        bool embedding = it->second.kind == LayerKind::Embedding;
        bool matrix = p.shape.size() >= 2;
        std::string init = embedding ? "{foldc::rt::InitKind::Uniform, -0.05, 0.05}"
                           : matrix  ? "{foldc::rt::InitKind::Glorot}"
                                     : "{foldc::rt::InitKind::Zeros}";
        s.line("params.add(\"" + l->name + "." + p.name + "\", " + shapeList(p.shape) + ", " +
               init + (embedding ? ", /*sparseRows=*/true" : "") + ");");
      }
    }
  }
}

} // namespace

std::string identifier(const std::string &name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string shapeList(const std::vector<int64_t> &shape) {
  return "{" + commaSeparated(shape, str) + "}";
}

std::vector<HostSlot> hostLayout(const KernelPlan &kernel) {
  std::vector<HostSlot> slots;
  int ints = 0, floats = 0;
  for (size_t h = 0; h < kernel.hostInputs.size(); ++h) {
    const TypeRef &t = kernel.hostInputs[h].type;
    int count = 1;
    for (const PlanOp &op : kernel.ops) // a list is read by `vector`, as many floats as it gives
      for (const PlanOperand &o : op.operands)
        if (o.kind == PlanOperand::Kind::Host && size_t(o.index) == h && op.name == "vector")
          count = int(widthOf(op.type));
    bool isInt = t->kind == TypeKind::Int || t->kind == TypeKind::Bool;
    slots.push_back({isInt, isInt ? ints : floats, count});
    (isInt ? ints : floats) += count;
  }
  return slots;
}

std::vector<int> emitKernels(const TypedProgram &program, const BatchPlan &plan,
                             Emitter &header, Emitter &source) {
  header.line("/// Declares every parameter of the model with its initialiser.");
  header.line("void declareParams(foldc::rt::ParamStore &params);");
  header.line("/// One object per kernel of the batch plan (`--emit=plan`), by kernel name.");
  header.line("std::vector<std::unique_ptr<foldc::rt::Kernel>> makeKernels("
              "const foldc::rt::ParamStore &params);");
  emitParams(program, source);
  source.line();
  std::vector<const KernelPlan *> generated;
  std::vector<int> index(plan.kernels.size(), -1);
  for (const KernelPlan &k : plan.kernels) {
    if (k.sameAs >= 0) {
      index[size_t(k.id)] = index[size_t(k.sameAs)];
      continue;
    }
    if (KernelEmitter(k, source).emit()) {
      index[size_t(k.id)] = int(generated.size());
      generated.push_back(&k);
    } else {
      source.line("// " + k.name + ": uses an operation the generator does not handle yet.");
    }
  }
  auto fn = source.scope(std::string("std::vector<std::unique_ptr<foldc::rt::Kernel>> makeKernels("
                                     "const foldc::rt::ParamStore &") +
                         (generated.empty() ? "/*params*/" : "params") + ") {");
  source.line("std::vector<std::unique_ptr<foldc::rt::Kernel>> kernels;");
  for (const KernelPlan *k : generated)
    source.line("kernels.push_back(std::make_unique<" + KernelEmitter::className(*k) +
                ">(params));");
  source.line("return kernels;");
  return index;
}

} // namespace foldc
