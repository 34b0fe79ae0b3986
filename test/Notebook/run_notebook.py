#!/usr/bin/env python3
"""Runs a notebook with a real Jupyter kernel (nbclient, ipykernel) and
checks what its cells show; prints one line per check, exits 1 on the first
failure. The executed notebook is written to OUT for a look.

  run_notebook.py NOTEBOOK OUT

examples/notebooks/sst_and_decoding.ipynb: it compiles (foldc.load), trains
with fit (four epochs, their losses printed), draws the learning curve (a
PNG) and the batch plan (an SVG), classifies sentences, and trains and
decodes the seq2seq example (greedy and beam exact match printed).
"""
import re
import sys

import nbformat
from nbclient import NotebookClient


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok:", what, flush=True)


def text_of(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o["output_type"] == "stream")


def shows(cell, mime):
    return any(mime in o.get("data", {}) for o in cell.get("outputs", []))


path, out = sys.argv[1], sys.argv[2]
notebook = nbformat.read(path, as_version=4)
NotebookClient(notebook, timeout=900, kernel_name="python3",
               resources={"metadata": {"path": str(__import__("os").path.dirname(path))}}).execute()
nbformat.write(notebook, out)
code = [c for c in notebook.cells if c.cell_type == "code"]
check(all(o["output_type"] != "error" for c in code for o in c.get("outputs", [])),
      "every cell ran without an error")
everything = "\n".join(text_of(c) for c in code)
check(re.search(r"foldc\.load: (compiled|from the cache) in", everything), "the model compiled")
epochs = re.findall(r"epoch (\d): train loss [\d.]+, dev loss [\d.]+, dev root accuracy", everything)
check(epochs == ["1", "2", "3", "4"], f"fit trained four epochs with dev results ({epochs})")
check(any(shows(c, "image/png") for c in code), "the learning curve is drawn inline")
check(any(shows(c, "image/svg+xml") for c in code), "the batch plan is drawn inline")
check(len(re.findall(r"^predicted ", everything, re.M)) == 4, "four sentences classified")
check(re.search(r"held out: greedy exact \d+%, beam exact \d+%", everything),
      "the decoder trained and decoded greedily and by beam search")
check(len(re.findall(r"^source \[.*\]  greedy \[.*\]  beam \[.*\]$", everything, re.M)) == 3,
      "three sequences decoded both ways")
