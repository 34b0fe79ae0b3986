// `foldc run FILE.fold COMMAND ARGS...`: the model's driver from the compile
// cache. The cache and the compile are the foldc Python package's
// (python/foldc: one implementation for `foldc.load` and `foldc run`), so
// this hands the command to `python3 -m foldc`.
#pragma once

namespace foldc::tools {

/// Replaces this process with `python3 -m foldc run ARGS...`, the package
/// found beside this foldc (the build tree's python/, or the install's
/// lib/python3*/dist-packages). Returns only on failure (the status).
int runModel(int argc, char **argv);

} // namespace foldc::tools
