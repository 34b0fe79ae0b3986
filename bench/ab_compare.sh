#!/usr/bin/env bash
# Two builds of foldc side by side in one run, for a change that must not
# change speed: treenn_bench (SST Tree-LSTM training and inference at
# minibatch 1 and 64) and the seq2seq example's decoding (greedy and beam
# search, batch 64, batched and --no-batching), in interleaved rounds on one
# pinned core; prints each figure's median for A and B, B / A, and the
# spread (max / min - 1) of each side's rounds.
# usage: bench/ab_compare.sh BUILD_A BUILD_B [ROUNDS (default 3)] [CPU (default 0)]
# Each build is a configured and built build/ folder of a checkout (its
# bench/treenn_bench and examples/seq2seq_driver). The machine should be quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
a=$1 b=$2 rounds=${3:-3} cpu=${4:-0}
out=build/ab-compare
mkdir -p "$out"
for build in "$a" "$b"; do
  for exe in bench/treenn_bench examples/seq2seq_driver; do
    [ -x "$build/$exe" ] || { echo "ab_compare.sh: $build/$exe is not built" >&2; exit 1; }
  done
done
[ -f build/sst/train.jsonl ] || { echo "ab_compare.sh: no build/sst/train.jsonl (bash scripts/run.sh makes it)" >&2; exit 1; }
python3 examples/seq2seq/make_data.py 10000 1 > "$out/train.jsonl"
python3 examples/seq2seq/make_data.py 2048 3 --greedy > "$out/greedy.jsonl"
python3 examples/seq2seq/make_data.py 2048 3 --beam > "$out/beam.jsonl"
echo "== training the seq2seq model once (build A), 3 epochs" >&2
"$a/examples/seq2seq_driver" train --data "$out/train.jsonl" --epochs 3 --optimizer adam --lr 0.005 \
  --batch-size 32 --seed 1 --save "$out/model.safetensors" > /dev/null 2>&1
: > "$out/figures.txt"
for r in $(seq "$rounds"); do
  for side in A B; do
    build=$([ "$side" = A ] && echo "$a" || echo "$b")
    echo "[ab] round $r/$rounds, $side, $(date +%T), load $(cut -d' ' -f1 /proc/loadavg)" >&2
    taskset -c "$cpu" "$build/bench/treenn_bench" --threads 1 --batches 1 64 --trees 3072 \
      --unbatched-trees 512 2>/dev/null |
      awk -v s="$side" '/^sgemm peak/ { print s, "sgemm_peak_gflops", $NF == "GFLOP/s" ? $(NF-1) : $NF }
        /^training/ { m = "train" } /^inference/ { m = "infer" }
        $1 ~ /^[0-9]+$/ && NF >= 5 {
          print s, "treenn_" m "_mb" $2 "_" ($3 == "yes" ? "batched" : "unbatched"), $4 }' \
      >> "$out/figures.txt"
    for task in greedy beam; do
      for mode in batched unbatched; do
        flag=$([ "$mode" = unbatched ] && echo --no-batching || true)
        rate=$(taskset -c "$cpu" "$build/examples/seq2seq_driver" infer --data "$out/$task.jsonl" \
          --params "$out/model.safetensors" --batch-size 64 --threads 1 $flag 2>&1 > /dev/null |
          sed -n 's/.*(\([0-9]*\) examples\/s).*/\1/p')
        echo "$side decode_${task}_${mode}_b64 $rate" >> "$out/figures.txt"
      done
    done
  done
done
python3 - "$out/figures.txt" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, name, value = line.split()
    runs[(name, side)].append(float(value))
names = sorted({name for name, _ in runs})
print(f"{'figure':32} {'A':>10} {'B':>10} {'B/A':>7}  spread A, B")
for name in names:
    a, b = runs[(name, 'A')], runs[(name, 'B')]
    ma, mb = statistics.median(a), statistics.median(b)
    spread = lambda v: max(v) / min(v) - 1
    print(f"{name:32} {ma:10.1f} {mb:10.1f} {mb / ma:7.3f}  {spread(a):.1%}, {spread(b):.1%}")
PY
