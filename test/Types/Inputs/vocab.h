// Host functions for import tests.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

int64_t word_id(const std::string &word);
double scale(double x, int k);
bool is_upper(const std::string &word);
std::vector<int64_t> split_ids(const std::string &text);

namespace text {
std::vector<std::vector<double>> features(const std::vector<std::string> &words);
}
