#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer, built
# with -DFOLDC_SANITIZE=address,undefined in build-sanitize/.
#
#   bash scripts/sanitize.sh           foldc, the runtime and every generated
#                                      model; then all of ctest (hours of CPU
#                                      on 2 cores: an instrumented generated
#                                      model takes 1-2 minutes to compile)
#   bash scripts/sanitize.sh --quick   foldc and the runtime's unit tests; then
#                                      the unit tests and the compiler's lit
#                                      suites (Parser, Types, Batching, Codegen,
#                                      Tools): about 15 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case ${1:-} in
  --quick) quick=1 ;;
  "") ;;
  *) sed -n '2,/^set /{/^#/p}' "$0" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
# One compiler for everything: the random programs (scripts/fuzz.sh) link the
# instrumented runtime, and GCC's and clang's sanitizer runtimes do not mix.
export CXX=${CXX:-g++}
# -O1 -g1 (asserts on): an instrumented generated model compiles in about a
# third of the time of -O2 -g (measured on examples/sentiment: 102 s vs 332 s).
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DFOLDC_SANITIZE=address,undefined -DFOLDC_BUILD_BENCH=OFF > /dev/null
# LLVM's libraries (libTooling) leak by design at exit; leaks are not checked.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "$quick" = 1 ]; then
  cmake --build build-sanitize -j"$(nproc)" --target foldc foldc_unit_tests
  build-sanitize/test/foldc_unit_tests
  cd build-sanitize/test
  python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv -j"$(nproc)" Parser Types Batching Codegen Tools
  exit
fi
cmake --build build-sanitize -j"$(nproc)"
ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"
