// Source files held in memory, and the locations and ranges that point into them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace foldc {

/// A position in a source file: 1-based line and column (columns count code
/// points, as the ANTLR lexer does). `file` indexes the SourceManager.
struct SourceLocation {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t column = 0;

  bool isValid() const { return line != 0; }
};

/// A half-open range [begin, end) of source text; `end` is one past the last
/// character, so a one-character token spans columns c..c+1.
struct SourceRange {
  SourceLocation begin;
  SourceLocation end;

  SourceRange() = default;
  SourceRange(SourceLocation b, SourceLocation e) : begin(b), end(e) {}
  explicit SourceRange(SourceLocation at) : begin(at), end(at) {}
  bool isValid() const { return begin.isValid(); }
};

/// One loaded file: its name as the user gave it and its text.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);

  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  /// The text of 1-based line `line`, without its newline ("" if out of range).
  std::string_view line(uint32_t line) const;

private:
  std::string name_;
  std::string text_;
  std::vector<size_t> lineStarts_;
};

/// Owns every file a compilation reads; locations refer to files by index.
class SourceManager {
public:
  /// Adds a file with the given text and returns its index.
  uint32_t addFile(std::string name, std::string text);
  /// Reads `path` ("-" is standard input); returns false if it cannot be read.
  bool loadFile(const std::string &path, uint32_t &fileIndex);
  const SourceFile &file(uint32_t index) const { return *files_.at(index); }

private:
  std::vector<std::unique_ptr<SourceFile>> files_;
};

} // namespace foldc
