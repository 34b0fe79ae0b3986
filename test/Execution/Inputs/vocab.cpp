// Definitions of test/Types/Inputs/vocab.h for test/Execution/import.test.
#include "vocab.h"

#include <cctype>
#include <sstream>

int64_t word_id(const std::string &word) { return int64_t(word.size() % 100); }
double scale(double x, int k) { return x * k; }
bool is_upper(const std::string &word) {
  return !word.empty() && std::isupper(static_cast<unsigned char>(word[0]));
}
std::vector<int64_t> split_ids(const std::string &text) {
  std::istringstream in(text);
  std::vector<int64_t> ids;
  for (std::string w; in >> w;)
    ids.push_back(word_id(w));
  return ids;
}
namespace text {
std::vector<std::vector<double>> features(const std::vector<std::string> &words) {
  return {std::vector<double>(words.size(), 1.0)};
}
} // namespace text
