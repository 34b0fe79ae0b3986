// Pretrained word vectors (see Vectors.h).
#include "runtime/io/Vectors.h"

#include "runtime/io/Jsonl.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace foldc::rt {

namespace {

/// Reads a text file line by line, numbering the lines and naming the file
/// in errors.
class LineReader {
public:
  explicit LineReader(const std::string &file) : file_(file), in_(file) {
    if (!in_)
      throw DataError(file + ": cannot open for reading");
  }
  /// The next line without its end (`\n` or `\r\n`); false at the end.
  bool next(std::string &line) {
    if (!std::getline(in_, line)) {
      if (in_.bad())
        throw DataError(file_ + ": read error after line " + std::to_string(number_));
      return false;
    }
    ++number_;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (number_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) // a UTF-8 byte-order mark
      line.erase(0, 3);
    return true;
  }
  long number() const { return number_; }
  [[noreturn]] void fail(const std::string &what) const {
    throw DataError(file_ + ":" + std::to_string(number_) + ": " + what);
  }

private:
  std::string file_;
  std::ifstream in_;
  long number_ = 0;
};

/// Word ids by word, from a vocabulary file of at most `rows` lines.
std::unordered_map<std::string, int64_t> readVocabulary(const std::string &file, int64_t rows,
                                                        const std::string &table) {
  LineReader reader(file);
  std::unordered_map<std::string, int64_t> ids;
  std::string word;
  while (reader.next(word)) {
    int64_t id = reader.number() - 1;
    if (word.empty())
      reader.fail("an empty word (one word per line: line N is word id N - 1)");
    if (id >= rows)
      reader.fail("word id " + std::to_string(id) + " is beyond the " + std::to_string(rows) +
                  " rows of '" + table + "'");
    auto [at, added] = ids.emplace(word, id);
    if (!added)
      reader.fail("the word '" + word + "' is also on line " + std::to_string(at->second + 1));
  }
  return ids;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < line.size()) {
    size_t end = line.find_first_of(" \t", at);
    if (end == std::string_view::npos)
      end = line.size();
    if (end > at)
      out.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool isCount(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

bool isNumber(std::string_view text) {
  float value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

/// "found 'cat' and 2 numbers": what a line holds, its word and the numbers after it.
std::string foundText(const std::vector<std::string_view> &parts) {
  size_t numbers = 0;
  while (numbers + 1 < parts.size() && isNumber(parts[parts.size() - 1 - numbers]))
    ++numbers;
  std::string word;
  for (size_t i = 0; i + numbers < parts.size(); ++i)
    word += (i ? " " : "") + std::string(parts[i]);
  return "found '" + word + "' and " + std::to_string(numbers) + " number" +
         (numbers == 1 ? "" : "s");
}

} // namespace

VectorsReport loadVectors(Param &table, const std::string &vectorsFile,
                          const std::string &vocabularyFile) {
  const int64_t width = table.rowWidth();
  std::unordered_map<std::string, int64_t> ids =
      readVocabulary(vocabularyFile, table.rows(), table.name);
  std::vector<float> staged(table.value.size());
  std::vector<long> foundOn(ids.size(), 0); ///< per word id: the line of its vector, or 0
  std::unordered_map<std::string, long> seen;
  LineReader reader(vectorsFile);
  std::string line;
  VectorsReport report{ids.size(), 0};
  std::vector<float> row(static_cast<size_t>(width));
  bool firstVector = true; // a wider file shows as a first "word" of several fields
  while (reader.next(line)) {
    std::vector<std::string_view> parts = fields(line);
    if (parts.empty())
      continue;
    if (reader.number() == 1 && parts.size() == 2 && isCount(parts[0]) && isCount(parts[1])) {
      if (parts[1] != std::to_string(width))
        reader.fail("word2vec header: vectors of " + std::string(parts[1]) + " numbers, but '" +
                    table.name + "' rows have " + std::to_string(width));
      continue;
    }
    size_t wordFields = parts.size() - size_t(std::min<int64_t>(width, int64_t(parts.size())));
    if (int64_t(parts.size()) < width + 1 || (std::exchange(firstVector, false) && wordFields > 1))
      reader.fail("expected a word and " + std::to_string(width) + " numbers (the width of '" +
                  table.name + "'), " + foundText(parts));
    std::string word(parts[0].data(), size_t(parts[wordFields - 1].end() - parts[0].begin()));
    auto [first, added] = seen.emplace(word, reader.number());
    if (!added)
      reader.fail("the word '" + word + "' is also on line " + std::to_string(first->second));
    for (int64_t k = 0; k < width; ++k) {
      std::string_view text = parts[wordFields + size_t(k)];
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), row[size_t(k)]);
      if (error != std::errc() || end != text.data() + text.size() ||
          !std::isfinite(row[size_t(k)]))
        reader.fail("number " + std::to_string(k + 1) + " of '" + word + "': expected a finite " +
                    "number, found '" + std::string(text) + "'");
    }
    auto id = ids.find(word);
    if (id == ids.end())
      continue;
    std::copy(row.begin(), row.end(), staged.begin() + id->second * width);
    foundOn[size_t(id->second)] = reader.number();
    ++report.found;
  }
  if (seen.empty())
    throw DataError(vectorsFile + ": no vectors in it (expected lines of a word and " +
                    std::to_string(width) + " numbers)");
  if (report.found == 0)
    throw DataError(vectorsFile + ": none of its " + std::to_string(seen.size()) + " words is in " +
                    vocabularyFile + " (a vectors file for another vocabulary, or other casing?)");
  for (size_t id = 0; id < foundOn.size(); ++id)
    if (foundOn[id])
      std::copy_n(staged.begin() + int64_t(id) * width, width,
                  table.value.begin() + int64_t(id) * width);
  return report;
}

} // namespace foldc::rt
