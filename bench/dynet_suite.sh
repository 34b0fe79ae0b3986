#!/usr/bin/env bash
# DyNet's benchmark suite (neulab/dynet-benchmark) side by side: foldc, the
# suite's DyNet C++ program and its PyTorch program train the same model on
# the same sentences, then evaluate. One thread on one pinned core; the
# engines alternate run by run for several rounds and the medians are
# compared (bench/dynet_suite.py), so every ratio divides figures of the same
# minutes. The Tree-LSTM task is bench/side_by_side.sh.
#
# Tasks (each as its DyNet program computes it: sizes, initialisation, Adam
# at 0.001 on the batch's summed loss):
#   rnnlm   rnnlm-batch: an LSTM language model (E 128, H 256, a softmax over
#           the 6,022 words of the training text), bench/rnnlm/rnnlm.fold;
#           evaluated by the test text's loss per word.
#   tagger  bilstm-tagger-bulk (DyNet autobatching): a word BiLSTM tagger
#           (E 128, H 50, MLP 32), bench/bilstm_tagger/bilstm_tagger.fold;
#           evaluated by tagging accuracy. The suite's PyTorch tagger takes
#           one sentence a step: it runs at minibatch 1 only.
# The snapshot lacks data/{text,tags}/train.txt: every engine trains on the
# dev.txt files (bench/*/data/dev.txt) and evaluates on text/test.txt (its
# unknown words as "<unk>") and on tags/dev.txt (there is no test file).
# The peers' patches (bench/peers/*.patch) add only a stop after N sentences
# with exact counts, and PyTorch's what torch 1.13 needs.
#
# Usage: bash bench/dynet_suite.sh [--tasks "rnnlm tagger"] [--rounds N]
#          [--batches "1 16 64"] [--small-batch-sentences N] [--cpu C] [--no-torch]
# Training sentences per run: one epoch's worth at minibatch 16 and 64 (rnnlm
# 3,370: all; tagger 1,664: the whole batches of 64); --small-batch-sentences
# at minibatch 1 (default 600).
# Needs DyNet built by ../shared/peers/dynet/build.sh in build/dynet-peer and
# PyTorch (Debian's python3-torch; scripts/install-deps.sh --bench).
set -euo pipefail
cd "$(dirname "$0")/.."

tasks="rnnlm tagger" rounds=3 batches="1 16 64" small=600 cpu=1 torch=1
while [ $# -gt 0 ]; do
  case $1 in
    --tasks) tasks=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --small-batch-sentences) small=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --no-torch) torch=0; shift ;;
    *) echo "dynet_suite.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

peer=build/dynet-peer
work=$PWD/build/dynet-suite
logs=$work/logs/$(date +%Y%m%d-%H%M%S)
[ -f "$peer/build/dynet/dynet/libdynet.so" ] || {
  echo "dynet_suite.sh: DyNet is not built in $peer (../shared/peers/dynet/build.sh)" >&2; exit 1; }
[ -x build/tools/foldc ] || { echo "dynet_suite.sh: build first (bash scripts/build.sh)" >&2; exit 1; }
mkdir -p "$logs"

# The upstream programs, patched, in $work/src; DyNet's compiled with the
# flags of ../shared/peers/dynet/build.sh's benchmark programs.
rm -rf "$work/src" && mkdir -p "$work/src/dynet-cpp" "$work/src/pytorch"
upstream=$peer/src/dynet-benchmark
cp "$upstream/dynet-cpp/rnnlm-batch.cc" "$upstream/dynet-cpp/bilstm-tagger-bulk.cc" "$work/src/dynet-cpp/"
cp "$upstream/pytorch/rnnlm.py" "$upstream/pytorch/bilstm-tagger.py" "$work/src/pytorch/"
for p in rnnlm-batch rnnlm-torch bilstm-tagger-bulk bilstm-tagger-torch; do
  patch -s -d "$work/src" -p1 < "bench/peers/$p.patch"
done
for program in rnnlm-batch bilstm-tagger-bulk; do
  echo "[suite] compiling DyNet's $program" >&2
  g++ -std=c++11 -Ofast -fno-finite-math-only -march=native -DEIGEN_FAST_MATH -DNDEBUG \
    -I"$peer/src/dynet" -I/usr/include/eigen3 "$work/src/dynet-cpp/$program.cc" -o "$work/$program" \
    -L"$peer/build/dynet/dynet" -Wl,-rpath,"$PWD/$peer/build/dynet/dynet" -ldynet
done

# Each task's data (foldc's JSON Lines; the peers' text files under run/).
mkdir -p "$work/rnnlm/run/data/text" "$work/tagger/run/data/tags"
python3 bench/rnnlm/make_data.py bench/rnnlm/data/dev.txt bench/rnnlm/data/test.txt \
  "$work/rnnlm/data" 6022
ln -sf "$PWD/bench/rnnlm/data/dev.txt" "$work/rnnlm/run/data/text/train.txt"
ln -sf "$work/rnnlm/data/eval.txt" "$work/rnnlm/run/data/text/dev.txt"
python3 bench/bilstm_tagger/make_data.py bench/bilstm_tagger/data/dev.txt "$work/tagger/data" 8505 5
cp "$work/tagger/data/train.jsonl" "$work/tagger/data/eval.jsonl"
ln -sf "$PWD/bench/bilstm_tagger/data/dev.txt" "$work/tagger/run/data/tags/train.txt"
ln -sf "$PWD/bench/bilstm_tagger/data/dev.txt" "$work/tagger/run/data/tags/dev.txt"
declare -A model=([rnnlm]=bench/rnnlm/rnnlm.fold [tagger]=bench/bilstm_tagger/bilstm_tagger.fold)
declare -A epoch=([rnnlm]=3370 [tagger]=1664)
for task in $tasks; do
  echo "[suite] compiling foldc's ${model[$task]}" >&2
  build/tools/foldc run "${model[$task]}" train --data "$work/$task/data/train.jsonl" --limit 1 \
    --epochs 1 > /dev/null 2>&1 # the driver, into the compile cache
done

sentences() { [ "$2" = 1 ] && echo "$small" || echo "${epoch[$1]}"; }
foldc() {
  local task=$1 mb=$2 r=$3
  taskset -c "$cpu" build/tools/foldc run "${model[$task]}" train --data "$work/$task/data/train.jsonl" \
    --limit "$(sentences "$task" "$mb")" --batch-size "$mb" --epochs 1 --loss-reduction sum \
    --optimizer adam --lr 0.001 --dev "$work/$task/data/eval.jsonl" --threads 1 --seed "$r" \
    2> /dev/null | tail -1
}
dynet() {
  local task=$1 mb=$2 r=$3 n
  n=$(sentences "$task" "$mb")
  cd "$work/$task/run"
  if [ "$task" = rnnlm ]; then
    RNNLM_MAX_SENTS=$n taskset -c "$cpu" "$work/rnnlm-batch" --dynet-mem 2048 --dynet-seed "$r" \
      "$mb" 128 256 0 100000
  else
    TAGGER_MAX_SENTS=$n taskset -c "$cpu" "$work/bilstm-tagger-bulk" --dynet-mem 1024 \
      --dynet-seed "$r" --dynet-autobatch 1 128 50 32 0 "$mb" 2 100000
  fi | grep '^RESULT'
  cd - > /dev/null
}
torch() {
  local task=$1 mb=$2 n
  n=$(sentences "$task" "$mb")
  cd "$work/$task/run"
  if [ "$task" = rnnlm ]; then
    RNNLM_MAX_SENTS=$n OMP_NUM_THREADS=1 taskset -c "$cpu" /usr/bin/python3 \
      "$work/src/pytorch/rnnlm.py" "$mb" 128 256 0 100000 --CUDA 0
  else
    TAGGER_MAX_SENTS=$n OMP_NUM_THREADS=1 taskset -c "$cpu" /usr/bin/python3 \
      "$work/src/pytorch/bilstm-tagger.py" 128 50 32 0 100000 --CUDA 0
  fi 2> /dev/null | grep '^RESULT'
  cd - > /dev/null
}

for r in $(seq "$rounds"); do
  for task in $tasks; do
    for mb in $batches; do
      echo "[suite] round $r/$rounds, $task, minibatch $mb, $(date +%T)," \
        "load $(cut -d' ' -f1 /proc/loadavg)" >&2
      echo "$task foldc $mb $(foldc "$task" "$mb" "$r")" >> "$logs/runs.txt"
      echo "$task dynet $mb $(dynet "$task" "$mb" "$r")" >> "$logs/runs.txt"
      if [ "$torch" = 1 ] && { [ "$task" = rnnlm ] || [ "$mb" = 1 ]; }; then
        echo "$task torch $mb $(torch "$task" "$mb")" >> "$logs/runs.txt"
      fi
    done
  done
done
echo "[suite] logs in $logs" >&2
python3 bench/dynet_suite.py "$logs/runs.txt" "$work"
