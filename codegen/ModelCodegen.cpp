// The model class: unfolding functions from the plan's steps (see ModelCodegen.h).
#include "codegen/ModelCodegen.h"

#include "codegen/DataCodegen.h"
#include "codegen/KernelCodegen.h"

#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace foldc {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

bool isNumber(const std::string &s) {
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0]));
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

/// The C++ type holding a value of `type` during unfolding: tensors are
/// handles (rt::ValueRef), host values are the data types' C++ types.
std::string valueType(const TypeRef &type) {
  switch (type->kind) {
  case TypeKind::Tensor: return "foldc::rt::ValueRef";
  case TypeKind::Tuple: return "std::tuple<" + commaSeparated(type->elements, valueType) + ">";
  case TypeKind::List: return "std::vector<" + valueType(type->element0()) + ">";
  case TypeKind::Data:
    return type->variant < 0 || type->data->isRecord ? type->data->name
                             : type->data->name + "::" + type->data->variants[size_t(type->variant)].name;
  default: return cppHostType(type);
  }
}

/// How a function takes a parameter of `type`: host aggregates by reference.
std::string paramType(const TypeRef &type) {
  bool aggregate = type->kind == TypeKind::Data || type->kind == TypeKind::List ||
                   type->kind == TypeKind::String || type->kind == TypeKind::Tuple;
  return aggregate ? "const " + valueType(type) + " &" : valueType(type) + " ";
}

/// Names generated code uses for itself; a source name equal to one gets a `_`.
bool reserved(const std::string &name) {
  static const std::set<std::string> words = {
      "graph", "output", "kernels_", "params_", "auto", "bool", "break", "case", "char",
      "class", "const", "continue", "default", "delete", "do", "double", "else", "enum",
      "float", "for", "goto", "if", "int", "long", "namespace", "new", "private", "public",
      "register", "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "template", "this", "throw", "try", "typedef", "union", "unsigned", "using", "virtual",
      "void", "volatile", "while", "std", "foldc"};
  return words.count(name) != 0;
}

/// A handle of the plan as C++: `%3` -> `h3`, `%3.x` -> `h3_x`, `%3.0` ->
/// `std::get<0>(h3)`, `p.1` -> `std::get<1>(p)`.
std::string handleCpp(const std::string &handle) {
  std::vector<std::string> parts = split(handle, '.');
  std::string root = parts[0];
  if (!root.empty() && root[0] == '%')
    root = "h" + root.substr(1);
  else if (reserved(root))
    root += "_";
  size_t i = 1;
  for (; i < parts.size() && !isNumber(parts[i]); ++i)
    root += "_" + parts[i];
  for (; i < parts.size(); ++i)
    root = "std::get<" + parts[i] + ">(" + root + ")";
  return root;
}

class ModelEmitter {
public:
  ModelEmitter(const TypedProgram &program, const BatchPlan &plan,
               const std::vector<int> &kernelIndex, Emitter &header, Emitter &source)
      : program_(program), plan_(plan), kernelIndex_(kernelIndex), h_(header), s_(source) {}

  void run() {
    const FunctionDecl *model = program_.names->model;
    if (!model)
      return;
    if (model->params.size() != 1)
      throw CodegenError("the model must take exactly one input (the example)");
    collectMetrics();
    findOutputType(*model);
    declareClass(*model);
    defineConstructor();
    for (const FunctionPlan &f : plan_.functions)
      defineFunction(f);
    defineOutputJson();
  }

private:
  // ------------------------------------------------------------ the class
  std::string exampleType(const FunctionDecl &model) const {
    return valueType(program_.bindingTypes.at(&model.params[0]));
  }

  void declareClass(const FunctionDecl &model) {
    std::string base = "foldc::rt::ModelBase<Model, " + exampleType(model) + ", " +
                       valueType(outputType_) + ">";
    h_.line("/// The `" + model.name + "` model: unfolds examples into batched kernel instances;");
    h_.line("/// init/load/save/infer/train_step/eval come from foldc::rt::ModelBase.");
    auto c = h_.scope("class Model : public " + base + " {", "};");
    h_.line("public:");
    h_.line("Model();");
    h_.line("/// Records one example's instances, losses and metrics; gives its output.");
    h_.line("Output unfold(const Example &" + handleCpp(model.params[0].name) +
            ", foldc::rt::BatchGraph &graph) const;");
    h_.line("/// The output of an example after a forward pass, as JSON (§9).");
    h_.line("nlohmann::json outputJson(const foldc::rt::Executor &executor, const Output &output) const;");
    h_.line();
    h_.line("private:");
    for (const FunctionPlan &f : plan_.functions)
      if (!f.function->isModel())
        h_.line(signature(*f.function, "") + ";");
  }

  void defineConstructor() {
    auto c = s_.scope("Model::Model() {");
    s_.line("declareParams(params_);");
    s_.line("kernels_ = makeKernels(params_);");
    s_.line("metricNames_ = {" +
            commaSeparated(metrics_, [](const std::string &m) { return "\"" + m + "\""; }) + "};");
  }

  std::string signature(const FunctionDecl &fn, const std::string &qualifier) const {
    std::string params;
    for (const Parameter &p : fn.params)
      params += paramType(program_.bindingTypes.at(&p)) + handleCpp(p.name) + ", ";
    TypeRef result = program_.signatures.at(&fn)->result;
    return valueType(result) + " " + qualifier + "unfold_" + fn.name + "(" + params +
           "foldc::rt::BatchGraph &graph) const";
  }

  // ------------------------------------------------------------ metrics, output
  void collectMetrics() {
    for (const DeclPtr &d : program_.module->decls)
      if (auto *fn = dyn_cast<FunctionDecl>(d.get()))
        for (const StmtPtr &s : fn->body)
          if (auto *m = dyn_cast<MetricStmt>(s.get()); m && !metricIds_.count(m->name)) {
            metricIds_[m->name] = int(metrics_.size());
            metrics_.push_back(m->name);
          }
  }

  void findOutputType(const FunctionDecl &model) {
    for (const KernelPlan &k : plan_.kernels)
      for (const auto &[op, role] : k.results)
        if (role == "output")
          outputType_ = k.ops[size_t(op)].type;
    for (const FunctionPlan &f : plan_.functions)
      if (f.function == &model)
        findOutputRole(f.steps);
    if (!outputType_)
      outputType_ = types::f32(); // a model without `output` infers nothing useful
  }

  void findOutputRole(const std::vector<UnfoldStep> &steps) {
    for (const UnfoldStep &s : steps) {
      if (s.kind == UnfoldStep::Kind::Role && s.name == "output")
        outputType_ = s.values[0].type;
      findOutputRole(s.children);
    }
  }

  void defineOutputJson() {
    auto f = s_.scope("nlohmann::json Model::outputJson(const foldc::rt::Executor &executor, "
                      "const Output &output) const {");
    s_.line("(void)executor; // host outputs are not read from it");
    s_.line("return " + jsonOf(outputType_, "output") + ";");
  }

  std::string jsonOf(const TypeRef &type, const std::string &value) {
    switch (type->kind) {
    case TypeKind::Tensor:
      return "foldc::rt::tensorJson(executor.value(" + value + "), " + shapeList(type->shape) +
             (type->element == ElementType::I32 ? ", /*integral=*/true" : "") + ")";
    case TypeKind::Tuple: {
      std::vector<std::string> elements;
      for (size_t i = 0; i < type->elements.size(); ++i)
        elements.push_back(
            jsonOf(type->elements[i], "std::get<" + str(int64_t(i)) + ">(" + value + ")"));
      return "nlohmann::json::array({" + commaSeparated(elements, std::identity()) + "})";
    }
    case TypeKind::List: {
      std::string v = "v" + str(int64_t(lambdaDepth_++));
      std::string out = "[&] { nlohmann::json a = nlohmann::json::array(); for (const auto &" + v +
                        " : " + value + ") a.push_back(" + jsonOf(type->element0(), v) +
                        "); return a; }()";
      --lambdaDepth_;
      return out;
    }
    case TypeKind::Int: case TypeKind::Float: case TypeKind::Bool: case TypeKind::String:
      return "nlohmann::json(" + value + ")";
    default:
      throw CodegenError("an output of type " + toString(type) + " cannot be printed yet");
    }
  }

  // ------------------------------------------------------------ functions
  void defineFunction(const FunctionPlan &f) {
    const FunctionDecl &fn = *f.function;
    if (fn.isModel()) {
      auto body = s_.scope("Model::Output Model::unfold(const Example &" +
                           handleCpp(fn.params[0].name) + ", foldc::rt::BatchGraph &graph) const {");
      s_.line("Output output{};");
      s_.line("(void)graph; // unused when the model computes on host values only");
      emitSteps(f.steps);
      s_.line("return output;");
    } else {
      auto body = s_.scope(signature(fn, "Model::") + " {");
      s_.line("(void)graph;");
      emitSteps(f.steps);
    }
    s_.line();
  }

  void emitSteps(const std::vector<UnfoldStep> &steps) {
    for (const UnfoldStep &s : steps)
      emitStep(s);
  }

  void emitStep(const UnfoldStep &s) {
    switch (s.kind) {
    case UnfoldStep::Kind::Instance: return instance(plan_.kernels[size_t(s.kernel)]);
    case UnfoldStep::Kind::Call: {
      std::string args;
      for (const StepValue &v : s.values)
        args += valueCpp(v) + ", ";
      s_.line("const auto " + handleCpp(s.target) + " = unfold_" + s.name + "(" + args + "graph);");
      return;
    }
    case UnfoldStep::Kind::Combinator: return combinator(s);
    case UnfoldStep::Kind::Structural: return structural(s);
    case UnfoldStep::Kind::Match: return match(s);
    case UnfoldStep::Kind::If: {
      declareResult(s);
      {
        auto then = s_.scope("if (" + valueCpp(s.values[0]) + ") {");
        emitSteps(s.children[0].children);
      }
      auto otherwise = s_.scope("else {");
      emitSteps(s.children[1].children);
      return;
    }
    case UnfoldStep::Kind::Assign:
      s_.line(handleCpp(s.target) + " = " + valueCpp(s.values[0]) + ";");
      return;
    case UnfoldStep::Kind::Return:
      s_.line("return " + valueCpp(s.values[0]) + ";");
      return;
    case UnfoldStep::Kind::Role: return role(s.name, valueCpp(s.values[0]));
    case UnfoldStep::Kind::Sequence: return sequence(s);
    case UnfoldStep::Kind::Arm: case UnfoldStep::Kind::Yield:
      break; // inside Match / Combinator
    }
  }

  /// `loss`, `output` or `metric NAME` of a value.
  void role(const std::string &role, const std::string &value) {
    if (role == "loss")
      s_.line("graph.addLoss(" + value + ");");
    else if (role == "output")
      s_.line("output = " + value + ";");
    else
      s_.line("graph.addMetric(" + str(metricIds_.at(role.substr(7))) + ", " + value + ");  // " +
              role);
  }

  static std::string instanceName(const KernelPlan &k) { return "i_" + identifier(k.name); }

  /// `graph.add` of the kernel with its arguments and host values, then its
  /// losses, metrics and output.
  void instance(const KernelPlan &k) {
    int index = kernelIndex_[size_t(k.id)];
    if (index < 0)
      throw CodegenError("kernel " + k.name + " uses an operation the generator does not handle yet");
    std::string args = commaSeparated(k.argValues, [&](const StepValue &v) { return valueCpp(v); });
    std::string ints;
    std::vector<HostSlot> slots = hostLayout(k);
    std::string floats = instanceName(k) + "_floats";
    bool anyFloats = false;
    for (size_t h = 0; h < slots.size(); ++h) {
      std::string value = hostCpp(k.hostInputs[h].expr);
      if (slots[h].isInt) {
        ints += (ints.empty() ? "" : ", ") + ("int32_t(" + value + ")");
        continue;
      }
      if (!anyFloats)
        s_.line("std::vector<float> " + floats + ";");
      anyFloats = true;
      if (k.hostInputs[h].type->kind == TypeKind::List)
        s_.line("foldc::rt::appendVector(" + floats + ", " + value + ", " + str(slots[h].count) + ");");
      else
        s_.line(floats + ".push_back(float(" + value + "));");
    }
    std::string call = "graph.add(*kernels_[" + str(index) + "], ";
    if (anyFloats)
      call += "std::vector<foldc::rt::ValueRef>{" + args + "}, std::vector<int32_t>{" + ints +
              "}, " + floats + ")";
    else
      call += "{" + args + "}, {" + ints + "})";
    s_.line("// " + k.name + ", source line " + str(k.range.begin.line));
    s_.line("const int32_t " + instanceName(k) + " = " + call + ";");
    for (size_t j = 0; j < k.results.size(); ++j)
      if (k.results[j].second != "value")
        role(k.results[j].second,
             "foldc::rt::ValueRef{" + instanceName(k) + ", " + str(int64_t(j)) + "}");
  }

  /// The variable a match or if assigns in each arm.
  void declareResult(const UnfoldStep &s) {
    s_.line(valueType(s.type) + " " + handleCpp(s.target) + "{};");
  }

  void match(const UnfoldStep &s) {
    declareResult(s);
    const StepValue &scrutinee = s.values[0];
    TypeRef type = scrutinee.type;
    if (type->kind == TypeKind::Optional)
      return matchOptional(s);
    if (type->kind != TypeKind::Data || type->data->isRecord)
      throw CodegenError("match on " + toString(type) + " is not generated yet");
    std::string subject = valueCpp(scrutinee);
    std::string keyword = "if";
    const UnfoldStep *fallback = nullptr;
    for (const UnfoldStep &arm : s.children) {
      if (arm.name == "_") {
        fallback = &arm;
        continue;
      }
      std::string variant = type->data->name + "::" + arm.name;
      std::string p = "p_" + arm.name;
      auto a = s_.scope(keyword + (keyword == "if" ? " " : " if ") + "(const auto *" + p +
                        " = std::get_if<" + variant + ">(&(" + subject + ").value)) {");
      if (!arm.binder.empty())
        s_.line("const " + variant + " &" + handleCpp(arm.binder) + " = *" + p + ";");
      else
        s_.line("(void)" + p + ";");
      emitSteps(arm.children);
      keyword = "else";
    }
    if (fallback) {
      auto a = s_.scope(keyword == "if" ? "{" : "else {");
      emitSteps(fallback->children);
    }
  }

  /// `Some x` when the optional (std::optional, or a pointer for data) holds
  /// a value, `None` (or `_`) otherwise.
  void matchOptional(const UnfoldStep &s) {
    std::string subject = valueCpp(s.values[0]);
    const UnfoldStep *some = nullptr, *none = nullptr, *fallback = nullptr;
    for (const UnfoldStep &arm : s.children)
      (arm.name == "Some" ? some : arm.name == "None" ? none : fallback) = &arm;
    if (!some)
      some = fallback;
    if (!none)
      none = fallback;
    {
      auto present = s_.scope("if (" + subject + ") {");
      if (some && some->name == "Some" && !some->binder.empty())
        s_.line("const auto &" + handleCpp(some->binder) + " = *" + subject + ";");
      if (some)
        emitSteps(some->children);
    }
    if (none) {
      auto absent = s_.scope("else {");
      emitSteps(none->children);
    }
  }

  // ------------------------------------------------------------ combinators
  /// Emits a body's steps and gives the C++ of its yielded value.
  std::string body(const UnfoldStep &loop) {
    std::string yielded;
    for (const UnfoldStep &s : loop.children) {
      if (s.kind == UnfoldStep::Kind::Yield)
        yielded = valueCpp(s.values[0]);
      else
        emitStep(s);
    }
    if (yielded.empty())
      throw CodegenError("the block given to `" + loop.name + "` is not generated yet");
    return yielded;
  }

  void combinator(const UnfoldStep &s) {
    std::string id = handleCpp(s.target);
    const std::string &name = s.name;
    if (name == "map") {
      s_.line(valueType(s.type) + " " + id + ";");
      auto loop = s_.scope("for (const auto &" + id + "_x : " + valueCpp(s.values[0]) + ") {");
      std::string each = body(s);
      s_.line(id + ".push_back(" + each + ");");
    } else if (name == "zip_with") {
      s_.line(valueType(s.type) + " " + id + ";");
      auto outer = s_.scope("{");
      s_.line("const auto &" + id + "_xs = " + valueCpp(s.values[0]) + ";");
      s_.line("const auto &" + id + "_ys = " + valueCpp(s.values[1]) + ";");
      auto loop = s_.scope("for (size_t " + id + "_k = 0; " + id + "_k < std::min(" + id +
                           "_xs.size(), " + id + "_ys.size()); ++" + id + "_k) {");
      s_.line("const auto &" + id + "_x = " + id + "_xs[" + id + "_k];");
      s_.line("const auto &" + id + "_y = " + id + "_ys[" + id + "_k];");
      std::string each = body(s);
      s_.line(id + ".push_back(" + each + ");");
    } else if (name == "fold") {
      s_.line(valueType(s.type) + " " + id + "_state = " + valueCpp(s.values[0]) + ";");
      {
        auto loop = s_.scope("for (const auto &" + id + "_x : " + valueCpp(s.values[1]) + ") {");
        std::string each = body(s);
        s_.line(id + "_state = " + each + ";");
      }
      s_.line("const " + valueType(s.type) + " " + id + " = " + id + "_state;");
    } else if (name == "rnn") {
      const TypeRef &outputs = s.type->elements[0], &state = s.type->elements[1];
      s_.line(valueType(outputs) + " " + id + "_ys;");
      s_.line(valueType(state) + " " + id + "_state = " + valueCpp(s.values[0]) + ";");
      {
        auto loop = s_.scope("for (const auto &" + id + "_x : " + valueCpp(s.values[1]) + ") {");
        std::string each = body(s);
        s_.line("const auto " + id + "_step = " + each + ";");
        s_.line(id + "_ys.push_back(std::get<0>(" + id + "_step));");
        s_.line(id + "_state = std::get<1>(" + id + "_step);");
      }
      s_.line("const auto " + id + " = std::make_tuple(" + id + "_ys, " + id + "_state);");
    } else if (name == "reduce") {
      reduce(s, id);
    } else {
      throw CodegenError("the combinator `" + name + "` is not generated yet");
    }
  }

  /// Fold's Reduce: neighbours paired level by level, an odd last element
  /// carried up; empty gives the default (an error without one).
  void reduce(const UnfoldStep &s, const std::string &id) {
    std::string type = valueType(s.type);
    const StepValue &list = s.values.back();
    s_.line("std::vector<" + type + "> " + id + "_level = " + valueCpp(list) + ";");
    {
      auto level = s_.scope("while (" + id + "_level.size() > 1) {");
      s_.line("std::vector<" + type + "> " + id + "_next;");
      {
        auto pairs = s_.scope("for (size_t " + id + "_k = 0; " + id + "_k + 1 < " + id +
                              "_level.size(); " + id + "_k += 2) {");
        s_.line("const auto &" + id + "_a = " + id + "_level[" + id + "_k];");
        s_.line("const auto &" + id + "_b = " + id + "_level[" + id + "_k + 1];");
        std::string each = body(s);
        s_.line(id + "_next.push_back(" + each + ");");
      }
      s_.line("if (" + id + "_level.size() % 2 == 1) " + id + "_next.push_back(" + id +
              "_level.back());");
      s_.line(id + "_level = std::move(" + id + "_next);");
    }
    std::string empty = s.values.size() == 2
                            ? valueCpp(s.values[0])
                            : "foldc::rt::emptyReduce<" + type + ">()";
    s_.line("const " + type + " " + id + " = " + id + "_level.empty() ? " + empty + " : " + id +
            "_level[0];");
  }

  /// sum, max, min, mean or softmax across a sequence, by the runtime's
  /// pairwise loops over the step's helper kernels.
  void sequence(const UnfoldStep &s) {
    std::string call = s.name == "mean"      ? "sequenceMean"
                       : s.name == "softmax" ? "sequenceSoftmax"
                                             : "sequencePairwise";
    if (s.helpers.empty())
      throw CodegenError("`" + s.name + "` across a sequence is not generated yet");
    std::string args = "graph, " + valueCpp(s.values[0]);
    for (int helper : s.helpers) {
      int index = kernelIndex_[size_t(helper)];
      if (index < 0)
        throw CodegenError("internal: kernel " + plan_.kernels[size_t(helper)].name + " not generated");
      args += ", *kernels_[" + str(index) + "]";
    }
    s_.line("const " + valueType(s.type) + " " + handleCpp(s.target) + " = foldc::rt::" + call +
            "(" + args + ");");
  }

  void structural(const UnfoldStep &s) {
    std::string id = handleCpp(s.target);
    std::vector<std::string> args;
    for (const StepValue &v : s.values)
      args.push_back(valueCpp(v));
    std::string value;
    if (s.name == "list") {
      value = valueType(s.type) + "{" + commaSeparated(args, std::identity()) + "}";
    } else if (s.name == "call") {
      throw CodegenError("`" + s.text + "`: calling a block parameter is generated only in defs "
                         "that are inlined (no match, if, loops or recursion) yet");
    } else {
      value = listBuiltin(s.name, args);
    }
    s_.line("const " + valueType(s.type) + " " + id + " = " + value + ";");
  }

  // ------------------------------------------------------------ values
  std::string valueCpp(const StepValue &v) const {
    switch (v.kind) {
    case StepValue::Kind::Handle: return handleCpp(v.name);
    case StepValue::Kind::KernelResult: {
      const KernelPlan &k = plan_.kernels[size_t(v.kernel)];
      for (size_t j = 0; j < k.results.size(); ++j)
        if (k.results[j].first == v.op)
          return "foldc::rt::ValueRef{" + instanceName(k) + ", " + str(int64_t(j)) + "}";
      throw CodegenError("internal: kernel " + k.name + " does not give %" + str(v.op));
    }
    case StepValue::Kind::Host: return hostCpp(v.host);
    case StepValue::Kind::Tuple:
      return valueType(v.type) + "{" +
             commaSeparated(v.elements, [&](const StepValue &e) { return valueCpp(e); }) + "}";
    }
    return "";
  }

  std::string hostCpp(const HostExprRef &e) const {
    switch (e->kind) {
    case HostExpr::Kind::Name: return handleCpp(e->text);
    case HostExpr::Kind::Literal: return e->text;
    case HostExpr::Kind::Field: return fieldCpp(*e);
    case HostExpr::Kind::List:
      return valueType(e->type) + "{" +
             commaSeparated(e->operands, [&](const HostExprRef &x) { return hostCpp(x); }) + "}";
    case HostExpr::Kind::Binary:
      return "(" + hostCpp(e->operands[0]) + " " + e->text + " " + hostCpp(e->operands[1]) + ")";
    case HostExpr::Kind::Call: return hostCall(*e);
    case HostExpr::Kind::HostCall: // lists convert to whatever vector the function takes
      return e->text + "(" + commaSeparated(e->operands, [&](const HostExprRef &x) {
               return x->type->kind == TypeKind::List ? "foldc::rt::hostList(" + hostCpp(x) + ")"
                                                      : hostCpp(x);
             }) + ")";
    case HostExpr::Kind::Unsupported:
      break;
    }
    throw CodegenError("the host expression `" + e->text + "` is not generated yet");
  }

  std::string hostCall(const HostExpr &e) const {
    std::vector<std::string> args;
    for (const HostExprRef &x : e.operands)
      args.push_back(hostCpp(x));
    return listBuiltin(e.text, args);
  }

  /// The list builtins, on host lists and on lists of handles alike.
  static std::string listBuiltin(const std::string &name, const std::vector<std::string> &args) {
    if (name == "length")
      return "int64_t((" + args[0] + ").size())";
    if (name == "nth" || name == "zip")
      return "foldc::rt::" + name + "(" + args[0] + ", " + args[1] + ")";
    if (name == "index") // xs[i]
      return "foldc::rt::nth(" + args[1] + ", " + args[0] + ")";
    if (name == "slice") // xs[lo:hi], xs[lo:]
      return "foldc::rt::sliceList(" + args[0] + ", " + args[1] +
             (args.size() > 2 ? ", " + args[2] : std::string()) + ")";
    return "foldc::rt::ngrams<" + args[0] + ">(" + args[1] + ")";
  }

  /// `base.field`; a field every variant of a union has is read through
  /// std::visit; data fields are held through pointers.
  std::string fieldCpp(const HostExpr &e) const {
    const HostExpr &base = *e.operands[0];
    std::string access;
    if (base.type->kind == TypeKind::Data && base.type->variant < 0 && !base.type->data->isRecord)
      access = "std::visit([](const auto &v) -> const auto & { return v." + e.text + "; }, (" +
               hostCpp(e.operands[0]) + ").value)";
    else
      access = hostCpp(e.operands[0]) + "." + e.text;
    return e.type->kind == TypeKind::Data ? "(*" + access + ")" : access;
  }

  const TypedProgram &program_;
  const BatchPlan &plan_;
  const std::vector<int> &kernelIndex_;
  Emitter &h_, &s_;
  std::vector<std::string> metrics_;
  std::map<std::string, int> metricIds_;
  TypeRef outputType_;
  int lambdaDepth_ = 0;
};

} // namespace

void emitModel(const TypedProgram &program, const BatchPlan &plan,
               const std::vector<int> &kernelIndex, Emitter &header, Emitter &source) {
  ModelEmitter(program, plan, kernelIndex, header, source).run();
}

} // namespace foldc
