// libFuzzer target: a parameter file's bytes through the safetensors loader
// into a store with parameters of several shapes. A bad file must be an
// exception with a message; nothing may crash or read out of bounds.
#include "runtime/io/Safetensors.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = "/tmp/foldc-safetensors-fuzz-" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(data), std::streamsize(size));
  }
  foldc::rt::ParamStore params;
  params.add("a.W", {3, 2}, {foldc::rt::InitKind::Glorot});
  params.add("b", {4}, {foldc::rt::InitKind::Zeros});
  params.add("e.E", {5, 2}, {foldc::rt::InitKind::Uniform, -0.1, 0.1}, /*sparseRows=*/true);
  try {
    foldc::rt::loadParams(params, path);
  } catch (const std::exception &) {
  }
  return 0;
}
