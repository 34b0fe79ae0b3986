// The builtin tables (Builtins.def, Ops.def) against docs/language.md and
// against themselves: a user reads about every builtin the compiler knows.
#include "passes/builtins/Builtins.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace foldc {
namespace {

std::string languageReference() {
  std::ifstream in(FOLDC_DOCS_DIR "/language.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The text of the bullet `- **title**` up to the next bullet or blank line.
std::string bullet(const std::string &doc, const std::string &title) {
  size_t at = doc.find("- **" + title + "**");
  if (at == std::string::npos)
    return "";
  size_t end = doc.find("\n- ", at + 1);
  size_t blank = doc.find("\n\n", at + 1);
  return doc.substr(at, std::min(end, blank) - at);
}

/// The names in `text` written as code, `name`, other than element types.
std::set<std::string> namesAsCode(const std::string &text) {
  std::set<std::string> words;
  static const std::regex span("`([a-z_0-9]+)`");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), span); it != std::sregex_iterator();
       ++it)
    if ((*it)[1] != "f32" && (*it)[1] != "i32")
      words.insert((*it)[1]);
  return words;
}

TEST(Builtins, ElementwiseFunctionsAreListedInTheReference) {
  std::set<std::string> table;
#define FOLDC_ELEMENTWISE(Kind, Name, Accepts) table.insert(Name);
#include "passes/builtins/Ops.def"
  std::string listed = bullet(languageReference(), "Element-wise functions.");
  ASSERT_FALSE(listed.empty()) << "docs/language.md has no '- **Element-wise functions.**'";
  EXPECT_EQ(namesAsCode(listed), table);
}

TEST(Builtins, EveryBuiltinIsNamedInTheReference) {
  std::string doc = languageReference();
  auto documented = [&](std::string_view name) {
    std::string n(name);
    return doc.find("`" + n + "`") != std::string::npos ||
           doc.find("`" + n + "(") != std::string::npos;
  };
#define FOLDC_FUNCTION(Kind, Name, MinArgs, MaxArgs, Operands)                                     \
  EXPECT_TRUE(documented(Name)) << Name;
#define FOLDC_COMBINATOR(Kind, Name, MinArgs, Arity) EXPECT_TRUE(documented(Name)) << Name;
#define FOLDC_LAYER(Kind, Name, Option) EXPECT_TRUE(documented(Name)) << Name;
#define FOLDC_INITIALIZER(Kind, Name, Arity) EXPECT_TRUE(documented(Name)) << Name;
#define FOLDC_ACTIVATION(Kind, Name) EXPECT_TRUE(documented(Name)) << Name;
#include "passes/builtins/Builtins.def"
  EXPECT_TRUE(documented(activationName(Activation::None)));
}

TEST(Builtins, NamesFindTheirRows) {
  for (int i = 0; i < kBuiltinCount; ++i) {
    const BuiltinInfo &info = builtinInfo(Builtin(i));
    EXPECT_EQ(int(info.builtin), i);
    EXPECT_EQ(builtinNamed(info.name), info.builtin) << info.name;
    EXPECT_EQ(opOf(info.builtin).has_value(), info.role != BuiltinRole::Combinator) << info.name;
  }
  EXPECT_EQ(builtinNamed("neg"), std::nullopt);       // `-x` is not callable by name
  EXPECT_EQ(builtinNamed("embedding"), std::nullopt); // a layer constructor
  EXPECT_EQ(layerKindNamed("embedding"), LayerKind::Embedding);
  EXPECT_EQ(layerKindNamed("fc"), std::nullopt);      // a layer definition of the prelude
  EXPECT_EQ(initKindNamed("zeros"), InitKind::Zeros); // a function and an initialiser
  EXPECT_EQ(builtinNamed("zeros"), Builtin::Zeros);
  EXPECT_EQ(opOf(Activation::None), std::nullopt);
  EXPECT_EQ(opOf(*activationNamed("relu")), OpKind::ReLU);
  EXPECT_EQ(resolveBuiltinName("none")->table, BuiltinName::Table::Activation);
  EXPECT_EQ(resolveBuiltinName("no_such_builtin"), std::nullopt);
  // A name in two tables resolves to the first (a callable), unless asked in one.
  EXPECT_EQ(resolveBuiltinName("zeros")->table, BuiltinName::Table::Callable);
  EXPECT_EQ(builtinIn(BuiltinName::Table::Initializer, "zeros")->initializer, InitKind::Zeros);
  EXPECT_EQ(builtinIn(BuiltinName::Table::Activation, "tanh")->activation, Activation::Tanh);
  EXPECT_EQ(builtinIn(BuiltinName::Table::LayerConstructor, "tanh"), std::nullopt);
  EXPECT_EQ(builtinInfo(Builtin::Abs).accepts, Accepts::Number);
  EXPECT_EQ(builtinInfo(Builtin::Tanh).accepts, Accepts::Float);
}

TEST(Builtins, PropertiesComeFromTheRows) {
  // takes an axis: exactly the builtins whose op has the Axis attribute
  for (int i = 0; i < kBuiltinCount; ++i) {
    Builtin b = Builtin(i);
    std::optional<OpKind> op = opOf(b);
    EXPECT_EQ(takesAxis(b), op && opInfo(*op).attr == OpAttr::Axis) << builtinInfo(b).name;
  }
  EXPECT_TRUE(takesAxis(Builtin::Concat));
  EXPECT_FALSE(takesAxis(Builtin::Dot));
  // no gradient: the families whose row says None, and stop_gradient
  EXPECT_TRUE(hasNoGradient(OpKind::Argmax));
  EXPECT_TRUE(hasNoGradient(OpKind::Eq));
  EXPECT_TRUE(hasNoGradient(OpKind::StopGradient));
  EXPECT_FALSE(hasNoGradient(OpKind::Tanh));
  EXPECT_FALSE(hasNoGradient(OpKind::Linear));
  // which arguments are operands
  EXPECT_EQ(builtinInfo(Builtin::OneHot).operands, Operands::Last);
  EXPECT_EQ(builtinInfo(Builtin::Dropout).operands, Operands::First);
  EXPECT_EQ(builtinInfo(Builtin::Zeros).operands, Operands::NoOperand);
  // options: the built-in layer's own option is a row taken by ItsLayers
  EXPECT_EQ(layerKindInfo(LayerKind::Embedding).option, Option::Init);
  EXPECT_EQ(optionInfo(Option::Init).takenBy, OptionTakenBy::ItsLayers);
  EXPECT_EQ(optionNamed("lr_scale"), Option::LrScale);
  EXPECT_EQ(optionInfo(Option::Axis).takenBy, OptionTakenBy::AxisCalls);
}

} // namespace
} // namespace foldc
