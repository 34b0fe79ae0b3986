#!/usr/bin/env python3
"""Turns the benchmark's text files into foldc's JSON Lines for rnnlm.fold.

Word ids are assigned as DyNet's rnnlm-batch assigns them: "<s>" is 0, then
each word of the training file in order of first use; the vocabulary is then
frozen and a word of the evaluation file outside it is "<unk>" (the
benchmark's DyNet program is patched the same way, bench/peers). A line's
words and a final "<s>" are its targets; "<s>" and all but the last of them
its inputs.

usage: make_data.py TRAIN.txt EVAL.txt OUT_DIR V
writes OUT_DIR/train.jsonl and OUT_DIR/eval.jsonl, and OUT_DIR/eval.txt (the
evaluation text with "<unk>" in place of unknown words, for the peers, whose
frozen vocabularies would stop at an unknown word); fails unless the training
vocabulary has exactly V words (the model's constant).
"""
import json
import os
import sys


def sentences(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield line.split() + ["<s>"]


def write(path, rows, ids, frozen, text=None):
    with open(path, "w", encoding="utf-8") as out:
        for words in rows:
            targets = []
            for k, w in enumerate(words):
                if w not in ids:
                    if frozen:
                        words[k] = w = "<unk>"
                    else:
                        ids[w] = len(ids)
                targets.append(ids[w])
            out.write(json.dumps({"inputs": [0] + targets[:-1], "targets": targets}) + "\n")
            if text:
                text.write(" ".join(words[:-1]) + "\n")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    train, held_out, out_dir, vocabulary = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    os.makedirs(out_dir, exist_ok=True)
    ids = {"<s>": 0}
    write(os.path.join(out_dir, "train.jsonl"), sentences(train), ids, frozen=False)
    if len(ids) != vocabulary:
        sys.exit(f"make_data.py: {train} has {len(ids)} words, the model says V = {vocabulary}")
    with open(os.path.join(out_dir, "eval.txt"), "w", encoding="utf-8") as text:
        write(os.path.join(out_dir, "eval.jsonl"), sentences(held_out), ids, frozen=True, text=text)


if __name__ == "__main__":
    main()
