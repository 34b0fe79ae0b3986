#!/usr/bin/env bash
# The tagger example end to end: builds foldc and the model's driver, makes
# the synthetic part-of-speech data (make_data.py: a small grammar, made-up
# words with their class's suffixes, noun/verb ambiguity, 2% annotation
# noise), trains with Adam, keeps the parameters of the best dev accuracy,
# and prints the test accuracy beside the most-frequent-tag baseline's.
# EPOCHS (default 4) and TRAIN (default 3000 sentences) change the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
EPOCHS=${EPOCHS:-4}
TRAIN=${TRAIN:-3000}
source examples/common.sh
build_example tagger
echo "== making $TRAIN training sentences (and $((TRAIN / 5)) each for dev and test)" >&2
python3 examples/tagger/make_data.py "$out/data" --train "$TRAIN" > /dev/null
echo "== training: $EPOCHS epochs, Adam, batches of 32 sentences" >&2
"$driver" train --data "$out/data/train.jsonl" --dev "$out/data/dev.jsonl" --select accuracy \
  --epochs "$EPOCHS" --optimizer adam --lr 0.005 --batch-size 32 --seed 1 \
  --save "$out/model.safetensors" > "$out/train-log.jsonl"
"$driver" eval --data "$out/data/test.jsonl" --params "$out/model.safetensors" 2> /dev/null \
  > "$out/test.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
test = json.load(open(f"{out}/test.json"))
data = json.load(open(f"{out}/data/baseline.json"))
print(f"test split: {test['examples']} sentences, {data['test_words']} words "
      f"({data['test_unseen_words']} not seen in training)")
print(f"  tagger accuracy:             {100 * test['accuracy']:.2f}%")
print(f"  most-frequent-tag baseline:  {100 * data['baseline_test']:.2f}%")
PY
