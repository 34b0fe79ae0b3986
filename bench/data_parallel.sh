#!/usr/bin/env bash
# Data-parallel training with MPI (issue 14) and with threads (--threads):
# the treenn Tree-LSTM (bench/treenn.fold) on the SST training trees, one
# epoch with 1 and with 2 ranks, and with 2 threads of one process, at
# minibatches 64 and 256 (Adam, lr 1e-3, one GEMM thread per replica).
# Prints trees/s, the speedup over one rank, and the shares of a step spent
# waiting for the slower replica and summing gradients (MPI_Allreduce, or
# shared memory), with the bytes each replica contributes per step. The last
# row of each batch size is the machine's own ceiling: two independent
# one-process runs at once (no communication at all, not bound to a core:
# mpirun would bind both to the first), their trees/s added up.
# Each run trains two epochs and the second is measured: the first also pays
# once for the memory a run sets up as it goes (the optimizer's moments for
# the whole embedding, 22 MB, at its first step; the buffers of the batches
# as they grow: 41,000 page faults, all in the first epoch), which made it
# 6-10% slower than the next on this VM.
#
# Single runs on a shared VM vary by 10% or more, so each row is the median
# of ROUNDS runs, and the rounds interleave the configurations (one run of
# each, then again) so that a slow spell of the machine hits all of them.
# Run after scripts/build.sh (the SST conversion of scripts/run.sh is done
# here if missing).
# usage: bench/data_parallel.sh [BATCHES [ROUNDS]]   (default "64 256" 3)
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${1:-64 256}
rounds=${2:-3}
[ -f build/sst/train.jsonl ] ||
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
epoch=(train --data build/sst/train.jsonl --epochs 2 --optimizer adam --lr 1e-3)
log=$(mktemp)
results=$(mktemp)
trap 'rm -f "$log" "$results"' EXIT
train() { # RANKS BATCH [MPIRUN OPTIONS]: the epochs' JSON lines
  mpirun --allow-run-as-root --oversubscribe "${@:3}" -np "$1" build/bench/treenn_driver \
    "${epoch[@]}" --batch-size "$2" 2>>"$log"
}
threads() { # THREADS BATCH: the epochs' JSON lines
  build/bench/treenn_driver "${epoch[@]}" --batch-size "$2" --threads "$1" 2>>"$log"
}
# One result line "LABEL BATCH trees/s wait-share communication-share bytes"
# from the last epoch of RUNS runs, their JSON lines on stdin (rates summed).
record='
import json, sys
label, batch, runs, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = [json.loads(l) for l in sys.stdin if l.strip()]
last = max((x["epoch"] for x in lines), default=0)
lines = [x for x in lines if x["epoch"] == last]
if len(lines) != runs:
    sys.exit("data_parallel: %d runs gave %d results; their messages:\n%s"
             % (runs, len(lines), open(log).read()[-2000:]))
e, t = lines[0], lines[0]["train_seconds"]
print(label, batch, sum(x["train_examples_per_second"] for x in lines),
      e.get("wait_seconds", 0) / t, e.get("communication_seconds", 0) / t,
      e.get("communicated_bytes_per_step", 0))'
# The table: per label and batch, the medians over the rounds; the speedup is
# the median of the rounds' speedups, each over the one rank of its round.
report='
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, batch, *numbers = line.split()
    rows.setdefault((int(batch), label.replace("_", " ")), []).append([float(x) for x in numbers])
print("%-14s %6s %9s %8s %7s %14s %16s   %s" % ("replicas", "batch", "trees/s", "speedup",
      "wait", "communication", "bytes/step/rank", "speedups of the rounds"))
for (batch, label), runs in rows.items():
    base = rows[(batch, "1 rank")]
    median = [statistics.median(column) for column in zip(*runs)]
    speedups = [r[0] / b[0] for r, b in zip(runs, base)] # each against its own round
    print("%-14s %6d %9.0f %7.2fx %6.1f%% %13.1f%% %16.0f   %s" % (label, batch, median[0],
          statistics.median(speedups), 100 * median[1], 100 * median[2], median[3],
          " ".join("%.2f" % x for x in speedups)))'
for batch in $batches; do
  for round in $(seq "$rounds"); do
    echo "data_parallel: batch $batch, round $round of $rounds:" \
      "1 rank, 2 ranks, 2 threads, 2 independent processes" >&2
    train 1 "$batch" | python3 -c "$record" 1_rank "$batch" 1 "$log" >>"$results"
    train 2 "$batch" | python3 -c "$record" 2_ranks "$batch" 1 "$log" >>"$results"
    threads 2 "$batch" | python3 -c "$record" 2_threads "$batch" 1 "$log" >>"$results"
    (train 1 "$batch" --bind-to none & train 1 "$batch" --bind-to none & wait) |
      python3 -c "$record" 2_independent "$batch" 2 "$log" >>"$results"
  done
done
python3 -c "$report" "$results"
