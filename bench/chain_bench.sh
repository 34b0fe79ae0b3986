#!/usr/bin/env bash
# Per-step cost on one long sequential chain, where nothing can be batched:
# the language_id character LSTM (examples/language_id: embedding 16, LSTM 64)
# over one line of N characters (default 10^5), one training epoch and one
# inference pass. Prints microseconds and bytes per step: the whole process's
# time and peak RSS over N steps, less those of a 1-character line (start-up,
# parameters, reading), divided by N. Medians of ROUNDS runs (default 3).
#
#   bash bench/chain_bench.sh [N] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-100000}
rounds=${2:-3}
driver=build/examples/language_id_driver
[ -x "$driver" ] || { echo "chain_bench.sh: build first (bash scripts/build.sh)" >&2; exit 1; }
work=build/chain-bench
mkdir -p "$work"

# One line of `n` lowercase letters (a fixed pseudo-random sequence).
line() {
  awk -v n="$1" 'BEGIN { srand(1); printf "{\"chars\": ["
    for (i = 0; i < n; ++i) printf "%s%d", (i ? ", " : ""), 97 + int(rand() * 26)
    printf "], \"lang\": 2}\n" }'
}
line 1 > "$work/short.jsonl"
line "$steps" > "$work/long.jsonl"

# "seconds peak-KiB" of one run of the driver.
measure() {
  /usr/bin/time -o "$work/time.txt" -f "%e %M" "$driver" "$@" > /dev/null 2> "$work/run.log" ||
    { cat "$work/run.log" >&2; exit 1; }
  cat "$work/time.txt"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for mode in train infer; do
  if [ "$mode" = train ]; then args=(train --epochs 1); else args=(infer --init); fi
  for data in short long; do
    : > "$work/$mode-$data.txt"
    for r in $(seq "$rounds"); do
      echo "[chain-bench] $mode, $data line, round $r/$rounds" >&2
      measure "${args[@]}" --data "$work/$data.jsonl" >> "$work/$mode-$data.txt"
    done
  done
done

echo "language_id LSTM (E 16, H 64), one line of $steps characters; medians of $rounds runs"
printf '%-9s %12s %12s\n' mode "us/step" "bytes/step"
for mode in train infer; do
  seconds() { cut -d' ' -f1 "$work/$mode-$1.txt" | median; }
  kib() { cut -d' ' -f2 "$work/$mode-$1.txt" | median; }
  awk -v m="$mode" -v n="$steps" -v t1="$(seconds long)" -v t0="$(seconds short)" \
    -v k1="$(kib long)" -v k0="$(kib short)" \
    'BEGIN { printf "%-9s %12.1f %12.0f\n", m, (t1 - t0) * 1e6 / n, (k1 - k0) * 1024 / n }'
done
