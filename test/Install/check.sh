#!/usr/bin/env bash
# Installs the foldc build in BUILD_DIR into a fresh prefix, then configures
# and builds test/Install/CMakeLists.txt (an out-of-tree project) against it
# with every program of examples/ (and one with the Unix Makefiles
# generator), and runs two of the generated drivers.
# usage: check.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
source_dir=$1 build_dir=$2 work=$3
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/foldc"
test -f "$work/prefix/lib/cmake/Foldc/FoldcConfig.cmake"
# The programs are copied so that the test can edit one (below).
mkdir -p "$work/src"
cp "$source_dir"/examples/*/*.fold "$work/src/"
programs=$(ls "$work"/src/*.fold | paste -sd ';')
cmake -S "$source_dir/test/Install" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DFOLD_FILES="$programs" >/dev/null
cmake --build "$work/build"
for program in "$source_dir"/examples/*/*.fold; do
  test -x "$work/build/$(basename "$program" .fold)_driver"
done
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
# CMake's default generator (Unix Makefiles) builds a model too: foldc
# creates the folders of -o and --depfile itself.
cmake -S "$source_dir/test/Install" -B "$work/make" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DFOLD_FILES="$work/src/attention.fold" >/dev/null
cmake --build "$work/make" -j2 >/dev/null
test -x "$work/make/attention_driver"
echo "install: every example built out of tree against the installed foldc (Ninja; attention with Makefiles too)"
