// Reads SST trees with the reader generated from sentiment.fold and prints
// the statistics of data/sst/README.md: root labels and leaves per tree.
#include "sentiment.h"

#include <cstdio>

namespace {
int leaves(const sentiment::Tree &t) {
  if (std::holds_alternative<sentiment::Tree::Leaf>(t.value))
    return 1;
  const auto &n = std::get<sentiment::Tree::Node>(t.value);
  return leaves(*n.left) + leaves(*n.right);
}
int64_t label(const sentiment::Tree &t) {
  return std::visit([](const auto &v) { return v.label; }, t.value);
}
} // namespace

int main(int argc, char **argv) {
  std::vector<sentiment::Tree> trees = sentiment::readExamples(argv[argc - 1]);
  long counts[5] = {0, 0, 0, 0, 0}, total = 0;
  for (const sentiment::Tree &t : trees) {
    ++counts[label(t)];
    total += leaves(t);
  }
  std::printf("trees %zu roots %ld %ld %ld %ld %ld leaves/tree %.2f\n", trees.size(), counts[0],
              counts[1], counts[2], counts[3], counts[4], double(total) / double(trees.size()));
  return 0;
}
