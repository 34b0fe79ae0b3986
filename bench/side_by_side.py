#!/usr/bin/env python3
"""Summarizes a bench/side_by_side.sh run: the median over the rounds of each
cell for foldc, DyNet (autobatching; training takes the better of its sparse
and dense updates) and PyTorch (hand-written level batching; the better of
dense Adam and SparseAdam on the embedding), and the ratios of the medians.

Usage: python3 bench/side_by_side.py LOGDIR
"""
import collections
import glob
import os
import re
import statistics
import sys


def foldc_cells(logdir):
    """(mode, minibatch) -> [trees/s] and [%peak] from treenn_bench's batched rows."""
    rate, peak = collections.defaultdict(list), collections.defaultdict(list)
    for path in glob.glob(os.path.join(logdir, "foldc-*.txt")):
        mode = None
        for line in open(path):
            if line.startswith(("training", "inference")):
                mode = line[:5]
                continue
            fields = [f for f in line.split() if not f.endswith("x")]  # older logs had "1.65x"
            if mode and len(fields) > 5 and fields[:1] == ["1"] and fields[2] == "yes":
                rate[mode, int(fields[1])].append(float(fields[3]))
                peak[mode, int(fields[1])].append(float(fields[5].rstrip("%")))
    return rate, peak


def key_values(line):
    return dict(field.split("=", 1) for field in line.split()[1:] if "=" in field)


def peer_cells(logdir, name, start, keep):
    """(mode, minibatch, sparse) -> [trees/s] from a peer's result lines: the
    lines of LOGDIR/NAME-r*.txt that begin with `start` and whose key=value
    fields `keep` accepts, giving (the minibatch's key, the rate's key)."""
    cells = collections.defaultdict(list)
    for path in glob.glob(os.path.join(logdir, name + "-r*.txt")):
        for line in open(path):
            if line.startswith(start):
                kv = key_values(line)
                keys = keep(kv)
                if keys:
                    cells[kv["mode"][:5], int(kv[keys[0]]), kv["sparse"]].append(float(kv[keys[1]]))
    return cells


def dynet_cells(logdir):
    """DyNet with autobatching on: its steady trees/s."""
    return peer_cells(logdir, "dynet", "RESULT",
                      lambda kv: ("mb", "steady_trees_per_sec") if kv["autobatch"] == "1" else None)


def torch_cells(logdir):
    """The PyTorch peer: trees/s of its one pass."""
    return peer_cells(logdir, "torch", "torch", lambda kv: ("batch", "trees_per_sec"))


def median(values):
    return statistics.median(values) if values else None


def best_of(cells, mode, mb, variants):
    """The better median of a peer's variants (sparse or dense updates)."""
    medians = [median(cells.get((mode, mb, v), [])) for v in variants]
    medians = [m for m in medians if m is not None]
    return max(medians) if medians else None


def cell(value, fmt="{:.0f}"):
    return fmt.format(value) if value is not None else "-"


def ratio(a, b):
    return cell(a / b, "**{:.2f}**") if a is not None and b else "-"


def main():
    logdir = sys.argv[1]
    rate, peak = foldc_cells(logdir)
    dynet, torch = dynet_cells(logdir), torch_cells(logdir)
    batches = sorted({mb for _, mb in rate})
    rounds = max((len(v) for v in rate.values()), default=0)
    print(f"trees/s, medians of {rounds} interleaved rounds ({logdir})\n")
    print("| trees/s | " + " | ".join(f"MB {mb}" for mb in batches) + " |")
    print("| --- |" + " --- |" * len(batches))
    for mode, name, variants in (("train", "training", ("1", "0")),
                                 ("infer", "inference", ("-",))):
        torch_variants = ("True", "False")
        f = [median(rate.get((mode, mb), [])) for mb in batches]
        d = [best_of(dynet, mode, mb, variants) for mb in batches]
        t = [best_of(torch, mode, mb, torch_variants) for mb in batches]
        rows = [(f"{name}, foldc", [cell(x) for x in f]),
                (f"{name}, foldc % of GEMM peak",
                 [cell(median(peak.get((mode, mb), [])), "{:.0f}%") for mb in batches]),
                (f"{name}, DyNet", [cell(x) for x in d]),
                (f"{name}, PyTorch", [cell(x) for x in t]),
                (f"**{name}, foldc / DyNet**", [ratio(a, b) for a, b in zip(f, d)]),
                (f"**{name}, foldc / PyTorch**", [ratio(a, b) for a, b in zip(f, t)])]
        for label, values in rows:
            print(f"| {label} | " + " | ".join(values) + " |")
    load = os.path.join(logdir, "load.txt")
    if os.path.exists(load):
        loads = [float(m[1]) for m in re.finditer(r"load ([\d.]+)", open(load).read())]
        if loads:
            print(f"\nload average at the cells' starts: {min(loads):.2f}-{max(loads):.2f}")


if __name__ == "__main__":
    main()
