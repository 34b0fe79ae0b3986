#!/usr/bin/env bash
# The whole test suite from a clean clone: deps, build (warnings are errors),
# the formatting check, then every lit suite and unit test through ctest,
# then short runs of the libFuzzer targets. While the long tests run (random
# programs, the install test), a line a minute says how many are done.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/format.sh --check
total=$(ctest --test-dir build -N | sed -n 's/^Total Tests: //p')
log=build/ctest-progress.log
: > "$log"
start=$(date +%s)
(
  while sleep 60; do
    echo "test.sh: $(grep -c ' Test  *#' "$log") of $total tests done after $((($(date +%s) - start) / 60)) min" >&2
  done
) &
ticker=$!
trap 'kill $ticker 2> /dev/null || true' EXIT
ctest --test-dir build --output-on-failure -j"$(nproc)" | tee "$log"
# Short runs of the libFuzzer targets (their own clang build in build-fuzz/).
bash scripts/fuzz.sh short 15
