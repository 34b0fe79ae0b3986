#!/usr/bin/env bash
# Huge single inputs: the sentiment model's inference on one balanced tree of
# 2^LEVELS leaves against SST's test set in batches of 25, one thread, pinned,
# ROUNDS interleaved rounds, medians. Prints each side's non-GEMM work per
# node ((infer time - GEMM time) / nodes, from `infer --profile`) and the
# ratio wide / SST (target: at most 2).
#
#   bash bench/wide_tree.sh            # LEVELS=17 ROUNDS=5 CPU=1, about a minute
set -euo pipefail
cd "$(dirname "$0")/.."
LEVELS=${LEVELS:-17}
ROUNDS=${ROUNDS:-5}
CPU=${CPU:-1}
driver=build/examples/sentiment_driver
[ -x "$driver" ] || bash scripts/build.sh
if [ ! -f build/sst/test.jsonl ]; then
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
vocab=$(sed -n 's/^const V = \([0-9]*\);.*/\1/p' examples/sentiment/sentiment.fold)
python3 bench/wide_tree.py "$LEVELS" "$vocab" "$work/wide.jsonl"

# Prints "SECONDS GEMM_SECONDS" of one `infer --profile` over DATA.
measure() {
  local data=$1 batch=$2
  taskset -c "$CPU" "$driver" infer --init --data "$data" --batch-size "$batch" --profile \
    2>&1 >/dev/null | sed -n 's/^infer: .* in \([0-9.]*\) s .*/\1/p; s/^profile: GEMMs \([0-9.]*\) s.*/\1/p' |
    paste -sd' '
}

for round in $(seq "$ROUNDS"); do
  echo "wide_tree: round $round of $ROUNDS" >&2
  echo "wide $(measure "$work/wide.jsonl" 1)" >> "$work/runs"
  echo "sst $(measure build/sst/test.jsonl 25)" >> "$work/runs"
done

python3 - "$work/runs" "$work/wide.jsonl" build/sst/test.jsonl "$LEVELS" <<'PY'
import statistics, sys
runs, wide, sst, levels = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def nodes(path):
    text = open(path).read()
    return text.count('"Leaf"') + text.count('"Node"')
rows = {}
for line in open(runs):
    name, seconds, gemm = line.split()
    rows.setdefault(name, []).append((float(seconds), float(gemm)))
print(f"| input | nodes | infer s | GEMM s | non-GEMM µs/node |")
print(f"| --- | ---: | ---: | ---: | ---: |")
per_node = {}
for name, path, label in (("wide", wide, f"one balanced tree, 2^{levels} leaves"),
                          ("sst", sst, "SST test, batches of 25")):
    n = nodes(path)
    seconds = statistics.median(s for s, _ in rows[name])
    gemm = statistics.median(g for _, g in rows[name])
    per_node[name] = statistics.median((s - g) / n * 1e6 for s, g in rows[name])
    print(f"| {label} | {n:,} | {seconds:.3f} | {gemm:.3f} | {per_node[name]:.2f} |")
print(f"wide / SST non-GEMM per node: {per_node['wide'] / per_node['sst']:.2f} (target <= 2)")
PY
