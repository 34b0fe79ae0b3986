#!/usr/bin/env bash
# Weights passed as values against weights a def owns: the same LSTM
# classifier (E 64, H 128, sentences of 5-40 words over 1,000 words, 5
# classes) written both ways (bench/weights/), trained for 2 epochs by each
# generated driver, interleaved rounds on one pinned core. Prints training
# examples/s (the second epoch's) for each, their ratio and the spread, and
# both final losses. Both plans read the weights in place (`linear`), so the
# two should be within noise of each other.
# usage: bench/weights_as_args.sh [ROUNDS (default 3)] [EXAMPLES (default 4000)] [CPU (default 0)]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} count=${2:-4000} cpu=${3:-0}
out=build/weights-as-args
mkdir -p "$out"
echo "== building (log: $out/build.log)" >&2
bash scripts/build.sh lstm_owned_driver lstm_args_driver > "$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log" >&2; exit 1; }
python3 - "$count" > "$out/train.jsonl" <<'PY'
import json, random, sys
rng = random.Random(7)
for _ in range(int(sys.argv[1])):
    words = [rng.randrange(1000) for _ in range(rng.randint(5, 40))]
    print(json.dumps({"words": words, "label": sum(words) % 5}))
PY
: > "$out/figures.txt"
for r in $(seq "$rounds"); do
  for way in owned args; do
    echo "[weights] round $r/$rounds, $way, $(date +%T)" >&2
    taskset -c "$cpu" "build/bench/lstm_${way}_driver" train --data "$out/train.jsonl" --epochs 2 \
      --batch-size 64 --seed 1 --threads 1 2> /dev/null | tail -1 |
      python3 -c "import json, sys; r = json.load(sys.stdin); print('$way', r['train_examples_per_second'], r['train']['loss'])" \
      >> "$out/figures.txt"
  done
done
python3 - "$out/figures.txt" <<'PY'
import collections, statistics, sys
rate, loss = collections.defaultdict(list), {}
for line in open(sys.argv[1]):
    way, r, l = line.split()
    rate[way].append(float(r))
    loss[way] = float(l)
o, a = statistics.median(rate["owned"]), statistics.median(rate["args"])
print("LSTM classifier, E 64, H 128, batch 64, one core: training examples/s (median)")
for way, m in (("weights owned by the cell's def", o), ("weights passed as arguments", a)):
    key = "owned" if "owned" in way else "args"
    print(f"  {way:34} {m:8.0f}  spread {max(rate[key]) / min(rate[key]) - 1:.1%}  loss {loss[key]:.4f}")
print(f"  arguments / owned: {a / o:.3f}")
PY
