#!/usr/bin/env bash
# Data-parallel training with MPI (issue 14) and with threads (--threads):
# the treenn Tree-LSTM (bench/treenn.fold) on the SST training trees, one
# epoch with 1 and with 2 ranks, and with 2 threads of one process, at
# minibatches 64 and 256 (Adam, lr 1e-3, one GEMM thread per replica).
# Prints trees/s, the speedup over one rank, and the shares of a step spent
# waiting for the slower replica and summing gradients (MPI_Allreduce, or
# shared memory), with the bytes each replica contributes per step. The last row of each batch size
# is the machine's own ceiling: two independent one-process runs at once
# (no communication at all, not bound to a core: mpirun would bind both to
# the first), their trees/s added up. Run after
# scripts/build.sh (the SST conversion of scripts/run.sh is done here if missing).
# usage: bench/data_parallel.sh [BATCHES]   (default "64 256")
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${1:-64 256}
[ -f build/sst/train.jsonl ] ||
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
epoch=(train --data build/sst/train.jsonl --epochs 1 --optimizer adam --lr 1e-3)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
train() { # RANKS BATCH [MPIRUN OPTIONS]: one epoch's JSON line
  mpirun --allow-run-as-root --oversubscribe "${@:3}" -np "$1" build/bench/treenn_driver \
    "${epoch[@]}" --batch-size "$2" 2>>"$log"
}
threads() { # THREADS BATCH: one epoch's JSON line
  build/bench/treenn_driver "${epoch[@]}" --batch-size "$2" --threads "$1" 2>>"$log"
}
# trees/s, wait share, communication share, bytes per step of the RUNS JSON lines on stdin
# (their rates summed)
fields='
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
if len(lines) != int(sys.argv[1]):
    sys.exit("data_parallel: %d runs gave %d results; their messages:\n%s"
             % (int(sys.argv[1]), len(lines), open(sys.argv[2]).read()[-2000:]))
e = lines[0]
t = e["train_seconds"]
print(sum(x["train_examples_per_second"] for x in lines), e.get("wait_seconds", 0) / t,
      e.get("communication_seconds", 0) / t, e.get("communicated_bytes_per_step", 0))'
row() { # LABEL BATCH RATE BASE WAIT COMM BYTES
  python3 -c "print('%-14s %6d %9.0f %7.2fx %6.1f%% %13.1f%% %16.0f' % ('$1', $2, $3, $3 / $4, 100 * $5, 100 * $6, $7))"
}
printf '%-14s %6s %9s %8s %7s %14s %16s\n' replicas batch trees/s speedup "wait" communication "bytes/step/rank"
for batch in $batches; do
  echo "data_parallel: batch $batch: 1 rank, 2 ranks, 2 threads, 2 independent processes" >&2
  read -r base _ _ _ < <(train 1 "$batch" | python3 -c "$fields" 1 "$log")
  row "1 rank" "$batch" "$base" "$base" 0 0 0
  read -r rate wait comm bytes < <(train 2 "$batch" | python3 -c "$fields" 1 "$log")
  row "2 ranks" "$batch" "$rate" "$base" "$wait" "$comm" "$bytes"
  read -r rate wait comm bytes < <(threads 2 "$batch" | python3 -c "$fields" 1 "$log")
  row "2 threads" "$batch" "$rate" "$base" "$wait" "$comm" "$bytes"
  read -r rate _ _ _ < <( (train 1 "$batch" --bind-to none & train 1 "$batch" --bind-to none & wait) | python3 -c "$fields" 2 "$log")
  row "2 independent" "$batch" "$rate" "$base" 0 0 0
done
