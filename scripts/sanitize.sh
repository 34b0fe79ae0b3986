#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
# builds foldc, the runtime and every generated model with
# -DFOLDC_SANITIZE=address,undefined in build-sanitize/, then runs ctest there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# One compiler for everything: the random programs (scripts/fuzz.sh) link the
# instrumented runtime, and GCC's and clang's sanitizer runtimes do not mix.
export CXX=${CXX:-g++}
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFOLDC_SANITIZE=address,undefined -DFOLDC_BUILD_BENCH=OFF > /dev/null
cmake --build build-sanitize -j"$(nproc)"
# LLVM's libraries (libTooling) leak by design at exit; leaks are not checked.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"
