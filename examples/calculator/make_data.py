#!/usr/bin/env python3
"""Random arithmetic expressions for the calculator example, as JSON Lines.

usage: make_data.py COUNT SEED [MAX_DEPTH] > data.jsonl
Numbers are drawn from [-1, 1]; op 0 is +, 1 is -, 2 is *.
"""
import json
import random
import sys


def expression(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        value = round(rng.uniform(-1, 1), 3)
        return {"Num": {"value": value}}, value
    op = rng.randrange(3)
    left, a = expression(rng, depth - 1)
    right, b = expression(rng, depth - 1)
    result = a + b if op == 0 else a - b if op == 1 else a * b
    return {"Op": {"op": op, "left": left, "right": right}}, result


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rng = random.Random(seed)
    for _ in range(count):
        expr, result = expression(rng, depth)
        print(json.dumps({"expr": expr, "result": round(result, 6)}))


if __name__ == "__main__":
    main()
