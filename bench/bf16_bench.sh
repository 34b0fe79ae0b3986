#!/usr/bin/env bash
# Inference with the products against weights in bf16 (`--precision bf16`)
# against fp32: the treenn Tree-LSTM (bench/treenn.fold) and the sentiment
# model (examples/sentiment) on SST's test trees, minibatch 1, 16, 64 and
# 256, one thread, pinned, ROUNDS interleaved rounds, medians of trees/s and
# the ratio bf16 / fp32 (target: at least 1.6 at minibatch 16 and more).
# Then, where examples/sentiment/reproduce.sh has trained its seeds
# (build/sentiment/seed-S/best.safetensors), each seed's SST test accuracy
# in fp32 and bf16 (target: within 0.3 points).
#
#   bash bench/bf16_bench.sh               # ROUNDS=3 CPU=1, about 2 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
CPU=${CPU:-1}
BATCHES=${BATCHES:-"1 16 64 256"}
for driver in build/bench/treenn_driver build/examples/sentiment_driver; do
  [ -x "$driver" ] || bash scripts/build.sh
done
if [ ! -f build/sst/test.jsonl ]; then
  build/examples/sentiment/sst_to_jsonl examples/sentiment/data/sst/{train,dev,test}.txt -o build/sst
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints the seconds of one `infer` of SST test with DRIVER, BATCH, PRECISION.
seconds() {
  taskset -c "$CPU" "$1" infer --init --data build/sst/test.jsonl --batch-size "$2" \
    --precision "$3" 2>&1 >/dev/null | sed -n 's/^infer: .* in \([0-9.]*\) s .*/\1/p'
}

for round in $(seq "$ROUNDS"); do
  for model in treenn sentiment; do
    driver=build/bench/treenn_driver
    [ "$model" = sentiment ] && driver=build/examples/sentiment_driver
    for batch in $BATCHES; do
      echo "bf16_bench: round $round of $ROUNDS, $model, minibatch $batch" >&2
      for precision in f32 bf16; do
        echo "$model $batch $precision $(seconds "$driver" "$batch" "$precision")" >> "$work/runs"
      done
    done
  done
done

for seed_dir in build/sentiment/seed-*; do
  [ -f "$seed_dir/best.safetensors" ] || continue
  for precision in f32 bf16; do
    echo "bf16_bench: SST test accuracy, ${seed_dir##*/}, $precision" >&2
    taskset -c "$CPU" build/examples/sentiment_driver eval --data build/sst/test.jsonl \
      --params "$seed_dir/best.safetensors" --precision "$precision" \
      > "$work/accuracy-${seed_dir##*-}-$precision.json"
  done
done

python3 - "$work" "$(wc -l < build/sst/test.jsonl)" <<'PY'
import glob, json, os, statistics, sys
work, trees = sys.argv[1], int(sys.argv[2])
runs = {}
for line in open(os.path.join(work, "runs")):
    model, batch, precision, seconds = line.split()
    runs.setdefault((model, int(batch), precision), []).append(float(seconds))
print("| model | minibatch | fp32 trees/s | bf16 trees/s | bf16 / fp32 |")
print("| --- | ---: | ---: | ---: | ---: |")
for model in ("treenn", "sentiment"):
    for batch in sorted({b for m, b, _ in runs if m == model}):
        f32 = trees / statistics.median(runs[(model, batch, "f32")])
        bf16 = trees / statistics.median(runs[(model, batch, "bf16")])
        print(f"| {model} | {batch} | {f32:,.0f} | {bf16:,.0f} | {bf16 / f32:.2f} |")
files = sorted(glob.glob(os.path.join(work, "accuracy-*-f32.json")))
if files:
    print()
    print("| seed | SST test root, fp32 | bf16 | difference (points) | all nodes, fp32 | bf16 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for f32_file in files:
        seed = f32_file.split("-")[-2]
        f32 = json.load(open(f32_file))
        bf16 = json.load(open(f32_file.replace("-f32.json", "-bf16.json")))
        diff = 100 * (bf16["root_hits"] - f32["root_hits"])
        print(f"| {seed} | {100 * f32['root_hits']:.2f}% | {100 * bf16['root_hits']:.2f}% | "
              f"{diff:+.2f} | {100 * f32['all_hits']:.2f}% | {100 * bf16['all_hits']:.2f}% |")
else:
    print("(no trained seeds: bash examples/sentiment/reproduce.sh trains them)")
PY
