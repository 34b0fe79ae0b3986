#!/usr/bin/env python3
"""Checks on what generated model drivers print, for test/Execution.

  check.py same A B [RTOL]      every number of JSON lines A equals B's (relative
                                error <= RTOL, default 1e-4; absolute 1e-6 near 0),
                                except timings ("seconds", "*_seconds", "*_per_second")
                                and what only data-parallel runs report ("ranks",
                                "communicated_bytes_per_step")
  check.py params A B RTOL      every tensor of safetensors files A and B (the same
                                names and shapes) agrees: max |a - b| <= RTOL x max |b|
  check.py bits A B NAME...     tensors NAME of safetensors files A and B are equal to
                                the bit
  check.py row FILE NAME R V,V...
                                row R of tensor NAME of FILE is exactly V,V...
  check.py learned LOG TRAIN DEV FIELD METRIC FACTOR
                                the last epoch's dev METRIC in LOG (train's JSON
                                lines) is below FACTOR x the mean absolute error
                                of predicting TRAIN's mean FIELD on DEV
  check.py falls LOG            the train loss of LOG's last epoch is below its first's
  check.py best LOG EVAL [CRITERION]
                                EVAL's CRITERION (train's --select: loss, NAME,
                                min:NAME or max:NAME; default loss) equals the
                                best dev value in LOG, and LOG's "saved" flags
                                are set at exactly the epochs that improved it
  check.py scaled OUT I J F     line I of OUT is F times line J (element-wise)
  check.py sst OUT DATA EVAL    EVAL's root_hits and binary_root_hits are what
                                OUT's class probabilities (infer) give on DATA's
                                root labels: argmax, and p3 + p4 > p0 + p1 over
                                the non-neutral roots
Prints what it compared; exits 1 when the check fails.
"""
import array
import json
import math
import struct
import sys


def timing(key):
    """Wall times and rates, which differ between any two runs."""
    return key == "seconds" or key.endswith("_seconds") or key.endswith("_per_second")


def compared(key):
    """Keys both runs must agree on: not timings, not a data-parallel run's own."""
    return not timing(key) and key not in ("ranks", "communicated_bytes_per_step")


def close(a, b, rtol, path="$"):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not math.isclose(a, b, rel_tol=rtol, abs_tol=1e-6):
            raise AssertionError(f"{path}: {a} != {b}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, rtol, f"{path}[{i}]")
    elif isinstance(a, dict) and isinstance(b, dict) and \
            {k for k in a if compared(k)} == {k for k in b if compared(k)}:
        for k in a:
            if compared(k):
                close(a[k], b[k], rtol, f"{path}.{k}")
    elif a != b:
        raise AssertionError(f"{path}: {a!r} != {b!r}")


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def outputs(path):
    """The outputs of infer's lines ({"line": N, "output": VALUE})."""
    return [x["output"] for x in lines(path)]


def same(a, b, rtol="1e-4"):
    xs, ys = lines(a), lines(b)
    if len(xs) != len(ys):
        raise AssertionError(f"{len(xs)} lines != {len(ys)} lines")
    for i, (x, y) in enumerate(zip(xs, ys)):
        close(x, y, float(rtol), f"line {i + 1}")
    print(f"same: {len(xs)} lines")


def tensors(path):
    """A safetensors file's F32 tensors: name -> (shape, values)."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    return {name: (e["shape"], array.array("f", data[e["data_offsets"][0]:e["data_offsets"][1]]))
            for name, e in header.items() if name != "__metadata__"}


def params(a, b, rtol):
    xs, ys = tensors(a), tensors(b)
    if xs.keys() != ys.keys():
        raise AssertionError(f"tensors {sorted(xs)} != {sorted(ys)}")
    worst = 0.0
    for name, (shape, x) in xs.items():
        y_shape, y = ys[name]
        if shape != y_shape:
            raise AssertionError(f"{name}: shape {shape} != {y_shape}")
        scale = max(abs(v) for v in y) or 1.0
        error = max(abs(u - v) for u, v in zip(x, y)) / scale
        if error > float(rtol):
            raise AssertionError(f"{name}: max |a - b| is {error:.3g} of max |b|, above {rtol}")
        worst = max(worst, error)
    print(f"params: {len(xs)} tensors agree (worst {worst:.2g} of max |b|)")


def bits(a, b, *names):
    xs, ys = tensors(a), tensors(b)
    for name in names:
        if xs[name][0] != ys[name][0] or xs[name][1].tobytes() != ys[name][1].tobytes():
            raise AssertionError(f"{name} differs: {list(xs[name][1])} != {list(ys[name][1])}")
    print(f"bits: {len(names)} tensors equal to the bit")


def row(path, name, r, values):
    shape, data = tensors(path)[name]
    width = shape[-1]
    got = list(data[int(r) * width:(int(r) + 1) * width])
    want = list(array.array("f", [float(v) for v in values.split(",")]))
    if got != want:
        raise AssertionError(f"{name} row {r} is {got}, expected {want}")
    print(f"row: {name}[{r}] = {values}")


def learned(log, train, dev, field, metric, factor):
    mean = sum(x[field] for x in lines(train)) / len(lines(train))
    baseline = sum(abs(x[field] - mean) for x in lines(dev)) / len(lines(dev))
    got = lines(log)[-1]["dev"][metric]
    print(f"learned: dev {metric} {got:.4f}, predicting the mean {baseline:.4f}")
    if not got < float(factor) * baseline:
        raise AssertionError(f"{got} is not below {factor} x {baseline}")


def falls(log):
    epochs = lines(log)
    first, last = epochs[0]["train"]["loss"], epochs[-1]["train"]["loss"]
    print(f"falls: train loss {first:.4f} -> {last:.4f}")
    if not last < first:
        raise AssertionError("the train loss did not fall")


def best(log, evaluation, criterion="loss"):
    name = criterion.split(":")[-1]
    lower = criterion == "loss" or criterion.startswith("min:")
    better = (lambda x, y: x < y) if lower else (lambda x, y: x > y)
    record = None
    for e in lines(log):
        value = e["dev"][name]
        improved = record is None or better(value, record)
        if e["saved"] != improved:
            raise AssertionError(f"epoch {e['epoch']}: saved is {e['saved']}, dev {name} {value}")
        if improved:
            record = value
    close(lines(evaluation)[0][name], record, 1e-5)
    print(f"best: saved parameters give the {'lowest' if lower else 'highest'} dev {name} {record:.6f}")


def scaled(out, i, j, factor):
    xs = outputs(out)
    a, b = xs[int(i) - 1], xs[int(j) - 1]
    close(a, [float(factor) * y for y in b], 1e-4)
    print(f"scaled: line {i} = {factor} x line {j}")


def sst(out, data, evaluation):
    probabilities = outputs(out)
    labels = [next(iter(tree.values()))["label"] for tree in lines(data)]
    labels = labels[:len(probabilities)]
    fine = [p.index(max(p)) == y for p, y in zip(probabilities, labels)]
    binary = [(p[3] + p[4] > p[0] + p[1]) == (y > 2)
              for p, y in zip(probabilities, labels) if y != 2]
    got = lines(evaluation)[0]
    close(got["root_hits"], sum(fine) / len(fine), 1e-9)
    close(got["binary_root_hits"], sum(binary) / len(binary), 1e-9)
    print(f"sst: {len(fine)} roots, {len(binary)} not neutral")


if __name__ == "__main__":
    try:
        {"same": same, "learned": learned, "falls": falls, "best": best,
         "scaled": scaled, "sst": sst, "params": params, "bits": bits, "row": row}[sys.argv[1]](*sys.argv[2:])
    except AssertionError as e:
        print(f"check.py {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
