#!/usr/bin/env bash
# The seq2seq example end to end: builds foldc and the model's driver,
# generates token sequences (the target is the source reversed), trains with
# teacher forcing, then decodes the held-out split greedily and by beam
# search (width 4) and prints exact-match accuracy for both and decoding
# throughput, batched and --no-batching. EPOCHS (default 6) and TRAIN
# (default 10000 sequences) shorten or lengthen the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
EPOCHS=${EPOCHS:-6}
TRAIN=${TRAIN:-10000}
source examples/common.sh
build_example seq2seq
python3 examples/seq2seq/make_data.py "$TRAIN" 1 > "$out/train.jsonl"
python3 examples/seq2seq/make_data.py 1000 2 --greedy --beam > "$out/test.jsonl"
echo "== training: $TRAIN sequences, $EPOCHS epochs, teacher forcing" >&2
"$driver" train --data "$out/train.jsonl" --epochs "$EPOCHS" --optimizer adam --lr 0.005 \
  --batch-size 32 --seed 1 --save "$out/model.safetensors" > "$out/train-log.jsonl"
echo "== decoding the held-out split (1000 sequences)" >&2
"$driver" eval --data "$out/test.jsonl" --params "$out/model.safetensors" 2> /dev/null > "$out/test.json"
for mode in batched unbatched; do
  flag=$([ "$mode" = unbatched ] && echo --no-batching || true)
  "$driver" infer --data "$out/test.jsonl" --params "$out/model.safetensors" --batch-size 64 $flag \
    > "$out/decoded-$mode.jsonl" 2> "$out/infer-$mode.log"
done
cmp -s "$out/decoded-batched.jsonl" "$out/decoded-unbatched.jsonl" ||
  { echo "batched and unbatched decodings differ" >&2; exit 1; }
python3 - "$out" <<'PY'
import json, re, sys
out = sys.argv[1]
test = json.load(open(f"{out}/test.json"))
rate = {m: float(re.search(r"\((\d+) examples/s\)", open(f"{out}/infer-{m}.log").read()).group(1))
        for m in ("batched", "unbatched")}
first = json.loads(open(f"{out}/decoded-batched.jsonl").readline())
src = json.loads(open(f"{out}/test.jsonl").readline())["src"]
print(f"held-out split: {test['examples']} sequences (the source reversed)")
print(f"  exact match, greedy:         {100 * test['greedy_exact']:.1f}%")
print(f"  exact match, beam (K = 4):   {100 * test['beam_exact']:.1f}%")
print(f"  decoding (greedy + beam), batch 64: {rate['batched']:.0f} sequences/s batched, "
      f"{rate['unbatched']:.0f} sequences/s --no-batching ({rate['batched'] / rate['unbatched']:.1f}x)")
print(f"  e.g. source {src} -> greedy {first['output'][0]}, beam {first['output'][1]}")
PY
