#!/usr/bin/env python3
"""Checks on what generated model drivers print, for test/Execution.

  check.py same A B [RTOL]      every number of JSON lines A equals B's (relative
                                error <= RTOL, default 1e-4; absolute 1e-6 near 0),
                                except wall times ("seconds")
  check.py learned LOG TRAIN DEV FIELD METRIC FACTOR
                                the last epoch's dev METRIC in LOG (train's JSON
                                lines) is below FACTOR x the mean absolute error
                                of predicting TRAIN's mean FIELD on DEV
  check.py falls LOG            the train loss of LOG's last epoch is below its first's
  check.py best LOG EVAL        EVAL's loss equals the lowest dev loss in LOG
  check.py scaled OUT I J F     line I of OUT is F times line J (element-wise)
Prints what it compared; exits 1 when the check fails.
"""
import json
import math
import sys


def close(a, b, rtol, path="$"):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not math.isclose(a, b, rel_tol=rtol, abs_tol=1e-6):
            raise AssertionError(f"{path}: {a} != {b}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, rtol, f"{path}[{i}]")
    elif isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            if k != "seconds":  # wall time differs between any two runs
                close(a[k], b[k], rtol, f"{path}.{k}")
    elif a != b:
        raise AssertionError(f"{path}: {a!r} != {b!r}")


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def same(a, b, rtol="1e-4"):
    xs, ys = lines(a), lines(b)
    if len(xs) != len(ys):
        raise AssertionError(f"{len(xs)} lines != {len(ys)} lines")
    for i, (x, y) in enumerate(zip(xs, ys)):
        close(x, y, float(rtol), f"line {i + 1}")
    print(f"same: {len(xs)} lines")


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


def best(log, evaluation):
    lowest = min(e["dev"]["loss"] for e in lines(log))
    close(lines(evaluation)[0]["loss"], lowest, 1e-5)
    print(f"best: saved parameters give the lowest dev loss {lowest:.6f}")


def scaled(out, i, j, factor):
    xs = lines(out)
    a, b = xs[int(i) - 1], xs[int(j) - 1]
    close(a, [float(factor) * y for y in b], 1e-4)
    print(f"scaled: line {i} = {factor} x line {j}")


if __name__ == "__main__":
    try:
        {"same": same, "learned": learned, "falls": falls, "best": best,
         "scaled": scaled}[sys.argv[1]](*sys.argv[2:])
    except AssertionError as e:
        print(f"check.py {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(1)
