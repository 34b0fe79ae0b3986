// Reads calculator examples with the generated reader and evaluates each
// expression on the host, to check that every field was read.
#include "calculator.h"

#include <cstdio>

namespace {
double evaluate(const calculator::Expr &e) {
  if (auto *num = std::get_if<calculator::Expr::Num>(&e.value))
    return num->value;
  const auto &op = std::get<calculator::Expr::Op>(e.value);
  double l = evaluate(*op.left), r = evaluate(*op.right);
  return op.op == 0 ? l + r : op.op == 1 ? l - r : l * r;
}
} // namespace

int main(int argc, char **argv) {
  try {
    for (const calculator::Example &ex : calculator::readExamples(argv[argc - 1]))
      std::printf("value %g result %g\n", evaluate(*ex.expr), ex.result);
  } catch (const foldc::rt::DataError &e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  return 0;
}
