#!/usr/bin/env python3
"""The table of bench/dynet_suite.sh: per task and minibatch, the median over
rounds of each engine's training and evaluation words per second, foldc's
ratio to each peer, and what each engine learned after the same sentences
(rnnlm: the test loss per word; tagger: the tagging accuracy).

usage: dynet_suite.py RUNS.txt WORK
RUNS.txt lines: "TASK foldc MB {the driver's epoch JSON}" or
"TASK dynet|torch MB RESULT key=value ..." (the patched peers' line); WORK
holds each task's data (WORK/TASK/data/{train,eval}.jsonl).
A word is a predicted token. For the language model, foldc and DyNet predict
every word and the final "<s>" from the state before it; PyTorch's program
predicts all but the first word (it has no start symbol), and counts so.
"""
import collections
import functools
import json
import statistics
import sys

LABELS = {"rnnlm": "rnnlm-batch (LSTM LM, E 128, H 256, V 6022)",
          "tagger": "bilstm-tagger (word BiLSTM, E 128, H 50, MLP 32)"}
QUALITY = {"rnnlm": "test nll", "tagger": "accuracy"}


@functools.lru_cache(maxsize=None)
def lengths(path, field):
    """Each example's number of words (its `field` list), read once a file."""
    return [len(json.loads(line)[field]) for line in open(path)]


def words(path, field, limit=None):
    counts = lengths(path, field)
    return sum(counts[:limit] if limit else counts)


def foldc_figures(task, run, work):
    field = "targets" if task == "rnnlm" else "tags"
    trained = words(f"{work}/{task}/data/train.jsonl", field, run["train"]["examples"])
    tested = words(f"{work}/{task}/data/eval.jsonl", field)
    dev = run["dev"]
    quality = dev["loss"] * dev["examples"] / tested if task == "rnnlm" else dev["accuracy"]
    return {"train": trained / run["train_seconds"], "test": tested / run["dev_seconds"],
            "quality": quality, "sentences": run["train"]["examples"]}


def peer_figures(task, fields):
    return {"train": float(fields["train_words"]) / float(fields["train_seconds"]),
            "test": float(fields["test_words"]) / float(fields["test_seconds"]),
            "quality": float(fields["test_nll" if task == "rnnlm" else "test_accuracy"]),
            "sentences": int(fields["train_sents"])}


def main():
    runs, work = sys.argv[1], sys.argv[2]
    table = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in open(runs):
        parts = line.split(" ", 3)
        if len(parts) < 4 or not parts[3].strip():
            continue  # a run that failed: its engine has no figure this round
        task, engine, mb, rest = parts
        if engine == "foldc":
            figures = foldc_figures(task, json.loads(rest), work)
        else:
            figures = peer_figures(task, dict(kv.split("=") for kv in rest.split()[1:]))
        table[(task, int(mb))][engine].append(figures)

    def median(rows, key):
        return statistics.median(r[key] for r in rows)

    for task in ("rnnlm", "tagger"):
        cells = sorted(mb for t, mb in table if t == task)
        if not cells:
            continue
        print(f"{LABELS[task]}, one thread; medians of the rounds")
        print(f"{'MB':>3} {'engine':6} {'sents':>5} {'train w/s':>9} {'eval w/s':>9} "
              f"{QUALITY[task]:>8} {'train x':>8} {'eval x':>7}")
        for mb in cells:
            engines = table[(task, mb)]
            if "foldc" not in engines:
                continue
            base_train, base_test = median(engines["foldc"], "train"), median(engines["foldc"], "test")
            for engine in ("foldc", "dynet", "torch"):
                rows = engines.get(engine)
                if not rows:
                    continue
                train, test = median(rows, "train"), median(rows, "test")
                ratio = "" if engine == "foldc" else f" {base_train / train:7.2f}x {base_test / test:6.2f}x"
                print(f"{mb:>3} {engine:6} {rows[0]['sentences']:>5} {train:9.0f} {test:9.0f}"
                      f" {median(rows, 'quality'):8.4f}{ratio}")
        print()
    print("train x, eval x: foldc's words per second over the engine's")


if __name__ == "__main__":
    main()
