#!/usr/bin/env bash
# The checks of one generated program's driver on its data: infer batched
# equals --no-batching (1e-5 relative), gradients against finite differences
# and batched against per-example (`check`), and training twice with one
# --seed gives the same result. Writes what it ran to WORK.log. On failure,
# prints one line saying which check failed and exits 1.
# usage: check_program.sh DATA WORK DRIVER [ARGS...]   (the driver's command,
#        e.g. `g0_driver p3` for the dispatching driver of a group)
set -uo pipefail
data=$1 work=$2
shift 2
driver=("$@")
check="${PYTHON3:-python3} $(dirname "$0")/../Execution/Inputs/check.py"
run() { echo "\$ $*" >> "$work.log"; "$@" >> "$work.log" 2>&1; }
: > "$work.log"
"${driver[@]}" infer --init --data "$data" --batch-size 4 > "$work.infer" 2>> "$work.log" || { echo "infer failed"; exit 1; }
"${driver[@]}" infer --init --data "$data" --batch-size 4 --no-batching > "$work.infer1" 2>> "$work.log" || { echo "infer --no-batching failed"; exit 1; }
run $check same "$work.infer" "$work.infer1" 1e-5 || { echo "infer: batched != --no-batching"; exit 1; }
run "${driver[@]}" check --data "$data" --step 1e-3 || { echo "check: gradients"; exit 1; }
for i in 1 2; do
  "${driver[@]}" train --data "$data" --epochs 2 --batch-size 3 --seed 5 > "$work.train$i" 2>> "$work.log" || { echo "train failed"; exit 1; }
done
run $check same "$work.train1" "$work.train2" 0 || { echo "train: not the same twice with one seed"; exit 1; }
exit 0
