#!/usr/bin/env bash
# SST test figures of examples/sentiment, reported as the papers do: trains
# one model per seed (model selection on dev fine-grained root accuracy),
# evaluates the selected parameters on the test split, and prints each
# seed's fine-grained root, binary root and all-node accuracy with their mean
# and spread; plots the learning curves of every seed.
#
#   bash examples/sentiment/reproduce.sh            # 3 seeds x 15 epochs (about 2.5 min per seed on one core)
#   SEEDS="1 2" EPOCHS=4 bash examples/sentiment/reproduce.sh
#   VECTORS=glove.840B.300d.txt bash examples/sentiment/reproduce.sh   # the paper's GloVe start
#
# VECTORS (a GloVe or word2vec text file of 300-number vectors) initialises
# the word embedding from it, mapped through the treebank's vocabulary
# (build/sst/vocab.txt); words it lacks keep the uniform initialiser.
# Writes build/sentiment/seed-S/{train.jsonl,curve.csv,best.safetensors,test.json},
# build/sentiment/results.md and build/sentiment/curves.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
SEEDS=${SEEDS:-"1 2 3"}
EPOCHS=${EPOCHS:-15}
vectors=()
if [ -n "${VECTORS:-}" ]; then
  vectors=(--vectors "words=$VECTORS" --vocab words=build/sst/vocab.txt)
fi
driver=build/examples/sentiment_driver
out=build/sentiment
if [ ! -x "$driver" ] || [ ! -x build/examples/sentiment/sst_to_jsonl ]; then
  bash scripts/build.sh
fi
if [ ! -f build/sst/test.jsonl ]; then
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
fi
mkdir -p "$out"
for seed in $SEEDS; do
  dir="$out/seed-$seed"
  mkdir -p "$dir"
  echo "== seed $seed: training $EPOCHS epochs" >&2
  "$driver" train --data build/sst/train.jsonl --dev build/sst/dev.jsonl --epochs "$EPOCHS" \
    --optimizer adagrad --lr 0.05 --batch-size 25 --weight-decay 1e-4 --select root_hits \
    --seed "$seed" --save "$dir/best.safetensors" --curve "$dir/curve.csv" "${vectors[@]}" \
    > "$dir/train.jsonl"
  "$driver" eval --data build/sst/test.jsonl --params "$dir/best.safetensors" > "$dir/test.json"
done
/usr/bin/python3 scripts/plot_curve.py "$out/curves.png" "$out"/seed-*/curve.csv
python3 - "$out" $SEEDS <<'PY' | tee "$out/results.md"
import json, statistics, sys
out, seeds = sys.argv[1], sys.argv[2:]
rows = []
for seed in seeds:
    test = json.load(open(f"{out}/seed-{seed}/test.json"))
    epochs = [json.loads(l) for l in open(f"{out}/seed-{seed}/train.jsonl")]
    chosen = [e for e in epochs if e["saved"]][-1]  # the epoch whose parameters were kept
    rows.append((seed, chosen["epoch"], chosen["dev"]["root_hits"], test["root_hits"],
                 test["binary_root_hits"], test["all_hits"]))
print("| seed | epoch kept | dev root | test root (fine) | test root (binary) | test all nodes |")
print("| --- | --- | --- | --- | --- | --- |")
for seed, epoch, dev, fine, binary, nodes in rows:
    print(f"| {seed} | {epoch} | {100*dev:.1f}% | {100*fine:.1f}% | {100*binary:.1f}% | {100*nodes:.1f}% |")
def summary(i):
    values = [100 * r[i] for r in rows]
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.1f}% ± {spread:.1f} ({min(values):.1f}-{max(values):.1f})"
print(f"| mean ± sd (range) | | {summary(2)} | {summary(3)} | {summary(4)} | {summary(5)} |")
PY
echo "   results: $out/results.md; learning curves: $out/curves.png" >&2
