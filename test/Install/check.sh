#!/usr/bin/env bash
# Installs the foldc build in BUILD_DIR into a fresh prefix, then configures
# and builds test/Install/CMakeLists.txt (an out-of-tree project) against it
# with every program of examples/ (and one with the Unix Makefiles
# generator), and runs two of the generated drivers; then loads a model
# with the installed Python package and runs one with `foldc run`.
# usage: check.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
source_dir=$1 build_dir=$2 work=$3
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/foldc"
test -f "$work/prefix/lib/cmake/Foldc/FoldcConfig.cmake"
test -f "$work/prefix/include/foldc/runtime/model/Model.h"
test ! -e "$work/prefix/include/runtime"
# What a user needs besides the compiler: the docs, the examples with their
# data tools, and sst_to_jsonl, which converts the installed treebank.
for doc in README.md language.md runtime.md; do test -f "$work/prefix/share/doc/foldc/$doc"; done
examples="$work/prefix/share/foldc/examples"
test -f "$examples/sentiment/sentiment.fold" -a -f "$examples/calculator/make_data.py"
"$work/prefix/bin/sst_to_jsonl" "$examples/sentiment/data/sst/dev.txt" -o "$work/sst" 2> /dev/null
test "$(wc -l < "$work/sst/dev.jsonl")" = 1101
test -x "$work/prefix/bin/foldc-plot-curve"
# The programs are copied so that the test can edit one (below).
mkdir -p "$work/src"
cp "$source_dir"/examples/*/*.fold "$work/src/"
programs=$(ls "$work"/src/*.fold | paste -sd ';')
# This project opts in to -march=native (FOLDC_NATIVE); the Makefiles one
# below does not.
cmake -S "$source_dir/test/Install" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DFOLD_FILES="$programs" -DFOLDC_NATIVE=ON >/dev/null
cmake --build "$work/build"
grep -q -- "-march=native" "$work/build/build.ninja"
for program in "$source_dir"/examples/*/*.fold; do
  test -x "$work/build/$(basename "$program" .fold)_driver"
done
# A build with nothing changed does nothing (not even run foldc again).
if ! cmake --build "$work/build" | grep -q "no work to do"; then
  echo "install: a second build with nothing changed did work" >&2
  exit 1
fi
# Editing a .fold file regenerates its code; a change that leaves the
# generated C++ as it was (a comment) recompiles nothing.
echo "// edited" >> "$work/src/calculator.fold"
cmake --build "$work/build" > "$work/rebuild.log"
grep -q "foldc: compiling" "$work/rebuild.log"
if grep -q "Building CXX" "$work/rebuild.log"; then
  echo "install: an unchanged generated file was recompiled" >&2
  exit 1
fi
sed -i 's/const H = 32;/const H = 16;/' "$work/src/calculator.fold"
cmake --build "$work/build" > "$work/rebuild.log"
grep -q "Building CXX object CMakeFiles/calculator.dir" "$work/rebuild.log"
# The drivers run: the calculator trains a little, and its library is a model.
python3 "$source_dir/examples/calculator/make_data.py" 50 1 > "$work/calc.jsonl"
"$work/build/calculator_driver" train --data "$work/calc.jsonl" --epochs 2 --save "$work/calc.st"
"$work/build/calculator_driver" infer --data "$work/calc.jsonl" --params "$work/calc.st" --limit 3
# The Python package installed beside foldc: foldc.load compiles a model
# against the installed runtime and `foldc run` runs its driver, naming no
# path of the build tree.
site=$(echo "$work"/prefix/lib/python3*/dist-packages)
test -f "$site/foldc/_config.py"
if grep -q "$build_dir" "$site/foldc/_config.py"; then
  echo "install: the installed Python package names the build tree" >&2
  exit 1
fi
FOLDC_CACHE="$work/cache" PYTHONPATH="$site" python3 -c "
import json, foldc
m = foldc.load('$work/src/calculator.fold')
model = m.Model()
model.load('$work/calc.st')
print(model.infer([json.loads(open('$work/calc.jsonl').readline())]))
assert foldc.last_load['compiled'] and foldc.last_load['module'].startswith('$work/cache')
"
FOLDC_CACHE="$work/cache" "$work/prefix/bin/foldc" run "$work/src/calculator.fold" infer \
  --data "$work/calc.jsonl" --params "$work/calc.st" --limit 2 > "$work/run.jsonl"
test "$(wc -l < "$work/run.jsonl")" = 2
# Where MPI is, the drivers train data-parallel under mpirun.
if command -v mpirun > /dev/null; then
  mpirun --allow-run-as-root --oversubscribe -np 2 "$work/build/calculator_driver" train \
    --data "$work/calc.jsonl" --epochs 1 | grep -q '"ranks":2'
fi
# CMake's default generator (Unix Makefiles) and no CMAKE_BUILD_TYPE, as the
# README shows: the model builds (foldc creates the folders of -o and
# --depfile itself), optimised, and an edit runs foldc once.
cmake -S "$source_dir/test/Install" -B "$work/make" -G "Unix Makefiles" \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DFOLD_FILES="$work/src/attention.fold" >/dev/null
cmake --build "$work/make" -j2 -- VERBOSE=1 > "$work/make.log"
test -x "$work/make/attention_driver"
for source in attention.cpp attention_main.cpp; do
  if ! grep -- "-O2 .*-c .*/$source" "$work/make.log" | grep -q EIGEN_NO_DEBUG; then
    echo "install: $source was not compiled with -O2 -DEIGEN_NO_DEBUG without a build type" >&2
    exit 1
  fi
  # Not for this CPU (nor its warning flags) unless asked, with the runtime's
  # Eigen alignment.
  line=$(grep -- "-c .*/$source" "$work/make.log")
  if [[ $line == *-march=native* || $line == *-Wno-* || $line != *-DEIGEN_MAX_ALIGN_BYTES=64* ]]; then
    echo "install: $source: -march=native or the runtime's -Wno-... without FOLDC_NATIVE, or no EIGEN_MAX_ALIGN_BYTES=64" >&2
    exit 1
  fi
done
# That portable model trains against the runtime (built for this CPU here):
# their Eigen matrices are allocated and freed alike.
python3 "$source_dir/test/Execution/Inputs/random_data.py" attention 40 1 > "$work/attention.jsonl"
"$work/make/attention_driver" train --data "$work/attention.jsonl" --epochs 2 > /dev/null
echo "// edited" >> "$work/src/attention.fold"
cmake --build "$work/make" -j2 > "$work/make.log"
if [ "$(grep -c "foldc: compiling" "$work/make.log")" != 1 ]; then
  echo "install: one edit ran foldc $(grep -c "foldc: compiling" "$work/make.log") times under Make" >&2
  exit 1
fi
echo "install: every example built out of tree against the installed foldc (Ninja; attention with Makefiles, no build type, too)"
