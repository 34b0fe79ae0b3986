#!/usr/bin/env bash
# One conformance program's checks: training, eval and infer batched equal
# --no-batching, then `DRIVER check` (gradients against finite differences,
# and batched against per-example) on PROGRAM's data (PROGRAM.jsonl). A line
# `// check: OPTIONS` in PROGRAM adds options to `check` (a smaller --step
# where max/min or relu put a kink near the initial values).
# usage: check.sh DRIVER PROGRAM.fold WORK
set -euo pipefail
driver=$1 program=$2 work=$3
data=${program%.fold}.jsonl
options=$(sed -n 's|^// check: ||p' "$program")
bash "$(dirname "$0")/../Inputs/batched_equals_unbatched.sh" "$driver" "$data" "$work"
"$driver" check --data "$data" $options 2>/dev/null
