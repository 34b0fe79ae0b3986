#!/usr/bin/env python3
"""Token sequences and their reversals for the seq2seq example, as JSON Lines.

usage: make_data.py COUNT SEED [--greedy] [--beam] > data.jsonl
Tokens 2..19 are symbols (0 is END, 1 is START); sequences have 3 to 10 of
them. --greedy and --beam ask the model to decode each line greedily and by
beam search too (the held-out split); training lines skip both.
"""
import json
import random
import sys


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    greedy, beam = "--greedy" in sys.argv[3:], "--beam" in sys.argv[3:]
    rng = random.Random(seed)
    for _ in range(count):
        src = [rng.randrange(2, 20) for _ in range(rng.randint(3, 10))]
        print(json.dumps({"src": src, "tgt": src[::-1], "greedy": greedy, "beam": beam}))


if __name__ == "__main__":
    main()
