// Structs and JSONL readers for data declarations.
#include "codegen/DataCodegen.h"

#include <algorithm>

namespace foldc {

namespace {

std::string quoted(const std::string &s) { return "\"" + s + "\""; }

std::string fieldList(const PlanDataType::Variant &variant) {
  return "{" + commaSeparated(variant.fields, [](const PlanField &f) { return quoted(f.name); }) +
         "}";
}

class DataEmitter {
public:
  DataEmitter(const BatchPlan &plan, const CppNames &names, Emitter &header, Emitter &source)
      : plan_(plan), names_(names), h_(header), s_(source) {}

  void run() {
    for (const PlanDataType &d : plan_.dataTypes)
      h_.line("struct " + names_(d.name) + ";");
    h_.line();
    for (const PlanDataType &d : plan_.dataTypes)
      declare(d);
    for (const PlanDataType &d : plan_.dataTypes) {
      defineReader(d);
      s_.line();
    }
    if (plan_.exampleType)
      defineExampleReader(plan_.exampleType);
  }

private:
  std::string hostType(const TypeRef &type) const { return cppHostType(plan_, names_, type); }

  /// A field of data type is held through a pointer: data types may be
  /// recursive (a Tree holds Trees).
  std::string fieldType(const TypeRef &type) const {
    if (type->kind == TypeKind::Data)
      return "std::unique_ptr<" + hostType(type) + ">";
    return hostType(type);
  }

  void declareFields(const PlanDataType::Variant &v) {
    for (const PlanField &f : v.fields)
      h_.line(fieldType(f.type) + " " + names_(f.name) + ";");
  }

  void declare(const PlanDataType &d) {
    std::string name = names_(d.name);
    {
      auto body = h_.scope("struct " + name + " {", "};");
      if (d.isRecord) {
        declareFields(d.variants[0]);
      } else {
        std::string alternatives;
        for (const PlanDataType::Variant &v : d.variants) {
          auto variant = h_.scope("struct " + names_(v.name) + " {", "};");
          declareFields(v);
          alternatives += (alternatives.empty() ? "" : ", ") + names_(v.name);
        }
        h_.line("std::variant<" + alternatives + "> value;");
      }
    }
    h_.line("/// Reads a " + d.name +
            " from JSON; a mismatch throws foldc::rt::DataError at `at`.");
    h_.line(name + " " + names_.reader(d) +
            "(const nlohmann::json &value, const foldc::rt::JsonPath &at);");
    h_.line();
  }

  /// A C++ expression reading `json` (at path expression `path`) as `type`.
  std::string reader(const TypeRef &type, const std::string &json, const std::string &path) {
    switch (type->kind) {
    case TypeKind::Int:
      return "foldc::rt::readInt(" + json + ", " + path + ")";
    case TypeKind::Float:
      return "foldc::rt::readFloat(" + json + ", " + path + ")";
    case TypeKind::Bool:
      return "foldc::rt::readBool(" + json + ", " + path + ")";
    case TypeKind::String:
      return "foldc::rt::readString(" + json + ", " + path + ")";
    case TypeKind::Data:
      return names_.reader(plan_.dataType(*type)) + "(" + json + ", " + path + ")";
    case TypeKind::List:
      return "foldc::rt::readList<" + hostType(type->element0()) + ">(" + json + ", " + path +
             ", [](const nlohmann::json &v, const foldc::rt::JsonPath &p) { return " +
             reader(type->element0(), "v", "p") + "; })";
    case TypeKind::Optional: {
      std::string present = reader(type->element0(), json, path);
      if (type->element0()->kind == TypeKind::Data) // held through a pointer, null for None
        present = "std::make_unique<" + hostType(type->element0()) + ">(" + present + ")";
      else
        present = hostType(type) + "(" + present + ")";
      return "(" + json + ".is_null() ? " + hostType(type) + "() : " + present + ")";
    }
    case TypeKind::Tuple: {
      std::string args;
      for (size_t i = 0; i < type->elements.size(); ++i)
        args += (i ? ", " : "") + reader(type->elements[i], "t[" + std::to_string(i) + "]",
                                         path + ".index(" + std::to_string(i) + ")");
      return "[&](const nlohmann::json &t) { return std::make_tuple(" + args +
             "); }(foldc::rt::readTupleArray(" + json + ", " + path + ", " +
             std::to_string(type->elements.size()) + "))";
    }
    case TypeKind::Tensor:
    case TypeKind::Block:
    case TypeKind::Error:
      return "/* not a host type */";
    }
    return "/* not a host type */";
  }

  /// Statements filling `target`'s fields from record JSON `json` at `path`.
  void readFields(const PlanDataType::Variant &v, const std::string &target,
                  const std::string &path) {
    std::string read = "foldc::rt::readRecord(*payload, " + path + ", " + fieldList(v) + ");";
    if (v.fields.empty()) { // still checked: no fields may be given
      s_.line(read);
      return;
    }
    s_.line("const nlohmann::json &fields = " + read);
    for (const PlanField &f : v.fields) {
      std::string read =
          reader(f.type, "fields[" + quoted(f.name) + "]", path + ".field(" + quoted(f.name) + ")");
      if (f.type->kind == TypeKind::Data)
        read = "std::make_unique<" + hostType(f.type) + ">(" + read + ")";
      s_.line(target + "." + names_(f.name) + " = " + read + ";");
    }
  }

  void defineReader(const PlanDataType &d) {
    std::string name = names_(d.name);
    auto fn = s_.scope(name + " " + names_.reader(d) +
                       "(const nlohmann::json &value, const foldc::rt::JsonPath &at) {");
    s_.line(name + " result;");
    if (d.isRecord) {
      s_.line("const nlohmann::json *payload = &value;");
      readFields(d.variants[0], "result", "at");
      s_.line("return result;");
      return;
    }
    s_.line("const nlohmann::json *payload = nullptr;");
    s_.line("std::string variant = foldc::rt::readVariant(value, at, payload);");
    std::string names;
    for (const PlanDataType::Variant &v : d.variants) {
      names += (names.empty() ? "" : ", ") + v.name;
      auto arm = s_.scope("if (variant == " + quoted(v.name) + ") {");
      s_.line(name + "::" + names_(v.name) + " alternative;");
      s_.line("foldc::rt::JsonPath in = at.field(" + quoted(v.name) + ");");
      readFields(v, "alternative", "in");
      s_.line("result.value = std::move(alternative);");
      s_.line("return result;");
    }
    s_.line("at.fail(\"expected one of the variants " + names +
            ", found \\\"\" + variant + \"\\\"\");");
  }

  void defineExampleReader(const TypeRef &input) {
    std::string type = hostType(input);
    h_.line("/// Reads one example from a JSON value (a line of data, a request's body).");
    h_.line(type + " exampleFromJson(const nlohmann::json &value, const foldc::rt::JsonPath &at);");
    {
      auto one = s_.scope(
          type + " exampleFromJson(const nlohmann::json &value, const foldc::rt::JsonPath &at) {");
      s_.line("return " + reader(input, "value", "at") + ";");
    }
    h_.line("/// Reads one example per line of a JSON Lines file.");
    h_.line("/// With `lines`, also records each example's line number there.");
    h_.line("std::vector<" + type +
            "> readExamples(const std::string &file, std::vector<long> *lines = nullptr);");
    auto fn = s_.scope("std::vector<" + type +
                       "> readExamples(const std::string &file, std::vector<long> *lines) {");
    s_.line("std::vector<" + type + "> examples;");
    {
      auto each = s_.scope("foldc::rt::forEachJsonLine(file, [&](const nlohmann::json &value, "
                           "const foldc::rt::JsonPath &at) {",
                           "});");
      s_.line("examples.push_back(exampleFromJson(value, at));");
      s_.line("if (lines) lines->push_back(at.line());");
    }
    s_.line("return examples;");
  }

  const BatchPlan &plan_;
  const CppNames &names_;
  Emitter &h_, &s_;
};

} // namespace

std::string cppHostType(const BatchPlan &plan, const CppNames &names, const TypeRef &type,
                        const std::string &scope) {
  auto recurse = [&](const TypeRef &t) { return cppHostType(plan, names, t, scope); };
  switch (type->kind) {
  case TypeKind::Int:
    return "int64_t";
  case TypeKind::Float:
    return "double";
  case TypeKind::Bool:
    return "bool";
  case TypeKind::String:
    return "std::string";
  case TypeKind::Data: {
    const PlanDataType &data = plan.dataType(*type);
    std::string name = scope + names(data.name);
    if (type->variant >= 0 && !data.isRecord)
      name += "::" + names(data.variants[size_t(type->variant)].name);
    return name;
  }
  case TypeKind::List:
    return "std::vector<" + recurse(type->element0()) + ">";
  case TypeKind::Optional:
    return type->element0()->kind == TypeKind::Data
               ? "std::unique_ptr<" + recurse(type->element0()) + ">"
               : "std::optional<" + recurse(type->element0()) + ">";
  case TypeKind::Tuple:
    return "std::tuple<" + commaSeparated(type->elements, recurse) + ">";
  case TypeKind::Tensor:
  case TypeKind::Block:
  case TypeKind::Error:
    throw std::logic_error("internal: " + toString(type) + " is not a host type");
  }
  return "std::tuple<" + commaSeparated(type->elements, recurse) + ">";
}

void emitDataTypes(const BatchPlan &plan, const CppNames &names, Emitter &header, Emitter &source) {
  DataEmitter(plan, names, header, source).run();
}

} // namespace foldc

namespace foldc {

namespace {

/// How a value of `type` is written in JSON, naming data types; collects the
/// data types it mentions in `mentioned` (first mention first).
std::string jsonShape(const BatchPlan &plan, const TypeRef &type,
                      std::vector<const PlanDataType *> &mentioned) {
  switch (type->kind) {
  case TypeKind::Int:
    return "int";
  case TypeKind::Float:
    return "float";
  case TypeKind::Bool:
    return "bool";
  case TypeKind::String:
    return "string";
  case TypeKind::List:
    return "[" + jsonShape(plan, type->element0(), mentioned) + ", ...]";
  case TypeKind::Optional:
    return jsonShape(plan, type->element0(), mentioned) + " or null";
  case TypeKind::Tuple:
    return "[" +
           commaSeparated(type->elements,
                          [&](const TypeRef &t) { return jsonShape(plan, t, mentioned); }) +
           "]";
  case TypeKind::Data: {
    const PlanDataType &d = plan.dataType(*type);
    if (std::find(mentioned.begin(), mentioned.end(), &d) == mentioned.end())
      mentioned.push_back(&d);
    return d.name;
  }
  case TypeKind::Tensor:
  case TypeKind::Block:
  case TypeKind::Error:
    return toString(type);
  }
  return toString(type);
}

std::string recordShape(const BatchPlan &plan, const PlanDataType::Variant &variant,
                        std::vector<const PlanDataType *> &mentioned) {
  return "{" +
         commaSeparated(variant.fields,
                        [&](const PlanField &f) {
                          return quoted(f.name) + ": " + jsonShape(plan, f.type, mentioned);
                        }) +
         "}";
}

} // namespace

std::string exampleFormat(const BatchPlan &plan) {
  std::vector<const PlanDataType *> mentioned;
  std::string text =
      "--data: JSON Lines, one " + jsonShape(plan, plan.exampleType, mentioned) + " per line";
  // Each data type is spelt out once, in order of first mention (the list
  // grows while it is walked).
  for (size_t i = 0; i < mentioned.size(); ++i) {
    const PlanDataType &d = *mentioned[i];
    std::string shape;
    if (d.isRecord) {
      shape = recordShape(plan, d.variants[0], mentioned);
    } else {
      for (const PlanDataType::Variant &v : d.variants)
        shape += (shape.empty() ? "" : " | ") + std::string("{") + quoted(v.name) + ": " +
                 recordShape(plan, v, mentioned) + "}";
    }
    text += "\n  " + d.name + " = " + shape;
  }
  return text + "\n(the \"Data files\" section of foldc's docs/language.md)";
}

} // namespace foldc
