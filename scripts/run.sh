#!/usr/bin/env bash
# The main job: install and build; compile every program in examples/ to its
# typed signatures and batch plan; convert the Stanford Sentiment Treebank to
# sentiment.fold's JSON Lines; train the generated sentiment model (built by
# foldc_add_model) for a short run and print its dev accuracy.
# The full run is in examples/sentiment/README.md.
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

EPOCHS=${EPOCHS:-4}
echo "== training examples/sentiment on SST: $EPOCHS epochs (one JSON line per epoch)" >&2
build/examples/sentiment_driver train --data build/sst/train.jsonl --dev build/sst/dev.jsonl \
  --epochs "$EPOCHS" --optimizer adagrad --lr 0.05 --batch-size 25 \
  --save build/sentiment.safetensors --curve build/sentiment_curve.csv
echo "== the saved (best dev loss) parameters on SST dev" >&2
build/examples/sentiment_driver eval --data build/sst/dev.jsonl --params build/sentiment.safetensors |
  python3 -c 'import json, sys; r = json.load(sys.stdin); print(json.dumps(r)); print(
    "dev accuracy: %.1f%% of roots, %.1f%% of all nodes (%d trees)"
    % (100 * r["root_hits"], 100 * r["all_hits"], r["examples"]))'
echo "   learning curve: build/sentiment_curve.csv" >&2
