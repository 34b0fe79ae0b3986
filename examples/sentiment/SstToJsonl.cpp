// sst_to_jsonl: converts Stanford Sentiment Treebank trees (PTB s-expressions,
// one per line) into the JSON Lines input of sentiment.fold:
//   {"Leaf": {"word": ID, "label": L}} | {"Node": {"left": ..., "right": ..., "label": L}}
// Word ids index a vocabulary of every distinct token of the given files,
// sorted, written to vocab.txt (one token per line, line i = id i).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// A malformed tree: `FILE:LINE:COL: what was expected`.
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Recursive descent over one line: tree := '(' label (token | tree tree) ')'.
/// Tokens end at the ASCII space or a parenthesis only: a few SST tokens hold
/// a no-break space (U+00A0), which is part of the token (see data/sst/README.md).
class TreeParser {
public:
  TreeParser(const std::string &line, std::string where) : line_(line), where_(std::move(where)) {}

  /// Parses the whole line, calling `onToken` for each leaf token; with a
  /// vocabulary, also builds the JSON value.
  nlohmann::json parse(const std::map<std::string, int> *vocab) {
    vocab_ = vocab;
    nlohmann::json tree = node();
    skipSpaces();
    if (pos_ != line_.size())
      fail("expected the end of the line after the tree");
    return tree;
  }
  std::vector<std::string> tokens;

private:
  nlohmann::json node() {
    skipSpaces();
    expect('(');
    skipSpaces();
    if (pos_ >= line_.size() || line_[pos_] < '0' || line_[pos_] > '4')
      fail("expected a label 0-4");
    int label = line_[pos_++] - '0';
    skipSpaces();
    if (pos_ < line_.size() && line_[pos_] == '(') {
      nlohmann::json left = node();
      nlohmann::json right = node();
      skipSpaces();
      expect(')');
      return {{"Node", {{"left", std::move(left)}, {"right", std::move(right)}, {"label", label}}}};
    }
    size_t start = pos_;
    while (pos_ < line_.size() && line_[pos_] != ' ' && line_[pos_] != '(' && line_[pos_] != ')')
      ++pos_;
    if (pos_ == start)
      fail("expected a token or '('");
    std::string token = line_.substr(start, pos_ - start);
    tokens.push_back(token);
    skipSpaces();
    expect(')');
    int word = vocab_ ? vocab_->at(token) : -1;
    return {{"Leaf", {{"word", word}, {"label", label}}}};
  }

  void skipSpaces() {
    while (pos_ < line_.size() && line_[pos_] == ' ')
      ++pos_;
  }
  void expect(char c) {
    if (pos_ >= line_.size() || line_[pos_] != c)
      fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  [[noreturn]] void fail(const std::string &what) {
    throw ParseError(where_ + ":" + std::to_string(pos_ + 1) + ": " + what +
                     (pos_ < line_.size() ? std::string(", found '") + line_[pos_] + "'"
                                          : std::string(", found the end of the line")));
  }

  const std::string &line_;
  std::string where_;
  size_t pos_ = 0;
  const std::map<std::string, int> *vocab_ = nullptr;
};

/// Calls `onLine(line, "FILE:LINE")` for every line of `file`.
template <typename F> void forEachLine(const std::string &file, F onLine) {
  std::ifstream in(file);
  if (!in)
    throw std::runtime_error(file + ": cannot open for reading");
  std::string line;
  for (long number = 1; std::getline(in, line); ++number)
    if (!line.empty())
      onLine(line, file + ":" + std::to_string(number));
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Converts SST trees to sentiment.fold's JSON Lines input"};
  std::vector<std::string> inputs;
  std::string outDir;
  app.add_option("FILES", inputs, "SST tree files (e.g. train.txt dev.txt test.txt)")->required();
  app.add_option("-o,--out", outDir, "output folder: vocab.txt and NAME.jsonl per input")
      ->required();
  CLI11_PARSE(app, argc, argv);
  try {
    std::set<std::string> tokens;
    for (const std::string &file : inputs)
      forEachLine(file, [&](const std::string &line, const std::string &where) {
        TreeParser parser(line, where);
        parser.parse(nullptr);
        tokens.insert(parser.tokens.begin(), parser.tokens.end());
      });
    std::filesystem::create_directories(outDir);
    std::map<std::string, int> vocab;
    std::ofstream vocabOut(std::filesystem::path(outDir) / "vocab.txt");
    for (const std::string &t : tokens) {
      vocab.emplace(t, int(vocab.size()));
      vocabOut << t << '\n';
    }
    for (const std::string &file : inputs) {
      std::filesystem::path target =
          std::filesystem::path(outDir) / (std::filesystem::path(file).stem().string() + ".jsonl");
      std::ofstream out(target);
      long trees = 0;
      forEachLine(file, [&](const std::string &line, const std::string &where) {
        out << TreeParser(line, where).parse(&vocab).dump() << '\n';
        ++trees;
      });
      if (!out)
        throw std::runtime_error(target.string() + ": write failed");
      std::cerr << "sst_to_jsonl: " << file << " -> " << target.string() << " (" << trees
                << " trees)\n";
    }
    std::cerr << "sst_to_jsonl: vocabulary of " << vocab.size() << " tokens\n";
  } catch (const std::exception &e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  return 0;
}
