#!/usr/bin/env python3
"""Turns the benchmark's tagged text into foldc's JSON Lines for bilstm_tagger.fold.

A line is "word|tag word|tag ..." (split on spaces and "|", as DyNet's
bilstm-tagger-bulk reads it). Ids are assigned as that program assigns them:
words in order of first use in the training file, then "<unk>"; tags in
order of first use. A word seen 5 times or fewer in training, or not at all,
is "<unk>" (the program's word_rep).

usage: make_data.py TRAIN.txt OUT_DIR V T
writes OUT_DIR/train.jsonl; fails unless there are exactly V word ids
(the training words and "<unk>") and T tags (the model's constants).
"""
import collections
import json
import os
import re
import sys


def sentences(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            tokens = re.split("[ |]", line.rstrip("\n"))
            yield tokens[0::2], tokens[1::2]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    train, out_dir, vocabulary, tag_count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rows = list(sentences(train))
    words, tags, counts = {}, {}, collections.Counter()
    for ws, ts in rows:
        for w in ws:
            words.setdefault(w, len(words))
            counts[w] += 1
        for t in ts:
            tags.setdefault(t, len(tags))
    words.setdefault("<unk>", len(words))
    if (len(words), len(tags)) != (vocabulary, tag_count):
        sys.exit(f"make_data.py: {train} has {len(words)} word ids and {len(tags)} tags, "
                 f"the model says V = {vocabulary}, T = {tag_count}")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "train.jsonl"), "w", encoding="utf-8") as out:
        for ws, ts in rows:
            ids = [words[w] if counts[w] > 5 else words["<unk>"] for w in ws]
            out.write(json.dumps({"words": ids, "tags": [tags[t] for t in ts]}) + "\n")


if __name__ == "__main__":
    main()
