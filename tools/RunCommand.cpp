// `foldc run` (see RunCommand.h).
#include "tools/RunCommand.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace foldc::tools {

namespace fs = std::filesystem;

namespace {

/// The folder holding the foldc package that goes with this executable.
std::string packageFolder() {
  std::error_code ec;
  fs::path prefix = fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path();
  if (ec)
    return "";
  std::vector<fs::path> candidates = {prefix / "python"}; // the build tree
  for (const fs::directory_entry &lib : fs::directory_iterator(prefix / "lib", ec))
    if (lib.path().filename().string().starts_with("python3"))
      candidates.push_back(lib.path() / "dist-packages");
  for (const fs::path &folder : candidates)
    if (fs::exists(folder / "foldc" / "__init__.py", ec))
      return folder.string();
  return "";
}

} // namespace

int runModel(int argc, char **argv) {
  std::string folder = packageFolder();
  if (folder.empty()) {
    std::cerr << "foldc run: error: the foldc Python package is not installed beside this foldc "
                 "(cmake --install puts it in PREFIX/lib/python3*/dist-packages)\n";
    return 2;
  }
  const char *old = std::getenv("PYTHONPATH");
  std::string path = folder;
  if (old && *old)
    path.append(":").append(old);
  setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<char *> args = {const_cast<char *>(FOLDC_PYTHON), const_cast<char *>("-m"),
                              const_cast<char *>("foldc")};
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  args.push_back(nullptr);
  execvp(FOLDC_PYTHON, args.data());
  std::cerr << "foldc run: error: cannot run " << FOLDC_PYTHON << ": " << std::strerror(errno)
            << "\n";
  return 2;
}

} // namespace foldc::tools
