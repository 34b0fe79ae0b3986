#!/usr/bin/env bash
# Per-step cost on one long sequential chain, where nothing can be batched:
# the language_id character LSTM (examples/language_id: embedding 16, LSTM 64)
# over one line of N characters (default 10^5), one training epoch and one
# inference pass, beside DyNet on the same model when its peer is built.
# Prints microseconds and bytes per step: the whole process's time and peak
# RSS over N steps, less those of a 1-character line (start-up, parameters,
# reading), divided by N. Medians of ROUNDS interleaved runs (default 3).
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

# "seconds peak-KiB" of one run of a command.
measure() {
  /usr/bin/time -o "$work/time.txt" -f "%e %M" "$@" > /dev/null 2> "$work/run.log" ||
    { cat "$work/run.log" >&2; exit 1; }
  cat "$work/time.txt"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# DyNet beside it when the peer is built (../shared/peers/dynet/build.sh):
# the same model in bench/peers/dynet_char_lstm.cc.
peer=build/dynet-peer
engines=foldc
if [ -f "$peer/build/dynet/dynet/libdynet.so" ]; then
  echo "[chain-bench] compiling bench/peers/dynet_char_lstm.cc against $peer" >&2
  g++ -O3 -march=native -DEIGEN_FAST_MATH -std=c++17 -I"$peer/src/dynet" -I/usr/include/eigen3 \
    bench/peers/dynet_char_lstm.cc -o "$work/dynet_char_lstm" -L"$peer/build/dynet/dynet" -ldynet \
    -Wl,-rpath,"$PWD/$peer/build/dynet/dynet"
  engines="foldc dynet"
else
  echo "[chain-bench] DyNet peer not built ($peer): foldc only" >&2
fi

# One run of `engine` in `mode` over a line of `length` (short: 1, long: N).
run() {
  local engine=$1 mode=$2 length=$3
  if [ "$engine" = dynet ]; then
    measure "$work/dynet_char_lstm" "$mode" "$([ "$length" = long ] && echo "$steps" || echo 1)" \
      --dynet-mem 64 # initial pools, touched at start; DyNet grows them as the graph needs
  elif [ "$mode" = train ]; then
    measure "$driver" train --epochs 1 --data "$work/$length.jsonl"
  else
    measure "$driver" infer --init --data "$work/$length.jsonl"
  fi
}

for r in $(seq "$rounds"); do
  for engine in $engines; do
    for mode in train infer; do
      for length in short long; do
        [ "$r" = 1 ] && : > "$work/$engine-$mode-$length.txt"
        echo "[chain-bench] round $r/$rounds: $engine $mode, $length line" >&2
        run "$engine" "$mode" "$length" >> "$work/$engine-$mode-$length.txt"
      done
    done
  done
done

echo "language_id LSTM (E 16, H 64), one line of $steps characters; medians of $rounds runs"
printf '%-7s %-7s %12s %12s\n' engine mode "us/step" "bytes/step"
# The median over the rounds of field `field` (1: seconds, 2: peak KiB) of a cell.
cell() { cut -d' ' -f"$1" "$work/$2.txt" | median; }
for engine in $engines; do
  for mode in train infer; do
    runs=$engine-$mode
    awk -v e="$engine" -v m="$mode" -v n="$steps" -v t1="$(cell 1 "$runs-long")" \
      -v t0="$(cell 1 "$runs-short")" -v k1="$(cell 2 "$runs-long")" -v k0="$(cell 2 "$runs-short")" \
      'BEGIN { printf "%-7s %-7s %12.1f %12.0f\n", e, m, (t1 - t0) * 1e6 / n, (k1 - k0) * 1024 / n }'
  done
done
