#!/usr/bin/env bash
# Tests foldc on inputs nobody wrote.
#
#   bash scripts/fuzz.sh programs [--count N] [--seed S]
#       N random well-typed programs (test/fuzz/generate.py, seeds S..S+N-1)
#       with data: each must compile with foldc, build with -Werror, and pass
#       test/fuzz/check_program.sh. Ends with "N passed, M failed"; failing
#       cases are kept (program, data, logs, why) under build/fuzz/failures/.
#
#   bash scripts/fuzz.sh frontend|jsonl|safetensors [--seconds T]
#       runs a libFuzzer target (test/fuzz/targets, built with clang and
#       -fsanitize=fuzzer,address,undefined into build-fuzz/) for T seconds
#       (default 60), seeded from the project's .fold files, JSONL lines or a
#       valid parameter file. A crash prints its reproducer, kept under
#       build-fuzz/crashes/TARGET/ (rerun: build-fuzz/.../fuzz_TARGET FILE).
#
# `programs` builds foldc first (scripts/build.sh) unless FOLDC_FUZZ_NO_BUILD=1,
# and uses the build in FOLDC_BUILD_DIR (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() { sed -n '2,20p' "$0" >&2; exit 2; }

programs() {
  local count=20 seed=1
  while [ $# -gt 0 ]; do
    case $1 in
      --count) count=$2; shift 2 ;;
      --seed) seed=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  [ "${FOLDC_FUZZ_NO_BUILD:-0}" = 1 ] || bash scripts/build.sh
  local build=${FOLDC_BUILD_DIR:-$root/build}
  local work=$build/fuzz/programs-$seed-$count failures=$build/fuzz/failures
  rm -rf "$work"
  mkdir -p "$work/programs" "$failures"
  echo "fuzz: installing foldc into $work/prefix" >&2
  cmake --install "$build" --prefix "$work/prefix" > /dev/null
  local foldc=$work/prefix/bin/foldc
  echo "fuzz: generating $count programs from seed $seed" >&2
  local s dir
  for ((s = seed; s < seed + count; s++)); do
    dir=$work/programs/p$s
    python3 test/fuzz/generate.py "$s" "$dir"
    if ! "$foldc" --emit=cpp "$dir/prog.fold" > /dev/null 2> "$dir/foldc.log"; then
      echo "foldc rejected the program (exit $?)" > "$dir/rejected"
    fi
  done
  echo "fuzz: building them (one CMake project)" >&2
  cmake -S test/fuzz -B "$work/build" -G Ninja -DPROGRAMS_DIR="$work/programs" \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
  cmake --build "$work/build" -j"$(nproc)" -- -k 0 > "$work/build.log" 2>&1 || true
  local passed=0 failed=0 why
  for ((s = seed; s < seed + count; s++)); do
    dir=$work/programs/p$s
    if [ -f "$dir/rejected" ]; then
      why=$(cat "$dir/rejected")
    elif [ ! -x "$work/build/p${s}_driver" ]; then
      why="the generated C++ did not build (see build.log)"
      grep -A3 "p$s\.foldc" "$work/build.log" | grep -m5 "error" > "$dir/build-errors.log" || true
    elif ! why=$(bash test/fuzz/check_program.sh "$work/build/p${s}_driver" "$dir/prog.jsonl" "$dir/run"); then
      :
    else
      passed=$((passed + 1))
      continue
    fi
    failed=$((failed + 1))
    echo "fuzz: seed $s failed: $why" >&2
    rm -rf "$failures/seed-$s"
    cp -r "$dir" "$failures/seed-$s"
    echo "$why" > "$failures/seed-$s/why"
  done
  [ "$failed" -eq 0 ] || echo "fuzz: failing cases kept under $failures" >&2
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

libfuzzer() {
  local target=$1 seconds=60
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --seconds) seconds=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  bash scripts/install-deps.sh
  local build=$root/build-fuzz
  CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFOLDC_FUZZ=ON \
    -DFOLDC_BUILD_TESTS=OFF -DFOLDC_BUILD_BENCH=OFF -DFOLDC_NATIVE=OFF > /dev/null
  cmake --build "$build" -j"$(nproc)" --target "fuzz_$target"
  local corpus=$build/corpus/$target crashes=$build/crashes/$target
  mkdir -p "$corpus" "$crashes"
  case $target in
    frontend) cp examples/*/*.fold "$corpus/" 2>/dev/null
              find test -name '*.fold' -exec cp -t "$corpus/" {} + 2>/dev/null || true ;;
    jsonl) find test examples -name '*.jsonl' | while read -r f; do
             split -l 1 -a 4 "$f" "$corpus/$(basename "$f" .jsonl)_"; done ;;
    safetensors) python3 test/fuzz/targets/seed_safetensors.py "$corpus/seed.safetensors" ;;
  esac
  "$build/test/fuzz/targets/fuzz_$target" "$corpus" -max_total_time="$seconds" \
    -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 | grep -E "^(Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" || true
  if ls "$crashes"/crash-* "$crashes"/leak-* "$crashes"/timeout-* > /dev/null 2>&1; then
    echo "fuzz: $target: reproducers in $crashes" >&2
    return 1
  fi
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
  programs) programs "$@" ;;
  frontend|jsonl|safetensors) libfuzzer "$command" "$@" ;;
  *) usage ;;
esac
