#!/usr/bin/env bash
# Training throughput of generated models: one epoch batched and one with
# --no-batching (every instance alone: the per-example baseline) for each
# example driver, with the ratio. Run after scripts/build.sh (and, for
# sentiment, the SST conversion of scripts/run.sh, done here if missing).
# usage: bench/generated_models.sh [EXAMPLES] [BATCH_SIZE]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000} batch=${2:-32}
work=build/bench/generated
mkdir -p "$work"
[ -f build/sst/train.jsonl ] ||
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
head -n "$n" build/sst/train.jsonl > "$work/sentiment.jsonl"
python3 examples/calculator/make_data.py "$n" 1 > "$work/calculator.jsonl"
python3 examples/gnn/make_data.py "$n" 1 > "$work/gnn.jsonl"
for e in attention language_id ngrams weave; do
  python3 test/Execution/Inputs/random_data.py "$e" "$n" 1 > "$work/$e.jsonl"
done
seconds() { # DRIVER DATA [--no-batching]: one epoch's training time
  "$@" 2>/dev/null | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["seconds"])'
}
printf '%-12s %8s %14s %14s %8s\n' model examples "batched ex/s" "unbatched ex/s" speedup
for e in sentiment calculator language_id attention ngrams weave gnn; do
  echo "bench: $e" >&2
  run=(build/examples/${e}_driver train --data "$work/$e.jsonl" --epochs 1 --batch-size "$batch")
  b=$(seconds "${run[@]}")
  u=$(seconds "${run[@]}" --no-batching)
  python3 -c "print('%-12s %8d %14.0f %14.0f %7.2fx' % ('$e', $n, $n / $b, $n / $u, $u / $b))"
done
