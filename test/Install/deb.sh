#!/usr/bin/env bash
# Makes foldc's Debian package from BUILD_DIR (cpack -G DEB), unpacks it into
# a scratch root (dpkg-deb -x: no root rights, no container) and, from that
# root alone, compiles and loads a model with the Python package and trains
# one with `foldc run`.
# usage: deb.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
source_dir=$1 build_dir=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
(cd "$work" && cpack -G DEB --config "$build_dir/CPackConfig.cmake" > cpack.log)
deb=$(ls "$work"/foldc_*.deb)
depends=$(dpkg-deb --field "$deb" Depends)
[[ $depends == *libeigen3-dev* ]] || { echo "deb: Depends: $depends" >&2; exit 1; }
dpkg-deb -x "$deb" "$work/root"
usr=$work/root/usr
for file in bin/foldc lib/cmake/Foldc/FoldcConfig.cmake include/foldc/runtime/model/Model.h \
    lib/python3/dist-packages/foldc/__init__.py lib/python3/dist-packages/foldc/_config.py; do
  test -e "$usr/$file" || { echo "deb: no $file" >&2; exit 1; }
done
if grep -rq "$build_dir" "$usr/lib/python3/dist-packages/foldc" "$usr/lib/cmake/Foldc"; then
  echo "deb: the package names the build tree" >&2
  exit 1
fi
python3 "$source_dir/examples/calculator/make_data.py" 20 1 > "$work/calc.jsonl"
FOLDC_CACHE="$work/cache" PYTHONPATH="$usr/lib/python3/dist-packages" /usr/bin/python3 -c "
import json, foldc
m = foldc.load('$source_dir/examples/calculator/calculator.fold')
assert foldc.last_load['module'].startswith('$work/cache')
assert foldc._config.FOLDC == '$usr/bin/foldc', foldc._config.FOLDC
print('deb: foldc.load:', m.Model(seed=1).eval([json.loads(l) for l in open('$work/calc.jsonl')]))
"
FOLDC_CACHE="$work/cache" "$usr/bin/foldc" run "$source_dir/examples/calculator/calculator.fold" \
  train --data "$work/calc.jsonl" --epochs 1 > "$work/train.jsonl"
grep -q '"epoch":1' "$work/train.jsonl"
echo "deb: $(basename "$deb") ($(du -h "$deb" | cut -f1)) unpacked: foldc.load and foldc run work from it alone"
