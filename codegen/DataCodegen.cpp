// Structs and JSONL readers for data declarations.
#include "codegen/DataCodegen.h"

namespace foldc {

namespace {

/// A field of data type is held through a pointer: data types may be
/// recursive (a Tree holds Trees).
std::string cppFieldType(const TypeRef &type) {
  if (type->kind == TypeKind::Data)
    return "std::unique_ptr<" + type->data->name + ">";
  return cppHostType(type);
}

std::string quoted(const std::string &s) { return "\"" + s + "\""; }

std::string fieldList(const VariantDecl &variant) {
  return "{" + commaSeparated(variant.fields, [](const FieldDecl &f) { return quoted(f.name); }) +
         "}";
}

class DataEmitter {
public:
  DataEmitter(const TypedProgram &program, Emitter &header, Emitter &source)
      : program_(program), h_(header), s_(source) {}

  void run() {
    std::vector<const DataDecl *> datas;
    for (const DeclPtr &d : program_.module->decls)
      if (auto *data = dyn_cast<DataDecl>(d.get()))
        datas.push_back(data);
    for (const DataDecl *d : datas)
      h_.line("struct " + d->name + ";");
    h_.line();
    for (const DataDecl *d : datas)
      declare(*d);
    for (const DataDecl *d : datas) {
      defineReader(*d);
      s_.line();
    }
    if (const FunctionDecl *model = program_.names->model; model && model->params.size() == 1)
      defineExampleReader(program_.bindingTypes.at(&model->params[0]));
  }

private:
  TypeRef fieldType(const FieldDecl &f) const { return program_.fieldTypes.at(&f); }

  void declareFields(const VariantDecl &v) {
    for (const FieldDecl &f : v.fields)
      h_.line(cppFieldType(fieldType(f)) + " " + f.name + ";");
  }

  void declare(const DataDecl &d) {
    {
      auto body = h_.scope("struct " + d.name + " {", "};");
      if (d.isRecord) {
        declareFields(d.variants[0]);
      } else {
        std::string alternatives;
        for (const VariantDecl &v : d.variants) {
          auto variant = h_.scope("struct " + v.name + " {", "};");
          declareFields(v);
          alternatives += (alternatives.empty() ? "" : ", ") + v.name;
        }
        h_.line("std::variant<" + alternatives + "> value;");
      }
    }
    h_.line("/// Reads a " + d.name + " from JSON; a mismatch throws foldc::rt::DataError at `at`.");
    h_.line(d.name + " read" + d.name + "(const nlohmann::json &value, const foldc::rt::JsonPath &at);");
    h_.line();
  }

  /// A C++ expression reading `json` (at path expression `path`) as `type`.
  std::string reader(const TypeRef &type, const std::string &json, const std::string &path) {
    switch (type->kind) {
    case TypeKind::Int: return "foldc::rt::readInt(" + json + ", " + path + ")";
    case TypeKind::Float: return "foldc::rt::readFloat(" + json + ", " + path + ")";
    case TypeKind::Bool: return "foldc::rt::readBool(" + json + ", " + path + ")";
    case TypeKind::String: return "foldc::rt::readString(" + json + ", " + path + ")";
    case TypeKind::Data: return "read" + type->data->name + "(" + json + ", " + path + ")";
    case TypeKind::List:
      return "foldc::rt::readList<" + cppHostType(type->element0()) + ">(" + json + ", " + path +
             ", [](const nlohmann::json &v, const foldc::rt::JsonPath &p) { return " +
             reader(type->element0(), "v", "p") + "; })";
    case TypeKind::Optional: {
      std::string present = reader(type->element0(), json, path);
      if (type->element0()->kind == TypeKind::Data) // held through a pointer, null for None
        present = "std::make_unique<" + type->element0()->data->name + ">(" + present + ")";
      else
        present = cppHostType(type) + "(" + present + ")";
      return "(" + json + ".is_null() ? " + cppHostType(type) + "() : " + present + ")";
    }
    case TypeKind::Tuple: {
      std::string args;
      for (size_t i = 0; i < type->elements.size(); ++i)
        args += (i ? ", " : "") +
                reader(type->elements[i], "t[" + std::to_string(i) + "]",
                       path + ".index(" + std::to_string(i) + ")");
      return "[&](const nlohmann::json &t) { return std::make_tuple(" + args +
             "); }(foldc::rt::readTupleArray(" + json + ", " + path + ", " +
             std::to_string(type->elements.size()) + "))";
    }
    default:
      return "/* not a host type */";
    }
  }

  /// Statements filling `target`'s fields from record JSON `json` at `path`.
  void readFields(const VariantDecl &v, const std::string &target, const std::string &path) {
    s_.line("const nlohmann::json &fields = foldc::rt::readRecord(*payload, " + path + ", " +
            fieldList(v) + ");");
    for (const FieldDecl &f : v.fields) {
      TypeRef t = fieldType(f);
      std::string read = reader(t, "fields[" + quoted(f.name) + "]",
                                path + ".field(" + quoted(f.name) + ")");
      if (t->kind == TypeKind::Data)
        read = "std::make_unique<" + t->data->name + ">(" + read + ")";
      s_.line(target + "." + f.name + " = " + read + ";");
    }
  }

  void defineReader(const DataDecl &d) {
    auto fn = s_.scope(d.name + " read" + d.name +
                       "(const nlohmann::json &value, const foldc::rt::JsonPath &at) {");
    s_.line(d.name + " result;");
    if (d.isRecord) {
      s_.line("const nlohmann::json *payload = &value;");
      readFields(d.variants[0], "result", "at");
      s_.line("return result;");
      return;
    }
    s_.line("const nlohmann::json *payload = nullptr;");
    s_.line("std::string variant = foldc::rt::readVariant(value, at, payload);");
    std::string names;
    for (const VariantDecl &v : d.variants) {
      names += (names.empty() ? "" : ", ") + v.name;
      auto arm = s_.scope("if (variant == " + quoted(v.name) + ") {");
      s_.line(d.name + "::" + v.name + " alternative;");
      s_.line("foldc::rt::JsonPath in = at.field(" + quoted(v.name) + ");");
      readFields(v, "alternative", "in");
      s_.line("result.value = std::move(alternative);");
      s_.line("return result;");
    }
    s_.line("at.fail(\"expected one of the variants " + names + ", found \\\"\" + variant + \"\\\"\");");
  }

  void defineExampleReader(const TypeRef &input) {
    std::string type = cppHostType(input);
    h_.line("/// Reads one example per line of a JSON Lines file (§7).");
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
      s_.line("examples.push_back(" + reader(input, "value", "at") + ");");
      s_.line("if (lines) lines->push_back(at.line());");
    }
    s_.line("return examples;");
  }

  const TypedProgram &program_;
  Emitter &h_, &s_;
};

} // namespace

std::string cppHostType(const TypeRef &type) {
  switch (type->kind) {
  case TypeKind::Int: return "int64_t";
  case TypeKind::Float: return "double";
  case TypeKind::Bool: return "bool";
  case TypeKind::String: return "std::string";
  case TypeKind::Data: return type->data->name;
  case TypeKind::List: return "std::vector<" + cppHostType(type->element0()) + ">";
  case TypeKind::Optional:
    return type->element0()->kind == TypeKind::Data
               ? "std::unique_ptr<" + type->element0()->data->name + ">"
               : "std::optional<" + cppHostType(type->element0()) + ">";
  case TypeKind::Tuple:
    return "std::tuple<" + commaSeparated(type->elements, cppHostType) + ">";
  default:
    return "void /* not a host type: " + toString(type) + " */";
  }
}

void emitDataTypes(const TypedProgram &program, Emitter &header, Emitter &source) {
  DataEmitter(program, header, source).run();
}

} // namespace foldc
