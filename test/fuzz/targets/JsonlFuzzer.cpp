// libFuzzer target: one line of JSONL through the reader foldc generates for
// a program whose examples hold unions, optionals, lists, tuples and
// recursive data (jsonl_schema.fold beside this file). Bad data must be a DataError
// naming the field; nothing else may escape, crash or hang.
#include "jsonl_schema.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string line(reinterpret_cast<const char *>(data), size);
  nlohmann::json value = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded())
    return 0; // not JSON: the line reader reports it before any generated code runs
  try {
    static const std::string file = "fuzz.jsonl";
    (void)jsonl_schema::readExample(value, foldc::rt::JsonPath(file, 1));
  } catch (const foldc::rt::DataError &) {
  }
  return 0;
}
