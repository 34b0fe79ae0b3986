#!/usr/bin/env python3
"""The seq2seq example's greedy decoding as a hand-batched PyTorch loop: the
peer of bench/decode_bench.sh. Same model (GRU encoder, GRU decoder, the
GRU formulas of docs/language.md), same trained weights (read from the
driver's safetensors file), same data; finished sequences leave the batch.

usage: decode_torch.py PARAMS.safetensors DATA.jsonl BATCH [BATCH...]
Prints one line per batch size: `BATCH SEQUENCES_PER_SECOND`, and checks
its decodings against foldc's (DECODED.jsonl from `infer`, when given as
--expect FILE).
"""
import json
import struct
import sys
import time

import numpy as np
import torch

END, START = 0, 1


def load_safetensors(path):
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[lo:hi], dtype=np.float32).reshape(info["shape"]).copy())
    return out


def gru(p, layer, x, s):
    W, U, b = p[layer + ".W"], p[layer + ".U"], p[layer + ".b"]
    h = s.shape[1]
    xw = x @ W + b
    su = s @ U[:, : 2 * h]
    z = torch.sigmoid(xw[:, :h] + su[:, :h])
    r = torch.sigmoid(xw[:, h : 2 * h] + su[:, h:])
    n = torch.tanh(xw[:, 2 * h :] + (r * s) @ U[:, 2 * h :])
    return (1 - z) * n + z * s


def decode(p, batch):
    hidden = p["encoder.U"].shape[0]
    lengths = torch.tensor([len(e["src"]) for e in batch])
    longest = int(lengths.max())
    src = torch.zeros(len(batch), longest, dtype=torch.long)
    for i, e in enumerate(batch):
        src[i, : len(e["src"])] = torch.tensor(e["src"])
    h = torch.zeros(len(batch), hidden)
    for t in range(longest):  # padded steps keep the state
        nxt = gru(p, "encoder", p["source.E"][src[:, t]], h)
        h = torch.where((t < lengths).unsqueeze(1), nxt, h)
    bound = lengths + 3
    active = torch.arange(len(batch))
    prev = torch.full((len(batch),), START, dtype=torch.long)
    out = [[] for _ in batch]
    step = 0
    while len(active) > 0:
        h = gru(p, "decoder", p["target.E"][prev], h)
        logp = torch.log_softmax(h @ p["readout.W"] + p["readout.b"], dim=1)
        token = logp.argmax(dim=1)
        step += 1
        go = token != END
        for i, k in zip(active[go].tolist(), token[go].tolist()):
            out[i].append(k)
        go &= step < bound[active]
        active, h, prev = active[go], h[go], token[go]
    return out


def main():
    args = sys.argv[1:]
    expect = None
    if "--expect" in args:
        at = args.index("--expect")
        expect = [json.loads(line)["output"][0] for line in open(args[at + 1])]
        del args[at : at + 2]
    torch.set_num_threads(1)
    p = load_safetensors(args[0])
    data = [json.loads(line) for line in open(args[1])]
    with torch.no_grad():
        for size in map(int, args[2:]):
            decoded, start = [], time.perf_counter()
            for at in range(0, len(data), size):
                decoded += decode(p, data[at : at + size])
            seconds = time.perf_counter() - start
            if expect is not None and decoded != expect:
                same = sum(a == b for a, b in zip(decoded, expect))
                print(f"note: {same}/{len(expect)} decodings equal foldc's", file=sys.stderr)
            print(size, f"{len(data) / seconds:.0f}", flush=True)


if __name__ == "__main__":
    main()
