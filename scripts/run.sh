#!/usr/bin/env bash
# The main job: installs the dependencies, builds foldc, the sentiment model's
# driver and the foldc Python package (only those), converts the Stanford
# Sentiment Treebank, shows the model and draws its batch plan, trains it for
# a short run (EPOCHS, default 4; model selection on dev root accuracy), and
# ends with its SST test figures, the learning curve, the picture, and the
# kept parameters evaluated from Python (foldc.load). The full, three-seed
# run is examples/sentiment/reproduce.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
EPOCHS=${EPOCHS:-4}
out=build/sentiment-run
echo "== building foldc and examples/sentiment (log: build/run-build.log)" >&2
mkdir -p build
if ! bash scripts/build.sh foldc sentiment_driver foldc_python_package sst_to_jsonl \
    > build/run-build.log 2>&1; then
  tail -30 build/run-build.log >&2
  exit 1
fi
mkdir -p "$out"
build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst 2>&1 |
  tail -1 >&2
echo "== the model (build/examples/sentiment_driver info)" >&2
build/examples/sentiment_driver info
build/tools/foldc --emit=dot examples/sentiment/sentiment.fold > "$out/plan.dot"
dot -Tsvg "$out/plan.dot" -o "$out/plan.svg"

echo "== training on SST train, $EPOCHS epochs (one JSON line per epoch: $out/train.jsonl)" >&2
build/examples/sentiment_driver train --data build/sst/train.jsonl --dev build/sst/dev.jsonl \
  --epochs "$EPOCHS" --optimizer adagrad --lr 0.05 --batch-size 25 --weight-decay 1e-4 \
  --select root_hits --save "$out/best.safetensors" --curve "$out/curve.csv" > "$out/train.jsonl"
/usr/bin/python3 scripts/plot_curve.py "$out/curve.png" "$out/curve.csv" 2> /dev/null
echo "== the kept parameters (best dev root accuracy) on SST test" >&2
build/examples/sentiment_driver eval --data build/sst/test.jsonl --params "$out/best.safetensors" \
  2> /dev/null > "$out/test.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
test = json.load(open(f"{out}/test.json"))
kept = [e for e in map(json.loads, open(f"{out}/train.jsonl")) if e["saved"]][-1]
print(f"SST test, {test['examples']} trees, parameters of epoch {kept['epoch']} "
      f"(dev root accuracy {100 * kept['dev']['root_hits']:.1f}%):")
print(f"  fine-grained root accuracy  {100 * test['root_hits']:.1f}%")
print(f"  binary root accuracy        {100 * test['binary_root_hits']:.1f}%  (neutral roots left out)")
print(f"  all-node accuracy           {100 * test['all_hits']:.1f}%")
PY
echo "== the same parameters from Python: foldc.load compiles the model once (cache: build/foldc-cache)" >&2
FOLDC_CACHE=build/foldc-cache PYTHONPATH=build/python /usr/bin/python3 - "$out" <<'PY'
import json, sys, time
import foldc
out = sys.argv[1]
began = time.monotonic()
sentiment = foldc.load("examples/sentiment/sentiment.fold")
how = "compiled" if foldc.last_load["compiled"] else "from the cache"
print(f"Python: foldc.load('examples/sentiment/sentiment.fold'): {how} in "
      f"{time.monotonic() - began:.1f} s")
model = sentiment.Model()
model.load(f"{out}/best.safetensors")
trees = [json.loads(line) for line in open("build/sst/test.jsonl")][:100]
result = model.eval(trees)
print(f"Python: Model().eval(first 100 test trees): root accuracy "
      f"{100 * result['root_hits']:.1f}%, loss {result['loss']:.4f}")
PY
echo "learning curve: $out/curve.png (from $out/curve.csv)"
echo "batch plan:     $out/plan.svg (from $out/plan.dot)"
