#!/usr/bin/env bash
# The main job: build foldc, then compile every program in examples/ (today: to its types).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
for program in examples/*/*.fold; do
  echo "== $program" >&2
  build/tools/foldc --emit=types "$program"
done
