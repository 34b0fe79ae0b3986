#!/usr/bin/env bash
# Data-parallel training with MPI (issue 14): the treenn Tree-LSTM
# (bench/treenn.fold) on the SST training trees, one epoch with 1 and with 2
# ranks at minibatches 64 and 256 (Adam, lr 1e-3, one thread per rank).
# Prints trees/s, the speedup of 2 ranks over 1, and the shares of a step
# spent waiting for the slower rank and summing gradients (MPI_Allreduce),
# with the bytes each rank sends per step. Run after scripts/build.sh (the
# SST conversion of scripts/run.sh is done here if missing).
# usage: bench/data_parallel.sh [BATCHES] [RANKS]   (default "64 256", "1 2")
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${1:-64 256} ranks=${2:-1 2}
[ -f build/sst/train.jsonl ] ||
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
mpirun=(mpirun --allow-run-as-root --oversubscribe)
printf '%-6s %6s %9s %8s %7s %14s %16s\n' ranks batch trees/s speedup "wait" communication "bytes/step/rank"
for batch in $batches; do
  base=""
  for n in $ranks; do
    echo "data_parallel: $n rank(s), batch $batch" >&2
    line=$("${mpirun[@]}" -np "$n" build/bench/treenn_driver train --data build/sst/train.jsonl \
             --epochs 1 --batch-size "$batch" --optimizer adam --lr 1e-3 2>/dev/null)
    read -r rate wait comm bytes < <(python3 -c '
import json, sys
e = json.loads(sys.argv[1])
t = e["train_seconds"]
print(e["train_examples_per_second"], e.get("wait_seconds", 0) / t,
      e.get("communication_seconds", 0) / t, e.get("communicated_bytes_per_step", 0))' "$line")
    base=${base:-$rate}
    python3 -c "print('%-6d %6d %9.0f %7.2fx %6.1f%% %13.1f%% %16.0f' % ($n, $batch, $rate, $rate / $base, 100 * $wait, 100 * $comm, $bytes))"
  done
done
