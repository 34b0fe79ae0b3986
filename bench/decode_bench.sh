#!/usr/bin/env bash
# Decoding throughput of the seq2seq example (examples/seq2seq: GRU encoder
# and decoder, H = 256): greedy decoding (a `loop` until END) and beam
# search (width 4) at batch 1, 16, 64 and 256, batched against
# --no-batching, on one core; beside them the same greedy decode hand-batched
# in PyTorch (bench/decode_torch.py, when python3-torch is installed:
# scripts/install-deps.sh --bench). The model is trained briefly first so
# that decodings stop where a trained model's do.
# usage: bench/decode_bench.sh [SEQUENCES (default 2048)]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2048}
out=build/decode-bench
mkdir -p "$out"
echo "== building (log: $out/build.log)" >&2
bash scripts/build.sh seq2seq_driver > "$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; exit 1; }
driver=build/examples/seq2seq_driver
python3 examples/seq2seq/make_data.py 10000 1 > "$out/train.jsonl"
python3 examples/seq2seq/make_data.py "$count" 3 --greedy > "$out/greedy.jsonl"
python3 examples/seq2seq/make_data.py "$count" 3 --beam > "$out/beam.jsonl"
echo "== training 3 epochs" >&2
"$driver" train --data "$out/train.jsonl" --epochs 3 --optimizer adam --lr 0.005 --batch-size 32 \
  --seed 1 --save "$out/model.safetensors" > /dev/null 2>&1
rate() { # DATA BATCH [--no-batching]: sequences/s of `infer`
  "$driver" infer --data "$1" --params "$out/model.safetensors" --batch-size "$2" --threads 1 "${@:3}" \
    2>&1 > "$out/decoded.jsonl" | sed -n 's/.*(\([0-9]*\) examples\/s).*/\1/p'
}
torch_rates=""
if /usr/bin/python3 -c "import torch" 2> /dev/null; then # Debian's python3-torch
  rate "$out/greedy.jsonl" 64 > /dev/null # leaves the decodings to compare with
  echo "== PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), one thread" >&2
  torch_rates=$(/usr/bin/python3 bench/decode_torch.py "$out/model.safetensors" "$out/greedy.jsonl" 1 16 64 256 \
    --expect "$out/decoded.jsonl")
fi
echo "seq2seq decoding, $count sequences of 3-10 tokens, sequences/s on one core"
for task in greedy beam; do
  echo
  [ "$task" = greedy ] && echo " batch   batched  unbatched  ratio   PyTorch  foldc/PyTorch" ||
    echo " batch   batched  unbatched  ratio   (beam search, width 4)"
  for batch in 1 16 64 256; do
    echo "  $task: batch $batch" >&2
    b=$(rate "$out/$task.jsonl" "$batch")
    u=$(rate "$out/$task.jsonl" "$batch" --no-batching)
    line=$(printf "%6d  %8d  %9d  %5.1fx" "$batch" "$b" "$u" "$(awk -v a="$b" -v b="$u" 'BEGIN { print a / b }')")
    t=$(echo "$torch_rates" | awk -v n="$batch" '$1 == n { print $2 }')
    if [ "$task" = greedy ] && [ -n "$t" ]; then
      line+=$(printf "  %8d  %12.2fx" "$t" "$(awk -v a="$b" -v b="$t" 'BEGIN { print a / b }')")
    fi
    echo "$line"
  done
done

# Where the time goes at batch 64 (greedy): the driver's --profile gives the
# GEMMs' seconds and rate. Both paths make the same products, so batching
# can at most reach unbatched seconds / batched GEMM seconds, were every
# other cost of the batched run gone.
profile() { # BATCH [--no-batching]: "seconds gemm_seconds gflop"
  "$driver" infer --data "$out/greedy.jsonl" --params "$out/model.safetensors" --batch-size "$1" \
    --threads 1 --profile "${@:2}" 2>&1 > /dev/null |
    awk '/^infer:/ { s = $5 } /^profile:/ { g = $3; f = $5 } END { print s, g, f }'
}
read -r bs bg flop <<< "$(profile 64)"
read -r us ug _ <<< "$(profile 64 --no-batching)"
echo
echo "greedy, batch 64: time in GEMMs, and what bounds the ratio"
awk -v bs="$bs" -v bg="$bg" -v us="$us" -v ug="$ug" -v f="$flop" 'BEGIN {
  printf "  batched    %.3f s, GEMMs %.3f s (%.0f%%) at %.1f GFLOP/s\n", bs, bg, 100 * bg / bs, f / bg
  printf "  unbatched  %.3f s, GEMMs %.3f s (%.0f%%) at %.1f GFLOP/s\n", us, ug, 100 * ug / us, f / ug
  printf "  ratio %.2fx; at most %.2fx with every non-GEMM cost of the batched run gone\n", us / bs, us / bg
}'
