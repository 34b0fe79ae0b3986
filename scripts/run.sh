#!/usr/bin/env bash
# The main job, as far as the compiler goes today: build foldc, compile every
# program in examples/ to its typed signatures and batch plan, and convert the
# Stanford Sentiment Treebank to sentiment.fold's JSON Lines input.
# (Training the sentiment model joins when code generation lands: issue 5.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
for program in examples/*/*.fold; do
  echo "== $program" >&2
  build/tools/foldc --emit=types "$program"
  build/tools/foldc --emit=plan "$program" > "build/$(basename "$program" .fold).plan"
  echo "   batch plan: build/$(basename "$program" .fold).plan" >&2
done
build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
