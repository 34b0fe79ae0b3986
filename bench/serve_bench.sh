#!/usr/bin/env bash
# Serving the sentiment model (examples/sentiment) over loopback: throughput
# and p50/p99 latency at concurrency 1, 8 and 64, with dynamic batching
# (largest batch 32, waiting at most 2 ms) and without (largest batch 1),
# each run bounded by REQUESTS and SECONDS_EACH. The server is pinned to
# SERVER_CPU (all its threads), the load generator to LOAD_CPU. Prints a
# table and the batched/unbatched throughput ratio at each concurrency, then
# the batched server at concurrency 64 against the same model's in-process
# `infer --batch-size 32` on SST dev on SERVER_CPU (target: at least 85%).
#
#   bash bench/serve_bench.sh                      # about 2 minutes
#   REQUESTS=500 SECONDS_EACH=5 bash bench/serve_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${REQUESTS:-3000}
SECONDS_EACH=${SECONDS_EACH:-15}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
driver=build/examples/sentiment_driver
load=build/bench/serve_load
if [ ! -x "$driver" ] || [ ! -x "$load" ]; then
  bash scripts/build.sh
fi
if [ ! -f build/sst/dev.jsonl ]; then
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
fi
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill -TERM "$server" 2> /dev/null; rm -rf "$work"' EXIT

# Starts a server with OPTIONS; sets `server` (its pid) and `port`.
start() {
  taskset -c "$SERVER_CPU" "$driver" serve --init --port 0 "$@" 2> "$work/server.err" &
  server=$!
  for _ in $(seq 200); do
    port=$(sed -n 's|^serving on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/server.err")
    [ -n "$port" ] && return
    sleep 0.05
  done
  echo "serve_bench: the server did not start:" >&2
  cat "$work/server.err" >&2
  exit 1
}

for mode in batched unbatched; do
  if [ $mode = batched ]; then start --batch-size 32 --max-wait-us 2000; else start --batch-size 1; fi
  for c in 1 8 64; do
    echo "serve_bench: $mode, concurrency $c" >&2
    taskset -c "$LOAD_CPU" "$load" --port "$port" --data build/sst/dev.jsonl --concurrency "$c" --requests "$REQUESTS" \
      --seconds "$SECONDS_EACH" > "$work/$mode-$c.json" || true # failed requests are counted
  done
  kill -TERM "$server"
  wait "$server"
  server=
done

echo "serve_bench: in-process infer --batch-size 32" >&2
taskset -c "$SERVER_CPU" "$driver" infer --init --data build/sst/dev.jsonl --batch-size 32 \
  2>&1 >/dev/null | sed -n 's/^infer: .* (\([0-9]*\) examples\/s)/\1/p' > "$work/in-process"

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print("| concurrency | batched req/s | p50 ms | p99 ms | batch 1 req/s | p50 ms | p99 ms | throughput ratio | errors |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for c in (1, 8, 64):
    b = json.load(open(f"{work}/batched-{c}.json"))
    u = json.load(open(f"{work}/unbatched-{c}.json"))
    ratio = b["requests_per_second"] / u["requests_per_second"]
    print(f"| {c} | {b['requests_per_second']:.0f} | {b['p50_ms']:.2f} | {b['p99_ms']:.2f} "
          f"| {u['requests_per_second']:.0f} | {u['p50_ms']:.2f} | {u['p99_ms']:.2f} | {ratio:.2f}x "
          f"| {b['errors'] + u['errors']} |")
in_process = float(open(f"{work}/in-process").read())
served = json.load(open(f"{work}/batched-64.json"))["requests_per_second"]
print(f"batched server at concurrency 64: {served:.0f} trees/s; in-process infer --batch-size 32: "
      f"{in_process:.0f} trees/s; {100 * served / in_process:.0f}% (target >= 85%)")
PY
