// Language identifiers as C++ identifiers (see Naming.h).
#include "codegen/Naming.h"

#include <cctype>

namespace foldc {

namespace {

/// C++20 keywords and alternative tokens.
const char *const kCppWords[] = {"alignas",       "alignof",     "and",
                                 "and_eq",        "asm",         "auto",
                                 "bitand",        "bitor",       "bool",
                                 "break",         "case",        "catch",
                                 "char",          "char8_t",     "char16_t",
                                 "char32_t",      "class",       "compl",
                                 "concept",       "const",       "consteval",
                                 "constexpr",     "constinit",   "const_cast",
                                 "continue",      "co_await",    "co_return",
                                 "co_yield",      "decltype",    "default",
                                 "delete",        "do",          "double",
                                 "dynamic_cast",  "else",        "enum",
                                 "explicit",      "export",      "extern",
                                 "false",         "float",       "for",
                                 "friend",        "goto",        "if",
                                 "inline",        "int",         "long",
                                 "mutable",       "namespace",   "new",
                                 "noexcept",      "not",         "not_eq",
                                 "nullptr",       "operator",    "or",
                                 "or_eq",         "private",     "protected",
                                 "public",        "register",    "reinterpret_cast",
                                 "requires",      "return",      "short",
                                 "signed",        "sizeof",      "static",
                                 "static_assert", "static_cast", "struct",
                                 "switch",        "template",    "this",
                                 "thread_local",  "throw",       "true",
                                 "try",           "typedef",     "typeid",
                                 "typename",      "union",       "unsigned",
                                 "using",         "virtual",     "void",
                                 "volatile",      "wchar_t",     "while",
                                 "xor",           "xor_eq",      "final",
                                 "override",      "main",        "assert",
                                 "errno",         "NULL",        "EOF"};

/// Names generated code defines or uses unqualified beside language names.
/// (Inside `class Model`, data types are written qualified by the namespace,
/// so `Example` and `Output` stay free for them.)
const char *const kGenerated[] = {"Model",       "graph",           "output",       "std",
                                  "foldc",       "nlohmann",        "rt",           "declareParams",
                                  "makeKernels", "exampleFromJson", "readExamples", "unfold",
                                  "outputJson",  "params",          "executor",     "int32_t",
                                  "int64_t",     "uint32_t",        "uint64_t",     "size_t"};

/// Prefixes of names generated code makes from language names.
const char *const kGeneratedPrefixes[] = {"read", "unfold_", "Kernel"};

bool claimedShape(const std::string &name) {
  // A '.' is in the names of layer instances' parts (`tagger.fwd`).
  if (name.empty() || name.front() == '_' || name.back() == '_' ||
      name.find("__") != std::string::npos || name.find('.') != std::string::npos)
    return true;
  for (const char *prefix : kGeneratedPrefixes)
    if (name.rfind(prefix, 0) == 0)
      return true;
  return false;
}

/// `name` with each '.' as '_', without leading, trailing or doubled
/// underscores ("v" if nothing is left).
std::string tidy(const std::string &name) {
  std::string out;
  for (char c : name) {
    c = c == '.' ? '_' : c;
    if (c != '_' || (!out.empty() && out.back() != '_'))
      out += c;
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  return out.empty() ? "v" : out;
}

} // namespace

CppNames::CppNames(const BatchPlan &plan, const std::string &cppNamespace) {
  claimed_.insert(std::begin(kCppWords), std::end(kCppWords));
  claimed_.insert(std::begin(kGenerated), std::end(kGenerated));
  claimed_.insert(cppNamespace);
  for (const PlanDataType &d : plan.dataTypes) {
    add(d.name);
    for (const PlanDataType::Variant &v : d.variants) {
      add(v.name);
      for (const PlanField &f : v.fields)
        add(f.name);
    }
  }
  for (const FunctionPlan &f : plan.functions) {
    add(f.name);
    for (const PlanLocal &l : f.locals)
      if (!l.sourceName.empty())
        add(l.sourceName);
  }
}

void CppNames::add(const std::string &source) { sources_.insert(source); }

const std::string &CppNames::operator()(const std::string &source) const {
  auto it = cpp_.find(source);
  if (it != cpp_.end())
    return it->second;
  std::string name = source;
  if (claimed_.count(source) || claimedShape(source)) {
    name = tidy(source) + "_k";
    // Unique among the program's own names and the names given out so far.
    auto used = [&](const std::string &n) {
      if (sources_.count(n) || claimed_.count(n))
        return true;
      for (const auto &[from, to] : cpp_)
        if (to == n)
          return true;
      return false;
    };
    while (used(name))
      name += "k";
  }
  return cpp_.emplace(source, name).first->second;
}

std::string CppNames::local(const FunctionPlan &function, int local) const {
  const PlanLocal &l = function.locals[size_t(local)];
  if (!l.sourceName.empty())
    return (*this)(l.sourceName);
  return "v" + std::to_string(local) + "_";
}

std::string CppNames::function(const FunctionPlan &function) const {
  return "unfold_" + (*this)(function.name);
}

std::string CppNames::kernelClass(const KernelPlan &kernel) {
  std::string name = "Kernel" + std::to_string(kernel.id) + "_";
  for (char c : kernel.name) {
    char x = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (x != '_' || name.back() != '_')
      name += x;
  }
  return name;
}

std::string CppNames::instance(const KernelPlan &kernel) {
  return "i" + std::to_string(kernel.id) + "_";
}

std::string CppNames::paramMember(int param) { return "p" + std::to_string(param) + "_"; }

std::string CppNames::reader(const PlanDataType &data) const { return "read" + (*this)(data.name); }

} // namespace foldc
