#!/usr/bin/env bash
# Runs foldc (build/bench/treenn_bench), DyNet's autobatching and PyTorch's
# hand-batched Tree-LSTM on the same SST trees and model, interleaved cell by
# cell for several rounds, then prints the medians and the ratios
# (bench/side_by_side.py). Interleaving makes the three programs share the
# same background load, so a ratio never divides figures of different times.
#
# Usage: bash bench/side_by_side.sh [--rounds N] [--batches "1 16 64 256"]
#          [--seconds S] [--cpu C] [--torch-trees N] [--no-torch] [--logs DIR]
# Needs DyNet built by ../shared/peers/dynet/build.sh in build/dynet-peer
# (bench/README.md says how); PyTorch is Debian's python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 batches="1 16 64 256" seconds=10 cpu=1 torch_trees=2048 torch=1
logs=build/side-by-side/$(date +%Y%m%d-%H%M%S)
peers=${FOLDC_PEERS:-../shared/peers}
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --torch-trees) torch_trees=$2; shift 2 ;;
    --no-torch) torch=0; shift ;;
    --logs) logs=$2; shift 2 ;;
    *) echo "side_by_side.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

[ -x build/bench/treenn_bench ] || { echo "side_by_side.sh: build first (bash scripts/build.sh)" >&2; exit 1; }
[ -x build/dynet-peer/bin/treenn-bulk ] || {
  echo "side_by_side.sh: DyNet is not built in build/dynet-peer; see bench/README.md" >&2; exit 1; }
mkdir -p "$logs"
dynet() { "$peers/dynet/run.sh" -c "$cpu" -q -M 512 -t "$seconds" "$@"; }
torch() {
  OPENBLAS_NUM_THREADS=1 taskset -c "$cpu" /usr/bin/python3 "$peers/treelstm_torch.py" \
    build/dynet-peer "$@"
}

for r in $(seq "$rounds"); do
  for mb in $batches; do
    echo "[side-by-side] round $r/$rounds, minibatch $mb, $(date +%T)," \
      "load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$logs/load.txt" >&2
    taskset -c "$cpu" build/bench/treenn_bench --threads 1 --batches "$mb" \
      > "$logs/foldc-mb$mb-r$r.txt" 2>/dev/null
    dynet -m train -b "$mb" -a 1 -s 1 >> "$logs/dynet-r$r.txt"
    dynet -m train -b "$mb" -a 1 -s 0 >> "$logs/dynet-r$r.txt"
    dynet -m infer -b "$mb" -a 1 >> "$logs/dynet-r$r.txt"
    if [ "$torch" = 1 ]; then
      torch train "$mb" "$torch_trees" 1 >> "$logs/torch-r$r.txt"
      torch train "$mb" "$torch_trees" 1 sparse >> "$logs/torch-r$r.txt"
      torch infer "$mb" "$torch_trees" >> "$logs/torch-r$r.txt"
    fi
  done
done
echo "[side-by-side] logs in $logs" >&2
python3 bench/side_by_side.py "$logs"
