#!/usr/bin/env bash
# One model written three ways, trained side by side: the part-of-speech
# tagger of examples/tagger (a character BiLSTM for rare words, a word
# BiLSTM, an MLP) with its LSTM cell a layer definition instantiated four
# times (examples/tagger/tagger.fold), copied as four defs
# (bench/tagger/tagger_copies.fold), and one def per size taking its weights
# as arguments (bench/tagger/tagger_args.fold). Each generated driver trains
# 2 epochs on the example's synthetic data; rounds are interleaved on one
# pinned core. Prints training sentences/s (the second epoch's, median of
# the rounds), the spread, each version's ratio to the instances and its
# final training loss (the three initialise in another order, so losses
# differ a little).
# usage: bench/tagger_variants.sh [ROUNDS (default 3)] [SENTENCES (default 3000)] [CPU (default 0)]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} count=${2:-3000} cpu=${3:-0}
out=build/tagger-variants
mkdir -p "$out"
echo "== building (log: $out/build.log)" >&2
bash scripts/build.sh tagger_driver tagger_copies_driver tagger_args_driver > "$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log" >&2; exit 1; }
python3 examples/tagger/make_data.py "$out/data" --train "$count" > /dev/null
declare -A driver=([instances]=build/examples/tagger_driver [copies]=build/bench/tagger_copies_driver
                   [arguments]=build/bench/tagger_args_driver)
: > "$out/figures.txt"
for r in $(seq "$rounds"); do
  for way in instances copies arguments; do
    echo "[tagger] round $r/$rounds, $way, $(date +%T)" >&2
    taskset -c "$cpu" "${driver[$way]}" train --data "$out/data/train.jsonl" --epochs 2 \
      --optimizer adam --lr 0.005 --batch-size 32 --seed 1 --threads 1 2> /dev/null | tail -1 |
      python3 -c "import json, sys; r = json.load(sys.stdin); print('$way', r['train_examples_per_second'], r['train']['loss'])" \
      >> "$out/figures.txt"
  done
done
python3 - "$out/figures.txt" "$count" <<'PY'
import collections, statistics, sys
rate, loss = collections.defaultdict(list), {}
for line in open(sys.argv[1]):
    way, r, l = line.split()
    rate[way].append(float(r))
    loss[way] = float(l)
base = statistics.median(rate["instances"])
print(f"POS tagger (char BiLSTM + word BiLSTM + MLP), {sys.argv[2]} sentences, batch 32, one core:")
print("  training sentences/s (median)     rate   spread   / instances   loss")
for way, text in (("instances", "layer instances (written once)"), ("copies", "cell copied four times"),
                  ("arguments", "weights passed as arguments")):
    m = statistics.median(rate[way])
    print(f"  {text:32} {m:6.0f}   {max(rate[way]) / min(rate[way]) - 1:5.1%}   {m / base:10.3f}   {loss[way]:.4f}")
PY
