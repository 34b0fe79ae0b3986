// libFuzzer target: a request body of `NAME_driver serve` (one example or a
// JSON array of them) through parseRequestBody with the reader foldc
// generates for jsonl_schema.fold. A bad body must be a DataError (not JSON,
// or an example at its place in the body); nothing else may escape, crash or
// hang.
#include "jsonl_schema.h"
#include "runtime/driver/Server.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string body(reinterpret_cast<const char *>(data), size);
  try {
    foldc::rt::parseRequestBody(body,
                                [](const nlohmann::json &value, const foldc::rt::JsonPath &at) {
                                  return std::make_shared<const jsonl_schema::Example>(
                                      jsonl_schema::exampleFromJson(value, at));
                                });
  } catch (const foldc::rt::DataError &) {
  }
  return 0;
}
