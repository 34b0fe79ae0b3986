#!/usr/bin/env bash
# Runs a generated model driver on DATA batched and with --no-batching and
# checks they agree: two epochs of training (losses, metrics), then eval and
# infer with the trained parameters. Leaves WORK.out (the batched outputs).
# usage: batched_equals_unbatched.sh DRIVER DATA WORK
set -euo pipefail
driver=$1 data=$2 work=$3
check="python3 $(dirname "$0")/check.py"
"$driver" train --data "$data" --epochs 2 --batch-size 8 --save "$work.st" > "$work.train" 2>/dev/null
"$driver" train --data "$data" --epochs 2 --batch-size 8 --no-batching --save "$work.st1" > "$work.train1" 2>/dev/null
$check same "$work.train" "$work.train1" 1e-3
for command in eval infer; do
  "$driver" $command --data "$data" --params "$work.st" > "$work.$command" 2>/dev/null
  "$driver" $command --data "$data" --params "$work.st" --no-batching > "$work.${command}1" 2>/dev/null
  $check same "$work.$command" "$work.${command}1"
done
cp "$work.infer" "$work.out"
