"""Writes one balanced binary tree of 2**LEVELS leaves, random words below
VOCAB and random labels, as one JSON Lines example of the sentiment model's
Tree type, for bench/wide_tree.sh.

usage: wide_tree.py LEVELS VOCAB OUT.jsonl"""
import json
import random
import sys


def balanced(levels, vocab, rng):
    """The tree as nested dicts, built bottom-up one level at a time."""
    level = [{"Leaf": {"word": rng.randrange(vocab), "label": rng.randrange(5)}}
             for _ in range(2 ** levels)]
    while len(level) > 1:
        level = [{"Node": {"left": level[i], "right": level[i + 1], "label": rng.randrange(5)}}
                 for i in range(0, len(level), 2)]
    return level[0]


def main():
    levels, vocab, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    tree = balanced(levels, vocab, random.Random(1))
    sys.setrecursionlimit(10000)  # json nests one call per level: LEVELS deep
    with open(path, "w") as out:
        out.write(json.dumps(tree, separators=(",", ":")) + "\n")


main()
