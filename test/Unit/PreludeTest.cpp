// foldc's prelude (passes/sema/Prelude.fold): it parses cleanly, defines the
// layers the language reference says it does, and the reference prints it
// as it is.
#include "passes/sema/Prelude.h"
#include "frontend/Parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace foldc {
namespace {

TEST(Prelude, ParsesWithoutDiagnosticsAndDefinesFcLstmAndGru) {
  SourceManager sources;
  uint32_t file = sources.addFile(std::string(kPreludeFileName), std::string(preludeSource()));
  std::ostringstream printed;
  DiagnosticEngine diag(sources, printed);
  std::unique_ptr<Module> prelude = parseModule(sources, file, diag);
  ASSERT_NE(prelude, nullptr);
  EXPECT_EQ(printed.str(), "");
  std::vector<std::string> defined;
  for (const DeclPtr &d : prelude->decls) {
    EXPECT_TRUE(isa<LayerDefDecl>(d.get())) << d->name;
    defined.push_back(d->name);
  }
  EXPECT_EQ(defined, (std::vector<std::string>{"fc", "lstm", "gru"}));
}

TEST(Prelude, TheLanguageReferenceShowsItVerbatim) {
  std::ifstream in(FOLDC_DOCS_DIR "/language.md");
  std::stringstream reference;
  reference << in.rdbuf();
  std::string text(preludeSource());
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  EXPECT_NE(reference.str().find("```\n" + text + "\n```"), std::string::npos)
      << "docs/language.md (\"The prelude's layers\") differs from passes/sema/Prelude.fold";
}

} // namespace
} // namespace foldc
