#!/usr/bin/env bash
# What a user waits for in foldc.load: a cold load (empty cache: foldc, the
# C++ compile, the import) and a warm one (a new process, the model in the
# cache), on one core (taskset -c 0) and with ccache off, for the sentiment
# model and the largest example (the tagger). Prints a table against the
# targets of issue 48; progress on stderr.
# usage: bash bench/compile_bench.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CCACHE_DISABLE=1 PYTHONPATH="$PWD/$build/python"
load() {  # MODEL.fold CACHE: seconds of foldc.load in a new process on core 0, and whether it compiled
  FOLDC_CACHE=$2 taskset -c 0 /usr/bin/python3 -c "
import time
began = time.monotonic()
import foldc
m = foldc.load('$1')
print(f'{time.monotonic() - began:.2f} {foldc.last_load[\"compiled\"]}')"
}
echo "| model | generated C++ | cold load (s) | target | warm load (s) | target |"
echo "| --- | --- | --- | --- | --- | --- |"
for model in examples/sentiment/sentiment.fold:5 examples/tagger/tagger.fold:10; do
  file=${model%:*} cold_target=${model#*:}
  name=$(basename "$file" .fold)
  echo "compile_bench: $name, cold" >&2
  read -r cold compiled < <(load "$file" "$work/$name")
  [ "$compiled" = True ] || { echo "compile_bench: $name did not compile cold" >&2; exit 1; }
  echo "compile_bench: $name, warm" >&2
  read -r warm compiled < <(load "$file" "$work/$name")
  [ "$compiled" = False ] || { echo "compile_bench: $name compiled again warm" >&2; exit 1; }
  size=$("$build/tools/foldc" "$file" --emit=cpp 2>/dev/null | wc -c)
  echo "| $name | $((size / 1024)) KB | $cold | ≤ $cold_target | $warm | ≤ 0.3 |"
done
