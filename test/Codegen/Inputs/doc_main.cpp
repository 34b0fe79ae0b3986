// Reads documents with lists, nested lists, optionals and tuples.
#include "docs.h"

#include <cstdio>

int main(int argc, char **argv) {
  try {
    for (const docs::Doc &d : docs::readExamples(argv[argc - 1])) {
      double weights = 0;
      for (const auto &row : d.weights)
        for (double w : row)
          weights += w;
      std::printf("words %zu weights %g tag %s span %lld-%lld flag %d\n", d.words.size(), weights,
                  d.tag ? d.tag->c_str() : "none", (long long)std::get<0>(d.span),
                  (long long)std::get<1>(d.span), int(d.flag));
    }
  } catch (const foldc::rt::DataError &e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  return 0;
}
