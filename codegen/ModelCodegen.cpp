// The model class: unfolding functions from the plan's steps (see ModelCodegen.h).
#include "codegen/ModelCodegen.h"

#include "codegen/DataCodegen.h"
#include "codegen/KernelCodegen.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

namespace foldc {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// Before a declaration the program may not read (a let nobody uses, a
/// binder or loop element a block ignores).
const std::string kUnused = "[[maybe_unused]] ";

std::string doubleLiteral(double v) {
  std::ostringstream out;
  out.precision(17);
  out << "double(" << v << ")";
  return out.str();
}

class ModelEmitter {
public:
  ModelEmitter(const BatchPlan &plan, const CppNames &names, const std::string &cppNamespace,
               const std::vector<int> &kernelIndex, Emitter &header, Emitter &source)
      : plan_(plan), names_(names), scope_(cppNamespace + "::"), kernelIndex_(kernelIndex),
        h_(header), s_(source) {}

  void run() {
    const FunctionPlan *model = plan_.modelFunction();
    if (!model)
      return;
    declareClass(*model);
    defineConstructor();
    for (const FunctionPlan &f : plan_.functions)
      defineFunction(f);
    defineOutputJson();
  }

private:
  /// The C++ type holding a value of `type` during unfolding: tensors are
  /// handles (rt::ValueRef), host values the data types' C++ types.
  std::string valueType(const TypeRef &type) const {
    switch (type->kind) {
    case TypeKind::Tensor:
      return "foldc::rt::ValueRef";
    case TypeKind::Tuple:
      return "std::tuple<" +
             commaSeparated(type->elements, [&](const TypeRef &t) { return valueType(t); }) + ">";
    case TypeKind::List:
      return "std::vector<" + valueType(type->element0()) + ">";
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::String:
    case TypeKind::Optional:
    case TypeKind::Data:
    case TypeKind::Block:
    case TypeKind::Error:
      return cppHostType(plan_, names_, type, scope_);
    }
    return cppHostType(plan_, names_, type, scope_);
  }

  /// How a function takes a parameter of `type`: host aggregates by reference.
  std::string paramType(const TypeRef &type) const {
    bool aggregate = type->kind == TypeKind::Data || type->kind == TypeKind::List ||
                     type->kind == TypeKind::String || type->kind == TypeKind::Tuple;
    return aggregate ? "const " + valueType(type) + " &" : valueType(type) + " ";
  }

  // ------------------------------------------------------------ the class
  void declareClass(const FunctionPlan &model) {
    std::string base = "foldc::rt::ModelBase<Model, " + valueType(plan_.exampleType) + ", " +
                       valueType(plan_.outputType) + ">";
    h_.line("/// The `" + model.name + "` model: unfolds examples into batched kernel instances;");
    h_.line("/// init/load/save/infer/train_step/eval come from foldc::rt::ModelBase.");
    auto c = h_.scope("class Model : public " + base + " {", "};");
    h_.line("public:");
    h_.line("Model();");
    h_.line("/// Records one example's instances, losses and metrics; gives its output.");
    h_.line(resultType(model, "Output") + " unfold(const Example &" +
            names_.local(model, model.params[0]) + ", foldc::rt::BatchGraph &graph) const;");
    h_.line("/// The output of an example after a forward pass, as JSON.");
    h_.line("nlohmann::json outputJson(const foldc::rt::Executor &executor, const Output &output) "
            "const;");
    h_.line();
    h_.line("private:");
    for (const FunctionPlan &f : plan_.functions)
      if (!f.isModel)
        h_.line(signature(f, "") + ";");
  }

  void defineConstructor() {
    auto c = s_.scope("Model::Model() {");
    s_.line("declareParams(params_);");
    s_.line("kernels_ = makeKernels(params_);");
    s_.line("metricNames_ = {" +
            commaSeparated(plan_.metrics, [](const std::string &m) { return "\"" + m + "\""; }) +
            "};");
  }

  std::string signature(const FunctionPlan &fn, const std::string &qualifier) const {
    std::string params;
    for (int p : fn.params) // a def need not read every parameter
      params += kUnused + paramType(fn.locals[size_t(p)].type) + names_.local(fn, p) + ", ";
    return resultType(fn, valueType(fn.result)) + " " + qualifier + names_.function(fn) + "(" +
           params + "foldc::rt::BatchGraph &graph) const";
  }

  /// What a function gives: `result`, or a coroutine giving it when the
  /// function's unfolding waits on computed values.
  static std::string resultType(const FunctionPlan &fn, const std::string &result) {
    return fn.suspends ? "foldc::rt::Task<" + result + ">" : result;
  }
  /// `return` or, in a coroutine, `co_return`.
  std::string returnKeyword() const { return fn_->suspends ? "co_return " : "return "; }

  // ------------------------------------------------------------ output
  void defineOutputJson() {
    bool readsTensors = containsTensor(plan_.outputType);
    // A model without `output` has the empty tuple, whose JSON reads nothing.
    bool readsOutput = holdsValues(plan_.outputType);
    auto f = s_.scope(std::string("nlohmann::json Model::outputJson(const foldc::rt::Executor &") +
                      (readsTensors ? "executor" : "/*executor*/") + ", const Output &" +
                      (readsOutput ? "output" : "/*output*/") + ") const {");
    s_.line("return " + jsonOf(plan_.outputType, "output") + ";");
  }

  /// False for tuples of nothing (nested or not): their JSON reads no value.
  static bool holdsValues(const TypeRef &type) {
    return type->kind != TypeKind::Tuple ||
           std::any_of(type->elements.begin(), type->elements.end(), holdsValues);
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
      std::string v = "e" + str(int64_t(lambdaDepth_++)) + "_";
      std::string out = "[&] { nlohmann::json a = nlohmann::json::array(); for (const auto &" + v +
                        " : " + value + ") a.push_back(" + jsonOf(type->element0(), v) +
                        "); return a; }()";
      --lambdaDepth_;
      return out;
    }
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::String:
    case TypeKind::Optional:
    case TypeKind::Data:
    case TypeKind::Block:
    case TypeKind::Error: // host scalars (lowering allows nothing else)
      return "nlohmann::json(" + value + ")";
    }
    return "nlohmann::json(" + value + ")";
  }

  // ------------------------------------------------------------ functions
  void defineFunction(const FunctionPlan &f) {
    fn_ = &f;
    if (f.isModel) {
      auto body = s_.scope(
          resultType(f, "Model::Output") + " Model::unfold([[maybe_unused]] const Example &" +
          names_.local(f, f.params[0]) + ", foldc::rt::BatchGraph &graph) const {");
      s_.line("Output output{};");
      s_.line("(void)graph; // unused when the model computes on host values only");
      emitSteps(f.steps);
      s_.line(returnKeyword() + "output;");
    } else {
      auto body = s_.scope(signature(f, "Model::") + " {");
      s_.line("(void)graph;");
      emitSteps(f.steps);
    }
    s_.line();
  }

  std::string local(int l) const { return names_.local(*fn_, l); }
  /// A generated temporary of step target `target`.
  std::string temp(int target, const std::string &what) const { return local(target) + what + "_"; }

  void emitSteps(const std::vector<UnfoldStep> &steps) {
    for (const UnfoldStep &s : steps)
      emitStep(s);
  }

  void emitStep(const UnfoldStep &s) {
    switch (s.kind) {
    case UnfoldStep::Kind::Instance:
      return instance(plan_.kernels[size_t(s.kernel)]);
    case UnfoldStep::Kind::Call: {
      std::string args;
      for (const StepValue &v : s.values)
        args += valueCpp(v) + ", ";
      const FunctionPlan &callee = plan_.functions[size_t(s.function)];
      s_.line(kUnused + "const auto " + local(s.target) + " = " +
              (callee.suspends ? "co_await " : "") + names_.function(callee) + "(" + args +
              "graph);");
      return;
    }
    case UnfoldStep::Kind::Read:
      return read(s);
    case UnfoldStep::Kind::Combinator:
      return combinator(s);
    case UnfoldStep::Kind::Structural:
      return structural(s);
    case UnfoldStep::Kind::Match:
      return match(s);
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
      s_.line(local(s.target) + " = " + valueCpp(s.values[0]) + ";");
      return;
    case UnfoldStep::Kind::Return:
      s_.line(returnKeyword() + valueCpp(s.values[0]) + ";");
      return;
    case UnfoldStep::Kind::Role:
      return role(s.role, s.metric, valueCpp(s.values[0]));
    case UnfoldStep::Kind::Sequence:
      return sequence(s);
    case UnfoldStep::Kind::Segment:
      s_.line(kUnused + "const " + valueType(s.type) + " " + local(s.target) +
              " = foldc::rt::segmentReduce(graph, *kernels_[" +
              str(kernelIndex_[size_t(s.kernel)]) + "], " + valueCpp(s.values[0]) + ", " +
              valueCpp(s.values[1]) + ", " + valueCpp(s.values[2]) + ", \"" +
              std::string(opInfo(plan_.kernels[size_t(s.kernel)].ops[0].kind).name) + "\");");
      return;
    case UnfoldStep::Kind::Arm:
    case UnfoldStep::Kind::Yield:
      break; // inside Match / Combinator
    }
  }

  /// A loss, the output or a metric of a value.
  void role(ResultRole role, int metric, const std::string &value) {
    switch (role) {
    case ResultRole::Loss:
      s_.line("graph.addLoss(" + value + ");");
      return;
    case ResultRole::Output:
      s_.line("output = " + value + ";");
      return;
    case ResultRole::Metric:
      s_.line("graph.addMetric(" + str(metric) + ", " + value + ");  // metric " +
              plan_.metrics[size_t(metric)]);
      return;
    case ResultRole::Value:
      return;
    }
  }

  /// `graph.add` of the kernel with its arguments and host values, then its
  /// losses, metrics and output.
  void instance(const KernelPlan &k) {
    int index = kernelIndex_[size_t(k.id)];
    std::string args = commaSeparated(k.argValues, [&](const StepValue &v) { return valueCpp(v); });
    std::string ints;
    std::vector<HostSlot> slots = hostLayout(k);
    std::string floats = CppNames::instance(k) + "floats_";
    bool anyFloats = false;
    for (size_t h = 0; h < slots.size(); ++h) {
      std::string value = hostCpp(*k.hostInputs[h].expr);
      if (slots[h].isInt) {
        ints += (ints.empty() ? "" : ", ") + ("foldc::rt::hostInt(" + value + ")");
        continue;
      }
      if (!anyFloats)
        s_.line("std::vector<float> " + floats + ";");
      anyFloats = true;
      if (k.hostInputs[h].type->kind == TypeKind::List)
        s_.line("foldc::rt::appendVector(" + floats + ", " + value + ", " + str(slots[h].count) +
                ");");
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
    // A kernel none of whose results is read still runs (its data checks,
    // its place among the example's instances).
    s_.line((k.results.empty() ? kUnused : "") + "const int32_t " + CppNames::instance(k) + " = " +
            call + ";");
    for (size_t j = 0; j < k.results.size(); ++j)
      role(k.results[j].role, k.results[j].metric,
           "foldc::rt::ValueRef{" + CppNames::instance(k) + ", " + str(int64_t(j)) + "}");
  }

  /// The variable a match or if assigns in each arm.
  void declareResult(const UnfoldStep &s) {
    s_.line(kUnused + valueType(s.type) + " " + local(s.target) + "{};");
  }

  void match(const UnfoldStep &s) {
    declareResult(s);
    const StepValue &scrutinee = s.values[0];
    if (scrutinee.type->kind == TypeKind::Optional)
      return matchOptional(s);
    const PlanDataType &data = plan_.dataType(*scrutinee.type);
    std::string subject = valueCpp(scrutinee);
    std::string keyword = "if";
    const UnfoldStep *fallback = nullptr;
    for (const UnfoldStep &arm : s.children) {
      if (arm.arm == UnfoldStep::ArmKind::Default) {
        fallback = &arm;
        continue;
      }
      std::string variant =
          scope_ + names_(data.name) + "::" + names_(data.variants[size_t(arm.variant)].name);
      std::string p = temp(s.target, "p" + str(arm.variant));
      auto a = s_.scope(keyword + (keyword == "if" ? " " : " if ") + "(const auto *" + p +
                        " = std::get_if<" + variant + ">(&(" + subject + ").value)) {");
      if (arm.binder >= 0)
        s_.line(kUnused + "const " + variant + " &" + local(arm.binder) + " = *" + p + ";");
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
      (arm.arm == UnfoldStep::ArmKind::Some   ? some
       : arm.arm == UnfoldStep::ArmKind::None ? none
                                              : fallback) = &arm;
    if (!some)
      some = fallback;
    if (!none)
      none = fallback;
    {
      auto present = s_.scope("if (" + subject + ") {");
      if (some && some->binder >= 0)
        s_.line(kUnused + "const auto &" + local(some->binder) + " = *" + subject + ";");
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
    return yielded;
  }

  void combinator(const UnfoldStep &s) {
    std::string id = local(s.target);
    auto var = [&](size_t i) { return local(s.loopLocals[i]); };
    auto t = [&](const char *what) { return temp(s.target, what); };
    switch (s.combinator) {
    case CombinatorKind::Map: {
      s_.line(valueType(s.type) + " " + id + ";");
      auto loop = s_.scope("for (" + kUnused + "const auto &" + var(0) + " : " +
                           valueCpp(s.values[0]) + ") {");
      std::string each = body(s);
      s_.line(id + ".push_back(" + each + ");");
      return;
    }
    case CombinatorKind::ZipWith: {
      s_.line(valueType(s.type) + " " + id + ";");
      auto outer = s_.scope("{");
      s_.line("const auto &" + t("xs") + " = " + valueCpp(s.values[0]) + ";");
      s_.line("const auto &" + t("ys") + " = " + valueCpp(s.values[1]) + ";");
      s_.line("foldc::rt::requireSameLength(\"zip_with\", " + std::to_string(s.range.begin.line) +
              ", " + t("xs") + ".size(), " + t("ys") + ".size());");
      auto loop = s_.scope("for (size_t " + t("k") + " = 0; " + t("k") + " < " + t("xs") +
                           ".size(); ++" + t("k") + ") {");
      s_.line(kUnused + "const auto &" + var(0) + " = " + t("xs") + "[" + t("k") + "];");
      s_.line(kUnused + "const auto &" + var(1) + " = " + t("ys") + "[" + t("k") + "];");
      std::string each = body(s);
      s_.line(id + ".push_back(" + each + ");");
      return;
    }
    case CombinatorKind::Fold: {
      s_.line(valueType(s.type) + " " + t("state") + " = " + valueCpp(s.values[0]) + ";");
      {
        auto loop = s_.scope("for (" + kUnused + "const auto &" + var(1) + " : " +
                             valueCpp(s.values[1]) + ") {");
        s_.line(kUnused + "const auto " + var(0) + " = " + t("state") + ";");
        std::string each = body(s);
        s_.line(t("state") + " = " + each + ";");
      }
      s_.line(kUnused + "const " + valueType(s.type) + " " + id + " = " + t("state") + ";");
      return;
    }
    case CombinatorKind::Rnn: {
      const TypeRef &outputs = s.type->elements[0], &state = s.type->elements[1];
      s_.line(valueType(outputs) + " " + t("ys") + ";");
      s_.line(valueType(state) + " " + t("state") + " = " + valueCpp(s.values[0]) + ";");
      {
        auto loop = s_.scope("for (" + kUnused + "const auto &" + var(0) + " : " +
                             valueCpp(s.values[1]) + ") {");
        s_.line(kUnused + "const auto " + var(1) + " = " + t("state") + ";");
        std::string each = body(s);
        s_.line("const auto " + t("step") + " = " + each + ";");
        s_.line(t("ys") + ".push_back(std::get<0>(" + t("step") + "));");
        s_.line(t("state") + " = std::get<1>(" + t("step") + ");");
      }
      s_.line(kUnused + "const auto " + id + " = std::make_tuple(" + t("ys") + ", " + t("state") +
              ");");
      return;
    }
    case CombinatorKind::Reduce:
      return reduce(s);
    case CombinatorKind::Loop:
      return loop(s);
    case CombinatorKind::Beam:
      return beam(s);
    }
  }

  /// Waits until the executor has computed a scalar, then reads it.
  void read(const UnfoldStep &s) {
    std::string ref = valueCpp(s.values[0]);
    bool integral = s.type->kind == TypeKind::Int;
    s_.line(kUnused + "const " + valueType(s.type) + " " + local(s.target) +
            " = foldc::rt::" + (integral ? "computedInt" : "computedFloat") +
            "(co_await foldc::rt::untilComputed(" + ref + "));");
  }

  /// loop(step, init, max): the step's (go on, output, state) until it says
  /// stop or max iterations ran.
  void loop(const UnfoldStep &s) {
    auto t = [&](const char *what) { return temp(s.target, what); };
    const TypeRef &outputs = s.type->elements[0], &state = s.type->elements[1];
    s_.line(valueType(outputs) + " " + t("ys") + ";");
    s_.line(valueType(state) + " " + t("state") + " = " + valueCpp(s.values[0]) + ";");
    s_.line("const int64_t " + t("max") + " = foldc::rt::loopBound(\"loop\", " +
            valueCpp(s.values[1]) + ");");
    {
      auto iterations = s_.scope("for (int64_t " + t("n") + " = 0; " + t("n") + " < " + t("max") +
                                 "; ++" + t("n") + ") {");
      s_.line(kUnused + "const auto " + local(s.loopLocals[0]) + " = " + t("state") + ";");
      std::string each = body(s);
      s_.line("const auto " + t("step") + " = " + each + ";");
      s_.line("if (!std::get<0>(" + t("step") + ")) break;");
      s_.line(t("ys") + ".push_back(std::get<1>(" + t("step") + "));");
      s_.line(t("state") + " = std::get<2>(" + t("step") + ");");
    }
    s_.line(kUnused + "const " + valueType(s.type) + " " + local(s.target) + "{" + t("ys") + ", " +
            t("state") + "};");
  }

  /// beam(step, init, start, end, width, max): each round the step runs for
  /// every live hypothesis; their scores are waited for together.
  void beam(const UnfoldStep &s) {
    auto t = [&](const char *what) { return temp(s.target, what); };
    std::string state = valueType(s.values[0].type);
    s_.line("foldc::rt::BeamSearch<" + state + "> " + t("beam") + "(" +
            commaSeparated(s.values, [&](const StepValue &v) { return valueCpp(v); }) + ");");
    {
      auto rounds = s_.scope("while (" + t("beam") + ".searching()) {");
      s_.line("std::vector<foldc::rt::ValueRef> " + t("scores") + ";");
      s_.line("std::vector<" + state + "> " + t("next") + ";");
      {
        auto hypotheses = s_.scope("for (size_t " + t("k") + " = 0; " + t("k") + " < " + t("beam") +
                                   ".size(); ++" + t("k") + ") {");
        s_.line(kUnused + "const auto " + local(s.loopLocals[0]) + " = " + t("beam") + ".state(" +
                t("k") + ");");
        s_.line(kUnused + "const int64_t " + local(s.loopLocals[1]) + " = " + t("beam") +
                ".token(" + t("k") + ");");
        std::string each = body(s);
        s_.line("const auto " + t("step") + " = " + each + ";");
        s_.line(t("scores") + ".push_back(std::get<0>(" + t("step") + "));");
        s_.line(t("next") + ".push_back(std::get<1>(" + t("step") + "));");
      }
      s_.line("const auto " + t("logp") + " = co_await foldc::rt::untilComputed(" + t("scores") +
              ");");
      s_.line(t("beam") + ".advance(" + t("logp") + ", std::move(" + t("next") + "));");
    }
    s_.line(kUnused + "const " + valueType(s.type) + " " + local(s.target) + " = " + t("beam") +
            ".best();");
  }

  /// Fold's Reduce: neighbours paired level by level, an odd last element
  /// carried up; empty gives the default (an error without one).
  void reduce(const UnfoldStep &s) {
    std::string type = valueType(s.type);
    auto t = [&](const char *what) { return temp(s.target, what); };
    const StepValue &list = s.values.back();
    s_.line("std::vector<" + type + "> " + t("level") + " = " + valueCpp(list) + ";");
    {
      auto level = s_.scope("while (" + t("level") + ".size() > 1) {");
      s_.line("std::vector<" + type + "> " + t("next") + ";");
      {
        auto pairs = s_.scope("for (size_t " + t("k") + " = 0; " + t("k") + " + 1 < " + t("level") +
                              ".size(); " + t("k") + " += 2) {");
        s_.line(kUnused + "const auto &" + local(s.loopLocals[0]) + " = " + t("level") + "[" +
                t("k") + "];");
        s_.line(kUnused + "const auto &" + local(s.loopLocals[1]) + " = " + t("level") + "[" +
                t("k") + " + 1];");
        std::string each = body(s);
        s_.line(t("next") + ".push_back(" + each + ");");
      }
      s_.line("if (" + t("level") + ".size() % 2 == 1) " + t("next") + ".push_back(" + t("level") +
              ".back());");
      s_.line(t("level") + " = std::move(" + t("next") + ");");
    }
    std::string empty =
        s.values.size() == 2 ? valueCpp(s.values[0]) : "foldc::rt::emptyReduce<" + type + ">()";
    s_.line(kUnused + "const " + type + " " + local(s.target) + " = " + t("level") + ".empty() ? " +
            empty + " : " + t("level") + "[0];");
  }

  /// sum, max, min, mean or softmax across a sequence, by the runtime's
  /// pairwise loops over the step's helper kernels.
  void sequence(const UnfoldStep &s) {
    std::string call = s.sequence == SequenceKind::Mean      ? "sequenceMean"
                       : s.sequence == SequenceKind::Softmax ? "sequenceSoftmax"
                                                             : "sequencePairwise";
    std::string args = "graph, " + valueCpp(s.values[0]);
    for (int helper : s.helpers)
      args += ", *kernels_[" + str(kernelIndex_[size_t(helper)]) + "]";
    s_.line(kUnused + "const " + valueType(s.type) + " " + local(s.target) +
            " = foldc::rt::" + call + "(" + args + ");");
  }

  void structural(const UnfoldStep &s) {
    std::vector<std::string> args;
    for (const StepValue &v : s.values)
      args.push_back(valueCpp(v));
    std::string value =
        s.listOp == ListOp::List
            ? valueType(s.type) + "{" + commaSeparated(args, std::identity()) + "}"
            : listOp(s.listOp, args, s.values.empty() ? nullptr : s.values[0].host.get());
    s_.line(kUnused + "const " + valueType(s.type) + " " + local(s.target) + " = " + value + ";");
  }

  // ------------------------------------------------------------ values
  std::string handleCpp(const Handle &h) const {
    std::string out = local(h.local);
    for (int i : h.path)
      out = "std::get<" + str(i) + ">(" + out + ")";
    return out;
  }

  std::string valueCpp(const StepValue &v) const {
    switch (v.kind) {
    case StepValue::Kind::Handle:
      return handleCpp(v.handle);
    case StepValue::Kind::KernelResult: {
      const KernelPlan &k = plan_.kernels[size_t(v.kernel)];
      return "foldc::rt::ValueRef{" + CppNames::instance(k) + ", " + str(k.valueResult(v.op)) + "}";
    }
    case StepValue::Kind::Host:
      return hostCpp(*v.host);
    case StepValue::Kind::Tuple:
      return valueType(v.type) + "{" +
             commaSeparated(v.elements, [&](const StepValue &e) { return valueCpp(e); }) + "}";
    }
    return "";
  }

  std::string literal(const HostExpr &e) const {
    switch (e.type->kind) {
    case TypeKind::Int:
      return "int64_t(" + str(e.integer) + ")";
    case TypeKind::Bool:
      return e.integer ? "true" : "false";
    case TypeKind::String:
      return stringLiteral(e.text);
    case TypeKind::Float:
    case TypeKind::Tensor:
    case TypeKind::Tuple:
    case TypeKind::List:
    case TypeKind::Optional:
    case TypeKind::Data:
    case TypeKind::Block:
    case TypeKind::Error:
      return doubleLiteral(e.number);
    }
    return doubleLiteral(e.number);
  }

  std::string hostCpp(const HostExpr &e) const {
    auto operand = [&](size_t i) { return hostCpp(*e.operands[i]); };
    switch (e.kind) {
    case HostExpr::Kind::Local:
      return handleCpp(e.handle);
    case HostExpr::Kind::Literal:
      return literal(e);
    case HostExpr::Kind::Field:
      return fieldCpp(e);
    case HostExpr::Kind::Element:
      return "std::get<" + str(e.integer) + ">(" + operand(0) + ")";
    case HostExpr::Kind::List:
      return valueType(e.type) + "{" +
             commaSeparated(e.operands, [&](const HostExprRef &x) { return hostCpp(*x); }) + "}";
    case HostExpr::Kind::Binary:
      return "(" + operand(0) + " " + std::string(spelling(e.hostOp)) + " " + operand(1) + ")";
    case HostExpr::Kind::Call: {
      std::vector<std::string> args;
      for (const HostExprRef &x : e.operands)
        args.push_back(hostCpp(*x));
      return listOp(e.listOp, args, e.operands.empty() ? nullptr : e.operands[0].get());
    }
    case HostExpr::Kind::HostCall: // lists convert to whatever vector the function takes
      return e.function + "(" +
             commaSeparated(e.operands,
                            [&](const HostExprRef &x) {
                              return x->type->kind == TypeKind::List
                                         ? "foldc::rt::hostList(" + hostCpp(*x) + ")"
                                         : hostCpp(*x);
                            }) +
             ")";
    }
    return "";
  }

  /// The list builtins, on host lists and on lists of handles alike. `first`
  /// is the first operand (ngrams' n, a literal: a template argument).
  static std::string listOp(ListOp op, const std::vector<std::string> &args,
                            const HostExpr *first) {
    switch (op) {
    case ListOp::Length:
      return "int64_t((" + args[0] + ").size())";
    case ListOp::Nth:
      return "foldc::rt::nth(" + args[0] + ", " + args[1] + ")";
    case ListOp::Zip:
      return "foldc::rt::zip(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
    case ListOp::Reverse:
      return "foldc::rt::reversed(" + args[0] + ")";
    case ListOp::Index:
      return "foldc::rt::nth(" + args[1] + ", " + args[0] + ")"; // xs[i]
    case ListOp::Slice:                                          // xs[lo:hi], xs[lo:]
      return "foldc::rt::sliceList(" + args[0] + ", " + args[1] +
             (args.size() > 2 ? ", " + args[2] : std::string()) + ")";
    case ListOp::Concat:
      return "foldc::rt::concatLists(" + commaSeparated(args, std::identity()) + ")";
    case ListOp::Ngrams:
      return "foldc::rt::ngrams<" + str(first->integer) + ">(" + args[1] + ")";
    case ListOp::Range:
      return "foldc::rt::range(" + args[0] + ")";
    case ListOp::Gather:
      return "foldc::rt::gather(" + args[0] + ", " + args[1] + ")";
    case ListOp::List:
      break;
    }
    return "";
  }

  /// `base.field`; a field every variant of a union has is read through
  /// std::visit; data fields are held through pointers.
  std::string fieldCpp(const HostExpr &e) const {
    const HostExpr &base = *e.operands[0];
    std::string field = names_(e.field), access;
    if (base.type->kind == TypeKind::Data && base.type->variant < 0 &&
        !plan_.dataType(*base.type).isRecord)
      access = "std::visit([](const auto &v) -> const auto & { return v." + field + "; }, (" +
               hostCpp(base) + ").value)";
    else
      access = hostCpp(base) + "." + field;
    return e.type->kind == TypeKind::Data ? "(*" + access + ")" : access;
  }

  const BatchPlan &plan_;
  const CppNames &names_;
  /// Prefix of data types: inside `class Model`, `Example` and `Output`
  /// name ModelBase's types, which a data type may also be called.
  std::string scope_;
  const std::vector<int> &kernelIndex_;
  Emitter &h_, &s_;
  const FunctionPlan *fn_ = nullptr;
  int lambdaDepth_ = 0;
};

} // namespace

void emitModel(const BatchPlan &plan, const CppNames &names, const std::string &cppNamespace,
               const std::vector<int> &kernelIndex, Emitter &header, Emitter &source) {
  ModelEmitter(plan, names, cppNamespace, kernelIndex, header, source).run();
}

} // namespace foldc
