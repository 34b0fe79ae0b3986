// libFuzzer target: pretrained vectors through loadVectors. The input is a
// vectors file and a vocabulary file, split at the first NUL byte (all of it
// is the vectors file without one; the vocabulary is then fixed). A bad file
// must be a DataError and leave the table as it was; nothing may crash.
#include "runtime/io/Jsonl.h"
#include "runtime/io/Vectors.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

void write(const std::string &path, const char *begin, const char *end) {
  std::ofstream out(path, std::ios::binary);
  out.write(begin, end - begin);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string stem = "/tmp/foldc-vectors-fuzz-" + std::to_string(getpid());
  static const std::string vectors = stem + ".txt", vocabulary = stem + ".vocab";
  const char *begin = reinterpret_cast<const char *>(data), *end = begin + size;
  const char *nul = std::find(begin, end, '\0');
  write(vectors, begin, nul);
  if (nul == end) {
    static const char fixed[] = "the\ncat\nsat\non\nmat\n";
    write(vocabulary, fixed, fixed + sizeof fixed - 1);
  } else {
    write(vocabulary, nul + 1, end);
  }
  foldc::rt::ParamStore params;
  params.add("words.E", {6, 3}, {foldc::rt::InitKind::Uniform, -1, 1}, /*sparseRows=*/true);
  foldc::rt::Param &table = params.at(0);
  for (size_t i = 0; i < table.value.size(); ++i)
    table.value[i] = float(i);
  const std::vector<float> before = table.value;
  try {
    foldc::rt::loadVectors(table, vectors, vocabulary);
  } catch (const foldc::rt::DataError &) {
    // All or nothing: a rejected file leaves every value as it was.
    if (table.value != before)
      std::abort();
  }
  return 0;
}
