#!/usr/bin/env bash
# One conformance program's checks: training, eval and infer batched equal
# --no-batching, then `DRIVER check` (gradients against finite differences,
# and batched against per-example).
# usage: check.sh DRIVER DATA WORK
set -euo pipefail
driver=$1 data=$2 work=$3
bash "$(dirname "$0")/../Inputs/batched_equals_unbatched.sh" "$driver" "$data" "$work"
"$driver" check --data "$data" 2>/dev/null
