// Host functions for imports.fold: what a user's C++ vocabulary looks like.
#pragma once
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

inline int64_t word_id(const std::string &word) { return int64_t(word.size() % 8); }

inline double title_weight(const std::string &title) { return 1.0 + double(title.size()) / 10.0; }

inline bool shouting(const std::string &title) {
  for (char c : title)
    if (std::islower(static_cast<unsigned char>(c)))
      return false;
  return !title.empty();
}

inline int64_t count_long(const std::vector<std::string> &words, int64_t longer_than) {
  int64_t n = 0;
  for (const std::string &w : words)
    n += int64_t(w.size()) > longer_than;
  return n;
}
