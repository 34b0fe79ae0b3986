// ANTLR glue: lexing, bracket and character checks, parsing with readable
// syntax errors, then AST building. ANTLR types stop at this file's edge.
#include "frontend/Parser.h"

#include "FoldLexer.h"
#include "FoldParser.h"
#include "antlr4-runtime.h"
#include "frontend/ASTBuilder.h"

#include <vector>

namespace foldc {

namespace {

SourceLocation startOf(const antlr4::Token *token, uint32_t file) {
  return {file, static_cast<uint32_t>(token->getLine()),
          static_cast<uint32_t>(token->getCharPositionInLine() + 1)};
}

SourceRange rangeOf(const antlr4::Token *token, uint32_t file) {
  SourceLocation begin = startOf(token, file);
  SourceLocation end = begin;
  if (token->getType() != antlr4::Token::EOF && token->getStopIndex() >= token->getStartIndex())
    end.column += static_cast<uint32_t>(token->getStopIndex() - token->getStartIndex() + 1);
  return {begin, end};
}

/// The position just past `token`: where a missing `;` or `)` belongs.
SourceRange after(const antlr4::Token *token, uint32_t file) {
  SourceRange r = rangeOf(token, file);
  return SourceRange(r.end);
}

std::string describe(const antlr4::Token *token) {
  if (token->getType() == antlr4::Token::EOF)
    return "end of file";
  return "'" + token->getText() + "'";
}

/// Lexer-level checks before parsing: stray characters, unterminated strings
/// and unbalanced brackets. Reporting these here gives one precise message
/// ("expected ')' to close '(' opened at 3:34") instead of a parser cascade.
class TokenChecker {
public:
  TokenChecker(DiagnosticEngine &diag, uint32_t file) : diag_(diag), file_(file) {}

  void check(const std::vector<antlr4::Token *> &tokens) {
    for (antlr4::Token *token : tokens) {
      if (token->getType() == FoldLexer::ERROR_CHAR)
        reportBadCharacter(token);
      else if (isOpen(token->getText()) && token->getType() != antlr4::Token::EOF)
        open(token);
      else if (isClose(token->getText()) || token->getType() == antlr4::Token::EOF)
        close(token);
      else if (token->getText() == ";")
        endOfStatement(token);
    }
  }

private:
  static bool isOpen(const std::string &t) { return t == "(" || t == "[" || t == "{"; }
  static bool isClose(const std::string &t) { return t == ")" || t == "]" || t == "}"; }
  static std::string closerOf(const std::string &open) {
    return open == "(" ? ")" : open == "[" ? "]" : "}";
  }

  /// Brackets nested deeper than this are an error, as in Clang (whose
  /// default -fbracket-depth is the same): ANTLR's prediction takes time
  /// quadratic in the nesting of parentheses (8,000 levels: 9 s).
  static constexpr size_t kMaxBracketDepth = 256;

  void open(antlr4::Token *token) {
    open_.push_back(token);
    if (open_.size() == kMaxBracketDepth + 1)
      diag_.error(rangeOf(token, file_))
          << "brackets nested more than " << kMaxBracketDepth << " deep";
  }

  void reportBadCharacter(antlr4::Token *token) {
    if (token->getText() == "\"")
      diag_.error(rangeOf(token, file_)) << "unterminated string literal";
    else
      diag_.error(rangeOf(token, file_)) << "invalid character '" << token->getText() << "'";
  }

  /// `;` ends statements and declarations only: an open `(` or `[` there
  /// was never closed, and the `;` is where that shows.
  void endOfStatement(antlr4::Token *token) {
    while (!open_.empty() && open_.back()->getText() != "{") {
      antlr4::Token *opener = open_.back();
      mismatch(opener, token);
      open_.pop_back();
    }
  }

  void mismatch(antlr4::Token *opener, antlr4::Token *found) {
    SourceLocation at = startOf(opener, file_);
    diag_.error(rangeOf(found, file_))
        << "expected '" << closerOf(opener->getText()) << "' to close '" << opener->getText()
        << "' opened at " << at.line << ':' << at.column << ", found " << describe(found);
    diag_.note(rangeOf(opener, file_)) << "'" << opener->getText() << "' opened here";
  }

  void close(antlr4::Token *token) {
    bool atEnd = token->getType() == antlr4::Token::EOF;
    if (open_.empty()) {
      if (!atEnd)
        diag_.error(rangeOf(token, file_)) << "unmatched '" << token->getText() << "'";
      return;
    }
    if (!atEnd && closerOf(open_.back()->getText()) == token->getText()) {
      open_.pop_back();
      return;
    }
    // A mismatch: blame the innermost open bracket, then resynchronise by
    // dropping it (and, at end of file, every other one too).
    do {
      mismatch(open_.back(), token);
      open_.pop_back();
      if (!atEnd && !open_.empty() && closerOf(open_.back()->getText()) == token->getText()) {
        open_.pop_back();
        return;
      }
    } while (atEnd && !open_.empty());
  }

  DiagnosticEngine &diag_;
  uint32_t file_;
  std::vector<antlr4::Token *> open_;
};

/// ANTLR's recovery with foldc's messages: "expected ';' after 'x'",
/// "expected an expression, found ')'". Reports straight to the engine.
class SyntaxErrorReporter : public antlr4::DefaultErrorStrategy {
public:
  SyntaxErrorReporter(DiagnosticEngine &diag, uint32_t file) : diag_(diag), file_(file) {}

protected:
  void reportNoViableAlternative(antlr4::Parser *parser,
                                 const antlr4::NoViableAltException &e) override {
    report(parser, e.getOffendingToken(), expectedOf(parser, parser->getExpectedTokens()));
  }

  void reportInputMismatch(antlr4::Parser *parser,
                           const antlr4::InputMismatchException &e) override {
    report(parser, e.getOffendingToken(), expectedOf(parser, e.getExpectedTokens()));
  }

  void reportFailedPredicate(antlr4::Parser *parser,
                             const antlr4::FailedPredicateException &e) override {
    report(parser, e.getOffendingToken(), expectedOf(parser, parser->getExpectedTokens()));
  }

  void reportUnwantedToken(antlr4::Parser *parser) override {
    if (inErrorRecoveryMode(parser) || quiet_)
      return;
    beginErrorCondition(parser);
    antlr4::Token *token = parser->getCurrentToken();
    diag_.error(rangeOf(token, file_))
        << "expected " << expectedOf(parser, getExpectedTokens(parser)) << ", found "
        << describe(token);
  }

  void reportMissingToken(antlr4::Parser *parser) override {
    if (inErrorRecoveryMode(parser) || quiet_)
      return;
    beginErrorCondition(parser);
    report(parser, parser->getCurrentToken(), expectedOf(parser, getExpectedTokens(parser)));
  }

private:
  void report(antlr4::Parser *parser, antlr4::Token *offending, const std::string &expected) {
    beginErrorCondition(parser);
    if (quiet_)
      return;
    // A missing terminator belongs right after the previous token, as in clang.
    antlr4::Token *previous = parser->getTokenStream()->LT(-1);
    // `|x| { let y = ...; y }`: said once, since what follows the brace
    // cannot parse as anything and would only repeat it.
    if (offending->getText() == "{" && visibleBefore(parser, offending) == "|") {
      diag_.error(rangeOf(offending, file_))
          << "a lambda's body is one expression (|x| x * 2), not a block of statements; for "
             "statements, write a def and pass its name";
      quiet_ = true;
      return;
    }
    bool terminator = expected == "';'" || expected == "')'" || expected == "']'";
    if (terminator && previous && previous->getLine() != offending->getLine()) {
      diag_.error(after(previous, file_))
          << "expected " << expected << " after " << describe(previous);
      return;
    }
    diag_.error(rangeOf(offending, file_))
        << "expected " << expected << ", found " << describe(offending);
  }

  /// The text of the last token on the default channel before `token`.
  static std::string visibleBefore(antlr4::Parser *parser, antlr4::Token *token) {
    auto *stream = dynamic_cast<antlr4::BufferedTokenStream *>(parser->getTokenStream());
    if (!stream)
      return "";
    for (ssize_t i = ssize_t(token->getTokenIndex()) - 1; i >= 0; --i) {
      antlr4::Token *t = stream->get(size_t(i));
      if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
        return t->getText();
    }
    return "";
  }

  /// Names a set of expected tokens the way a person would: "an expression"
  /// rather than fifteen token kinds.
  static std::string expectedOf(antlr4::Parser *parser, const antlr4::misc::IntervalSet &set) {
    if (set.contains(size_t(FoldParser::INT)) && set.contains(size_t(FoldParser::FLOAT)))
      return "an expression";
    const antlr4::dfa::Vocabulary &vocab = parser->getVocabulary();
    auto has = [&](const char *literal) {
      for (ssize_t t : set.toList())
        if (vocab.getLiteralName(t) == literal)
          return true;
      return false;
    };
    if (has("'f32'") && has("'int'"))
      return "a type";
    if (has("'let'") && has("'return'"))
      return "a statement or '}'";
    if (has("'def'") && has("'model'"))
      return "a declaration (import, const, data, param, layer, def or model)";
    std::vector<ssize_t> tokens = set.toList();
    std::string out;
    for (size_t i = 0; i < tokens.size() && i < 4; ++i) {
      if (i)
        out += i + 1 == tokens.size() ? " or " : ", ";
      ssize_t t = tokens[i];
      out += t == static_cast<ssize_t>(antlr4::Token::EOF) ? std::string("end of file")
             : vocab.getLiteralName(t).empty()             ? nameOfKind(vocab.getSymbolicName(t))
                                                           : vocab.getLiteralName(t);
    }
    return tokens.size() > 4 ? out + ", ..." : out;
  }

  static std::string nameOfKind(const std::string &symbolic) {
    if (symbolic == "ID")
      return "a name";
    if (symbolic == "INT")
      return "an integer";
    if (symbolic == "STRING")
      return "a string";
    return symbolic;
  }

  DiagnosticEngine &diag_;
  uint32_t file_;
  bool quiet_ = false; ///< after an error whose cascade would only repeat it
};

/// The length of the UTF-8 sequence at `text[i]`, or 0 when it is not valid
/// UTF-8 (truncated, overlong, a surrogate, or beyond U+10FFFF).
size_t utf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t n = lead < 0x80           ? 1
             : (lead >> 5) == 0x6  ? 2
             : (lead >> 4) == 0xE  ? 3
             : (lead >> 3) == 0x1E ? 4
                                   : 0;
  if (n == 0 || i + n > text.size())
    return 0;
  uint32_t code = n == 1 ? lead : lead & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  static const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < smallest[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  return n;
}

/// Reports the first byte that is not valid UTF-8 (the lexer reads code
/// points); true when the whole file is valid.
bool checkUtf8(const SourceFile &source, uint32_t file, DiagnosticEngine &diag) {
  std::string_view text = source.text();
  uint32_t line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8Length(text, i);
    if (n == 0) {
      diag.error(SourceRange(SourceLocation{file, line, column}))
          << "file is not valid UTF-8 (byte 0x" << std::hex
          << int(static_cast<unsigned char>(text[i])) << std::dec << ")";
      return false;
    }
    if (text[i] == '\n')
      ++line, column = 1;
    else
      ++column;
    i += n;
  }
  return true;
}

} // namespace

std::unique_ptr<Module> parseModule(const SourceManager &sources, uint32_t file,
                                    DiagnosticEngine &diag) {
  const SourceFile &source = sources.file(file);
  if (!checkUtf8(source, file, diag))
    return nullptr;
  antlr4::ANTLRInputStream input(source.text());
  FoldLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();

  unsigned errorsBefore = diag.errorCount();
  std::vector<antlr4::Token *> visible;
  for (antlr4::Token *t : tokens.getTokens())
    if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
      visible.push_back(t);
  TokenChecker(diag, file).check(visible);
  if (diag.errorCount() != errorsBefore)
    return nullptr;

  FoldParser parser(&tokens);
  parser.removeErrorListeners();
  parser.setErrorHandler(std::make_shared<SyntaxErrorReporter>(diag, file));
  FoldParser::ProgramContext *tree = parser.program();
  if (diag.errorCount() != errorsBefore)
    return nullptr;
  auto module = ASTBuilder(file, source.name(), diag).buildModule(tree);
  if (diag.errorCount() != errorsBefore)
    return nullptr;
  return module;
}

bool dumpTokens(const SourceManager &sources, uint32_t file, DiagnosticEngine &diag,
                std::ostream &out) {
  if (!checkUtf8(sources.file(file), file, diag))
    return false;
  antlr4::ANTLRInputStream input(sources.file(file).text());
  FoldLexer lexer(&input);
  lexer.removeErrorListeners();
  const antlr4::dfa::Vocabulary &vocab = lexer.getVocabulary();
  for (auto token = lexer.nextToken(); token->getType() != antlr4::Token::EOF;
       token = lexer.nextToken()) {
    if (token->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      continue;
    std::string literal = vocab.getLiteralName(token->getType());
    out << token->getLine() << ':' << token->getCharPositionInLine() + 1 << ' '
        << (literal.empty() ? vocab.getSymbolicName(token->getType()) + " " + token->getText()
                            : literal)
        << '\n';
  }
  return true;
}

} // namespace foldc
