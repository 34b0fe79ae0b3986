#!/usr/bin/env bash
# The GNN example end to end: builds foldc and the model's driver, generates
# random graphs (make_data.py), trains the GGNN, and prints held-out accuracy
# beside always guessing the most frequent class, and training throughput
# batched and --no-batching (the second of two epochs over the first 2000
# graphs: the first grows the executor's buffers).
# EPOCHS (default 8) and TRAIN (default 6000 graphs) change the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
EPOCHS=${EPOCHS:-8}
TRAIN=${TRAIN:-6000}
source examples/common.sh
build_example gnn
python3 examples/gnn/make_data.py "$TRAIN" 1 > "$out/train.jsonl"
python3 examples/gnn/make_data.py 1000 2 > "$out/test.jsonl"
head -2000 "$out/train.jsonl" > "$out/speed.jsonl"
echo "== training: $TRAIN graphs, $EPOCHS epochs" >&2
"$driver" train --data "$out/train.jsonl" --epochs "$EPOCHS" --optimizer adam --lr 0.003 \
  --batch-size 32 --seed 1 --save "$out/model.safetensors" > "$out/train-log.jsonl"
"$driver" eval --data "$out/test.jsonl" --params "$out/model.safetensors" 2> /dev/null \
  > "$out/test.json"
echo "== training speed, batched and --no-batching (2000 graphs, 2 epochs each)" >&2
for mode in batched unbatched; do
  flag=$([ "$mode" = unbatched ] && echo --no-batching || true)
  "$driver" train --data "$out/speed.jsonl" --epochs 2 --batch-size 32 --seed 1 $flag \
    > "$out/speed-$mode.jsonl" 2> /dev/null
done
python3 - "$out" <<'PY'
import collections, json, sys
out = sys.argv[1]
test = json.load(open(f"{out}/test.json"))
train = [json.loads(l)["distance"] for l in open(f"{out}/train.jsonl")]
majority = collections.Counter(train).most_common(1)[0][0]
held = [json.loads(l)["distance"] for l in open(f"{out}/test.jsonl")]
baseline = sum(d == majority for d in held) / len(held)
speed = {m: json.loads(open(f"{out}/speed-{m}.jsonl").readlines()[-1])["train_examples_per_second"]
         for m in ("batched", "unbatched")}
print(f"held-out split: {test['examples']} graphs, distance between the marked nodes (5 classes)")
print(f"  accuracy: {100 * test['accuracy']:.1f}%  (always the most frequent class: {100 * baseline:.1f}%)")
print(f"  training, batch 32: {speed['batched']:.0f} graphs/s batched, "
      f"{speed['unbatched']:.0f} graphs/s --no-batching ({speed['batched'] / speed['unbatched']:.1f}x)")
PY
