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
#   bash scripts/sanitize.sh --threads the code where threads and interleaving
#                                      meet, under ASan+UBSan and then under
#                                      TSan (build-tsan/): the interleaved
#                                      runtime (the conformance programs that
#                                      decide on computed values, seq2seq),
#                                      the server's threads (serve, its faults
#                                      test, --threads) and the Python module
#                                      releasing the GIL (test/Python, the
#                                      interpreter preloading the sanitizer's
#                                      runtime): about 60 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case ${1:-} in
  --quick) quick=1 ;;
  --threads) quick=threads ;;
  "") ;;
  *) sed -n '2,/^set /{/^#/p}' "$0" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
# One compiler for everything: the random programs (scripts/fuzz.sh) link the
# instrumented runtime, and GCC's and clang's sanitizer runtimes do not mix.
export CXX=${CXX:-g++}
# LLVM's libraries (libTooling) leak by design at exit; leaks are not checked.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# test/tsan.supp: a race TSan reports inside Python's and glibc's own code.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp"

# Configures DIR with the sanitizers SANITIZE. -O1 -g1 (asserts on): an
# instrumented generated model compiles in about a third of the time of
# -O2 -g (measured on examples/sentiment: 102 s vs 332 s).
configure() {  # DIR SANITIZE [CMAKE OPTIONS...]
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DFOLDC_SANITIZE="$2" -DFOLDC_BUILD_BENCH=OFF "${@:3}" > /dev/null
}

# The interleaved runtime, the server's threads and the Python module under
# the sanitizers SANITIZE, built in DIR (configured with CMAKE OPTIONS),
# with the lit tests matching TESTS
# (a regular expression); RUNTIME is the sanitizer's shared
# runtime, preloaded into the (uninstrumented) Python interpreter together
# with libstdc++ (loaded after it, the sanitizer finds no __cxa_throw to
# intercept and aborts at the first C++ exception).
threads_and_interleaving() {  # DIR SANITIZE TESTS RUNTIME [CMAKE OPTIONS...]
  local dir=$1 deciding=(beam decode deep_decide halting if_computed item_host logical_computed
    nested_loop top_k tree_decode graphs)
  local drivers=() name
  for name in "${deciding[@]}"; do drivers+=("conformance_${name}_driver"); done
  configure "$dir" "$2" "${@:5}"
  echo "== $2: building (log: $dir/threads-build.log)" >&2
  cmake --build "$dir" -j"$(nproc)" --target foldc foldc_unit_tests calculator_driver \
    seq2seq_driver sentiment_driver sentiment_python seq2seq_python sst_to_jsonl \
    "${drivers[@]}" > "$dir/threads-build.log" 2>&1 ||
    { tail -30 "$dir/threads-build.log" >&2; return 1; }
  echo "== $2: the conformance programs that decide on computed values" >&2
  for name in "${deciding[@]}"; do
    bash test/Execution/conformance/check.sh "$dir/test/Execution/conformance/conformance_${name}_driver" \
      "test/Execution/conformance/$name.fold" "$dir/test/Execution/conformance/$name"
  done
  echo "== $2: serving, threads, seq2seq" >&2
  python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv "$dir/test" \
    --filter "Execution/($3)\.test"
  echo "== $2: the batch queue's unit tests" >&2
  "$dir/test/foldc_unit_tests" --gtest_filter='BatchQueue*'
  echo "== $2: the Python modules (GIL released; threads sharing a model)" >&2
  FOLDC_PYTHON_PATH=$dir/examples/python FOLDC_DRIVER=$dir/examples/sentiment_driver \
    FOLDC_SEQ2SEQ_DRIVER=$dir/examples/seq2seq_driver \
    FOLDC_SST_TO_JSONL=$dir/examples/sentiment/sst_to_jsonl \
    FOLDC_SST_DEV=$PWD/examples/sentiment/data/sst/dev.txt \
    LD_PRELOAD="$4 $($CXX -print-file-name=libstdc++.so)" /usr/bin/python3 -m pytest -q -p no:cacheprovider test/Python
}

if [ "$quick" = threads ]; then
  threads_and_interleaving build-sanitize address,undefined \
    "serve|serve-faults|serve-hostile|threads|seq2seq|deep-decisions" "$($CXX -print-file-name=libasan.so)"
  # Not deep-decisions: TSan's own unwinder fails a check on data 10^5
  # levels deep (and then hangs), whatever the program does. Drivers without
  # MPI: Open MPI's uninstrumented threads (libevent, PMIx) report races of
  # their own even in a run without mpirun.
  # The same reason: serve-hostile's deep request is 3,000 levels deep, and
  # test/Python leaves out its 10^5-deep tree.
  FOLDC_SERVE_DEEP=3000 FOLDC_SKIP_DEEP=1 threads_and_interleaving build-tsan thread \
    "serve|serve-faults|serve-hostile|threads|seq2seq" \
    "$($CXX -print-file-name=libtsan.so)" -DFOLDC_MPI=OFF
  echo "sanitize --threads: all passed"
  exit
fi
configure build-sanitize address,undefined
if [ "$quick" = 1 ]; then
  cmake --build build-sanitize -j"$(nproc)" --target foldc foldc_unit_tests
  build-sanitize/test/foldc_unit_tests
  cd build-sanitize/test
  python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv -j"$(nproc)" Parser Types Batching Codegen Tools
  exit
fi
cmake --build build-sanitize -j"$(nproc)"
ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"
