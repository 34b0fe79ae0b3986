#!/usr/bin/env python3
"""Small random JSON Lines inputs for the example programs without a data set.

usage: random_data.py PROGRAM COUNT SEED > data.jsonl
PROGRAM: attention, language_id, ngrams or weave (sizes from their .fold files).
Labels follow a simple rule of the input, so that a model can learn them.
"""
import json
import random
import sys


def attention(rng):
    words = [rng.randrange(10000) for _ in range(rng.randint(1, 12))]
    return {"words": words, "label": int(sum(w % 2 for w in words) * 2 > len(words))}


def language_id(rng):
    lang = rng.randrange(5)
    alphabet = range(97 + 5 * lang, 97 + 5 * lang + 8)
    return {"chars": [rng.choice(alphabet) for _ in range(rng.randint(0, 15))], "lang": lang}


def ngrams(rng):
    words = [rng.randrange(5000) for _ in range(rng.randint(0, 10))]
    return {"words": words, "label": int(len(words) % 2 == 0)}


def weave(rng):
    n = rng.randint(1, 4)
    atoms = [[round(rng.uniform(-1, 1), 3) for _ in range(32)] for _ in range(n)]
    pairs = [[[round(rng.uniform(-1, 1), 3) for _ in range(16)] for _ in range(n)] for _ in range(n)]
    return {"atoms": atoms, "pairs": pairs, "label": round(sum(a[0] for a in atoms), 3)}


def main():
    make = {"attention": attention, "language_id": language_id, "ngrams": ngrams,
            "weave": weave}[sys.argv[1]]
    rng = random.Random(int(sys.argv[3]))
    for _ in range(int(sys.argv[2])):
        print(json.dumps(make(rng)))


if __name__ == "__main__":
    main()
