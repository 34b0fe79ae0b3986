#!/usr/bin/env bash
# Tests foldc on inputs nobody wrote.
#
#   bash scripts/fuzz.sh programs [--count N] [--seed S] [--group-size G] [--no-reduce]
#       N random well-typed programs (test/fuzz/generate.py, seeds S..S+N-1)
#       with data: each must compile with foldc, build with -Werror (clang++-14
#       unless CXX is set; G programs to a unity build, default 20), and pass
#       test/fuzz/check_program.sh. Ends with "N passed, M failed"; failing
#       cases are kept (program, data, logs, why) under build/fuzz/failures/,
#       reduced by test/fuzz/reduce.py to what still fails the same way.
#
#   bash scripts/fuzz.sh long-run [--count N] [--seed S] [--chunk C]
#       `programs` over seeds S..S+N-1 (default 10000 from 100001) in runs of
#       C (default 200), each recorded as one line of test/fuzz/long-run.log
#       ("seeds A..B: P passed, F failed", kept in the repository as the
#       record of the documented run) and its work folder then removed
#       (failures stay under build/fuzz/failures/). Resumable, across
#       checkouts too: a chunk the log already holds is skipped. Prints the
#       totals at the end.
#
#   bash scripts/fuzz.sh frontend|jsonl|safetensors|request|vectors [--seconds T] [--runs N]
#       runs a libFuzzer target (test/fuzz/targets, built with clang and
#       -fsanitize=fuzzer,address,undefined into build-fuzz/) for T seconds
#       (default 60) or N inputs, whichever ends first, seeded from the
#       project's .fold files, JSONL lines, a valid parameter file, request
#       bodies or a vectors file. A crash prints its reproducer, kept under
#       build-fuzz/crashes/TARGET/ (rerun: build-fuzz/.../fuzz_TARGET FILE).
#
#   bash scripts/fuzz.sh regressions
#       the programs kept in test/fuzz/regressions/ (each once failed a
#       check) through the checks of `programs` again.
#
#   bash scripts/fuzz.sh short [SECONDS]
#       every libFuzzer target for SECONDS (default 15) each: CI's run.
#
# `programs` builds foldc first (scripts/build.sh) unless FOLDC_FUZZ_NO_BUILD=1,
# and uses the build in FOLDC_BUILD_DIR (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# The interpreter itself, not a version manager's shim in front of it (pyenv's
# costs 0.6 s a start, more than checking a program); check_program.sh uses it,
# and so do the script's own runs for each program, which inherit it.
PYTHON3=${PYTHON3:-$(python3 -c 'import sys; print(sys.executable)')}
export PYTHON3

usage() { sed -n '2,/^set /{/^#/p}' "$0" >&2; exit 2; }

programs() {
  local count=20 seed=1 group_size=20 reduce=1
  while [ $# -gt 0 ]; do
    case $1 in
      --count) count=$2; shift 2 ;;
      --seed) seed=$2; shift 2 ;;
      --group-size) group_size=$2; shift 2 ;;
      --no-reduce) reduce=0; shift ;;
      *) usage ;;
    esac
  done
  [ "${FOLDC_FUZZ_NO_BUILD:-0}" = 1 ] || bash scripts/build.sh
  local build=${FOLDC_BUILD_DIR:-$root/build}
  local work=$build/fuzz/programs-$seed-$count failures=$build/fuzz/failures
  rm -rf "$work"
  mkdir -p "$work/programs" "$failures"
  install_foldc "$build" "$work/prefix"
  echo "fuzz: generating $count programs from seed $seed" >&2
  local s dir dirs=() # the folder of seed s is dirs[s - seed], in its group's
  for ((s = seed; s < seed + count; s++)); do
    dirs+=("$work/programs/g$(((s - seed) / group_size))/p$s")
  done
  for ((s = seed; s < seed + count; s++)); do
    echo "$s ${dirs[s - seed]}"
  done | "$PYTHON3" test/fuzz/generate.py -
  echo "fuzz: compiling them with foldc ($(nproc) at a time)" >&2
  printf '%s\n' "${dirs[@]}" | xargs -P "$(nproc)" -I{} bash "$0" compile-program "$work/prefix" {}
  build_groups "$work"
  echo "fuzz: running the checks ($(nproc) at a time)" >&2
  printf '%s\n' "${dirs[@]}" | xargs -P "$(nproc)" -I{} bash "$0" verdict-into "$work" {}
  local passed=0 failed=0 why
  for ((s = seed; s < seed + count; s++)); do
    dir=${dirs[s - seed]}
    if [ -f "$dir/failed" ]; then
      why=$(cat "$dir/failed")
      failed=$((failed + 1))
      echo "fuzz: seed $s failed: $why" >&2
      keep_failure "$work" "$dir" "$failures/seed-$s" "$why" "$reduce"
    else
      passed=$((passed + 1))
    fi
  done
  [ "$failed" -eq 0 ] || echo "fuzz: failing cases kept under $failures" >&2
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

install_foldc() {  # BUILD PREFIX
  echo "fuzz: installing foldc into $2" >&2
  cmake --install "$1" --prefix "$2" > /dev/null
}

# foldc's C++ for DIR/prog.fold into DIR/gen, in a namespace of the program's
# own (pN) so that a group's programs can share a translation unit. A
# rejection is a failure: the generator writes well-typed programs only.
compile_program() {  # PREFIX DIR
  local name
  name=$(basename "$2")
  if ! "$1/bin/foldc" "$2/prog.fold" -o "$2/gen" --output-name "$name" --namespace "$name" 2> "$2/foldc.log"; then
    echo "foldc rejected the program: $(grep -m1 -o 'error: .*' "$2/foldc.log")" > "$2/why"
  fi
}

# Builds every group (test/fuzz/CMakeLists.txt). A program whose C++ does not
# build is named by the diagnostics (its gen/ path), marked excluded with why,
# and its group is built again without it.
build_groups() {  # WORK
  local work=$1 round log culprit
  local cxx=${CXX:-$(command -v clang++-14 || echo c++)}
  for round in 1 2 3; do
    echo "fuzz: building (one CMake project, one unity build per group; round $round)" >&2
    log=$work/build-$round.log
    CXX=$cxx cmake -S test/fuzz -B "$work/build" -G Ninja -DPROGRAMS_DIR="$work/programs" \
      -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
    cmake --build "$work/build" -j"$(nproc)" -- -k 0 > "$log" 2>&1 && return 0
    local culprits
    culprits=$(grep -o "$work/programs/g[0-9]*/p[0-9]*/gen/" "$log" | sort -u || true)
    [ -n "$culprits" ] || return 0  # a group that did not link: its programs fail in verdict
    for culprit in $culprits; do
      culprit=${culprit%/gen/}
      echo "the generated C++ did not build" > "$culprit/why"
      grep -A2 "$culprit/gen/.*error" "$log" | head -20 > "$culprit/build-errors.log"
      touch "$culprit/excluded"
    done
  done
}

# The verdict on DIR, kept for `programs` to count: DIR/failed says why.
verdict_into() {  # WORK DIR
  local why
  why=$(verdict "$1" "$2") || echo "$why" > "$2/failed"
  local seed=${2##*/p}
  if ((seed % 50 == 0)); then echo "fuzz: checked up to seed $seed" >&2; fi
}

# Prints why the program in DIR failed and returns 1, or returns 0.
verdict() {  # WORK DIR
  local work=$1 dir=$2 group name
  group=$(basename "$(dirname "$dir")")
  name=$(basename "$dir")
  if [ -f "$dir/why" ]; then
    cat "$dir/why"
    return 1
  fi
  if [ ! -x "$work/build/${group}_driver" ]; then
    echo "the driver of its group did not build (see $work/build-*.log)"
    return 1
  fi
  bash test/fuzz/check_program.sh "$dir/prog.jsonl" "$dir/run" "$work/build/${group}_driver" "$name"
}

# Keeps a failing case under TO with its seed (in the program's first line)
# and why, reduced (test/fuzz/reduce.py) unless REDUCE is 0.
keep_failure() {  # WORK DIR TO WHY REDUCE
  local work=$1 dir=$2 to=$3 why=$4 reduce=$5
  rm -rf "$to"
  mkdir -p "$to"
  cp -r "$dir"/. "$to/"
  echo "$why" > "$to/why"
  [ "$reduce" = 1 ] || return 0
  echo "fuzz: reducing $to" >&2
  python3 test/fuzz/reduce.py "$to" "$why" -- bash "$0" verdict-of "$work/prefix" || true
}

# The verdict on one program folder alone (for the reducer): compiled, built
# as a group of one in DIR/.work, checked; prints why it fails, if it does.
verdict_of() {  # PREFIX DIR
  local prefix=$1 dir=$2 work
  work=$dir/.work
  rm -rf "$work"
  mkdir -p "$work/programs/g0/p0"
  cp "$dir"/prog* "$work/programs/g0/p0/"  # prog_SEED.h too, when it imports
  ln -s "$prefix" "$work/prefix"
  compile_program "$prefix" "$work/programs/g0/p0"
  [ -f "$work/programs/g0/p0/why" ] || build_groups "$work" > /dev/null 2>&1
  verdict "$work" "$work/programs/g0/p0"
}

fuzz_targets="frontend jsonl safetensors request vectors"

# Builds the libFuzzer targets named (clang, ASan, UBSan) in build-fuzz/.
build_fuzzers() {
  bash scripts/install-deps.sh
  # Configured once (configuring again would generate the parser again).
  [ -f "$root/build-fuzz/build.ninja" ] ||
    CXX=clang++-14 cmake -S . -B "$root/build-fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFOLDC_FUZZ=ON -DFOLDC_BUILD_TESTS=OFF -DFOLDC_BUILD_BENCH=OFF -DFOLDC_NATIVE=OFF \
      -DFOLDC_WERROR=ON > /dev/null # clang's warnings are errors too
  cmake --build "$root/build-fuzz" -j"$(nproc)" --target "$@"
}

# Every libFuzzer target for a short while (CI's run): fails on any crash.
short() {
  local seconds=${1:-15} target failed=0
  build_fuzzers $(printf 'fuzz_%s ' $fuzz_targets)
  for target in $fuzz_targets; do
    echo "fuzz: $target for $seconds s" >&2
    libfuzzer "$target" --seconds "$seconds" || failed=1
  done
  return $failed
}

libfuzzer() {
  local target=$1 seconds=60 runs=-1
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --seconds) seconds=$2; shift 2 ;;
      --runs) runs=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  build_fuzzers "fuzz_$target"
  local build=$root/build-fuzz
  local corpus=$build/corpus/$target crashes=$build/crashes/$target
  mkdir -p "$corpus" "$crashes"
  case $target in
    frontend) cp examples/*/*.fold "$corpus/" 2>/dev/null
              find test -name '*.fold' -exec cp -t "$corpus/" {} + 2>/dev/null || true ;;
    jsonl) find test examples -name '*.jsonl' | while read -r f; do
             split -l 1 -a 4 "$f" "$corpus/$(basename "$f" .jsonl)_"; done ;;
    safetensors) python3 test/fuzz/targets/seed_safetensors.py "$corpus/seed.safetensors" ;;
    request) printf '[]' > "$corpus/empty"
             printf '{"tree": {"Tip": {"leaf": {"word": 1, "weight": 0.5}}}, "next": null, "ids": [1], "pairs": [[1, 2.0]], "flag": true, "maybe": null, "nested": [[1]]}' > "$corpus/one"
             printf '[%s, {"tree": 3}]' "$(cat "$corpus/one")" > "$corpus/array" ;;
    vectors) printf 'sat 1 2 3\nthe 0.5 -0.5 0.25\ndog 9 9 9\n' > "$corpus/glove"
             printf '2 3\ncat 1 2 3\nmat 4 5 6\n' > "$corpus/word2vec"
             printf 'a b 1 2 3\n\0a b\nc\n' > "$corpus/spaces" ;;
  esac
  "$build/test/fuzz/targets/fuzz_$target" "$corpus" -max_total_time="$seconds" -runs="$runs" \
    -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 | grep -E "^(Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" || true
  if ls "$crashes"/crash-* "$crashes"/leak-* "$crashes"/timeout-* > /dev/null 2>&1; then
    echo "fuzz: $target: reproducers in $crashes" >&2
    return 1
  fi
}

# `programs` over many seeds, a chunk at a time, resumable (see the top).
long_run() {
  local count=10000 seed=100001 chunk=200
  while [ $# -gt 0 ]; do
    case $1 in
      --count) count=$2; shift 2 ;;
      --seed) seed=$2; shift 2 ;;
      --chunk) chunk=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  [ "${FOLDC_FUZZ_NO_BUILD:-0}" = 1 ] || bash scripts/build.sh
  local build=${FOLDC_BUILD_DIR:-$root/build}
  local log=${FOLDC_FUZZ_LOG:-$root/test/fuzz/long-run.log} first last n result
  mkdir -p "$build/fuzz"
  touch "$log"
  for ((first = seed; first < seed + count; first += chunk)); do
    n=$((seed + count - first < chunk ? seed + count - first : chunk))
    last=$((first + n - 1))
    if grep -q "^seeds $first\.\.$last:" "$log"; then continue; fi
    echo "fuzz: long run, seeds $first..$last" >&2
    result=$(FOLDC_FUZZ_NO_BUILD=1 programs --count "$n" --seed "$first" | tail -1) || true
    if ! [[ $result =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
      echo "fuzz: the run of seeds $first..$last did not finish (kept in $build/fuzz/programs-$first-$n)" >&2
      return 1
    fi
    echo "seeds $first..$last: $result ($(date -u +%FT%TZ))" >> "$log"
    rm -rf "$build/fuzz/programs-$first-$n"
  done
  awk -v a="$seed" -v b="$((seed + count - 1))" '
    { split(substr($2, 1, length($2) - 1), r, /\.\./) }
    r[1] >= a && r[2] <= b { p += $3; f += $5; c++ }
    END { printf "long run, seeds %d..%d: %d chunks, %d passed, %d failed\n", a, b, c, p, f }' "$log"
}

# Every kept failure of test/fuzz/regressions/ through the checks again.
regressions() {
  local build=${FOLDC_BUILD_DIR:-$root/build} dir failed=0
  local work=$build/fuzz/regressions
  rm -rf "$work"
  mkdir -p "$work"
  install_foldc "$build" "$work/prefix"
  for dir in test/fuzz/regressions/*/; do
    mkdir -p "$work/$(basename "$dir")"
    cp "$dir"/prog* "$work/$(basename "$dir")/"
    if why=$(verdict_of "$work/prefix" "$work/$(basename "$dir")"); then
      echo "fuzz: $(basename "$dir") passed"
    else
      echo "fuzz: $(basename "$dir") failed: $why"
      failed=1
    fi
  done
  return $failed
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
  programs) programs "$@" ;;
  long-run) long_run "$@" ;;
  verdict-of) verdict_of "$@" ;;
  verdict-into) verdict_into "$@" ;;
  compile-program) compile_program "$@" ;;
  frontend|jsonl|safetensors|request|vectors) libfuzzer "$command" "$@" ;;
  short) short "$@" ;;
  regressions) regressions ;;
  *) usage ;;
esac
