#!/usr/bin/python3
"""Plots learning curves from the CSV files a generated driver writes with
`train --curve FILE` (columns: epoch, train_loss, train_METRIC..., dev_loss,
dev_METRIC..., seconds).

  plot_curve.py OUT.png CURVE.csv [CURVE.csv ...]

Left: train and dev loss per epoch; right: every metric, dev solid and train
dashed. Several CSVs (e.g. one per seed) get a colour each. Uses Debian's
python3-matplotlib (hence /usr/bin/python3).
"""
import csv
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_curve.py: needs matplotlib (Debian: apt-get install python3-matplotlib, "
             "then run it with /usr/bin/python3)")


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_curve.py: {path}: no epochs")
    return {key: [float(r[key]) for r in rows] for key in rows[0]}


def main(out, paths):
    fig, (losses, metrics) = plt.subplots(1, 2, figsize=(13, 4.6))
    for index, path in enumerate(paths):
        curve = read(path)
        colour = f"C{index}"
        name = os.path.basename(os.path.dirname(os.path.abspath(path))) if len(paths) > 1 else ""
        epochs = curve["epoch"]
        for split, style in (("train", "--"), ("dev", "-")):
            if f"{split}_loss" in curve:
                losses.plot(epochs, curve[f"{split}_loss"], style, color=colour,
                            label=f"{name} {split}".strip())
            names = [k for k in curve if k.startswith(split + "_") and k != f"{split}_loss"]
            for number, key in enumerate(names):
                metric = key[len(split) + 1:]
                # One CSV: a colour per metric; several: a colour per CSV, a marker per metric.
                metrics.plot(epochs, curve[key], style, label=f"{name} {split} {metric}".strip(),
                             color=colour if len(paths) > 1 else f"C{number}",
                             marker="osD^v"[number % 5], markersize=3)
    losses.set(xlabel="epoch", ylabel="loss per example", title="loss")
    metrics.set(xlabel="epoch", ylabel="mean", title="metrics (dev solid, train dashed)")
    for axes in (losses, metrics):
        axes.grid(alpha=0.3)
    losses.legend(fontsize=7)
    # Beside the plot, not over the curves: there is one entry per metric and split.
    metrics.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot_curve.py: wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
