// Random and balanced trees for the Tree-LSTM reference model.
#include "runtime/reference/TreeLstm.h"

#include <functional>

namespace foldc::rt::reference {

namespace {
/// Builds a tree over `leaves` leaves, splitting with `split(n)` -> left size.
Tree buildTree(int leaves, int vocab, int classes, std::mt19937_64 &rng,
               const std::function<int(int)> &split) {
  Tree tree;
  std::uniform_int_distribution<int32_t> word(0, vocab - 1), label(0, classes - 1);
  std::function<int32_t(int)> build = [&](int n) -> int32_t {
    Tree::Node node;
    node.label = label(rng);
    if (n == 1) {
      node.word = word(rng);
    } else {
      int left = split(n);
      node.left = build(left);
      node.right = build(n - left);
    }
    tree.nodes.push_back(node);
    return int32_t(tree.nodes.size() - 1);
  };
  build(leaves);
  return tree;
}
} // namespace

Tree randomTree(int leaves, int vocab, int classes, std::mt19937_64 &rng) {
  return buildTree(leaves, vocab, classes, rng,
                   [&](int n) { return std::uniform_int_distribution<int>(1, n - 1)(rng); });
}

Tree balancedTree(int leaves, int vocab, int classes, std::mt19937_64 &rng) {
  return buildTree(leaves, vocab, classes, rng, [](int n) { return n / 2; });
}

} // namespace foldc::rt::reference
